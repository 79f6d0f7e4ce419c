/**
 * The import graph of `src/`, as the layering and import-circle tests read it: every source file
 * under `src/` (not only the module graph from `main.ts`, which misses the worker entry points
 * loaded through `new Worker(new URL(…))`), and every module each one names. A type import is an
 * import: a type shared across a seam ties the two sides as a value would.
 */
import { dirname, join, normalize, relative } from "node:path";

export const SRC = new URL("../../src/", import.meta.url).pathname;

/** Every `.ts` file under `dir` that is not a test, as absolute paths. */
export async function sourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) await sourceFiles(path, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

/**
 * Every module a file names: imports (`import type` too), re-exports, dynamic imports (and so
 * inline `import("…").T` types), and `new URL("…ts", …)` (a worker's or child's entry point).
 */
export function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gms,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\bnew URL\(\s*["']([^"']+\.ts)["']/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]);
  return found;
}

/** One import of a file under `src/`: what it wrote, and the file it names relative to `src/`. */
export interface Import {
  spec: string;
  /** Relative to `src/`; starts with `..` when the import leaves `src/`. */
  to: string;
}

/**
 * Each source file under `src/` (relative to it) and its relative imports; npm packages and
 * `node:` builtins are left out.
 */
export async function importGraph(src = SRC): Promise<Map<string, Import[]>> {
  const graph = new Map<string, Import[]>();
  for (const file of (await sourceFiles(src)).sort()) {
    const imports: Import[] = [];
    for (const spec of specifiers(await Deno.readTextFile(file))) {
      if (!spec.startsWith(".")) continue;
      imports.push({ spec, to: relative(src, normalize(join(dirname(file), spec))) });
    }
    graph.set(relative(src, file), imports);
  }
  return graph;
}
