/**
 * The module graph as `deno info --json` gives it, for the tests that check what a path loads
 * (lazy_ui_test.ts, start_graph_test.ts). Several entries may be given: main.ts reaches the
 * command line's module only by a computed `import()`, which the graph cannot see.
 */
interface Dep {
  specifier: string;
  isDynamic?: boolean;
  code?: { specifier: string };
}

export interface ModuleGraph {
  /** Every module's dependencies, by specifier. */
  deps: Map<string, Dep[]>;
  /** Every module reached from `roots` by static imports alone (what loads before any import()). */
  staticClosure(roots: readonly string[]): Set<string>;
}

/** A file of this repository as the graph names it. */
export const src = (rel: string): string => new URL(`../../${rel}`, import.meta.url).href;

export async function moduleGraph(entries: readonly string[]): Promise<ModuleGraph> {
  const deps = new Map<string, Dep[]>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", new URL(entry).pathname],
      stdout: "piped",
      stderr: "null",
    }).output();
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { specifier: string; dependencies?: Dep[] }[];
    };
    for (const m of info.modules) deps.set(m.specifier, m.dependencies ?? []);
  }
  return {
    deps,
    staticClosure(roots) {
      const seen = new Set<string>();
      const todo = [...roots];
      while (todo.length) {
        const s = todo.pop()!;
        if (seen.has(s)) continue;
        seen.add(s);
        for (const d of deps.get(s) ?? []) {
          if (!d.isDynamic && d.code?.specifier) todo.push(d.code.specifier);
        }
      }
      return seen;
    },
  };
}
