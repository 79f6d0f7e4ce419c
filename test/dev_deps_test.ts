/**
 * The test and bench tools stay out of the product (docs/decisions.md, "Test and bench
 * dependencies"): fast-check, picomatch and xterm.js's headless terminal are not in `deno.json`'s import map, and nothing the
 * product can load reaches them. The product's module graph is main.ts with every import it
 * takes, static or dynamic (`deno info` follows both), and every module started as a worker
 * (`findWorkerModules`, the list the compiled binary includes); the npm packages of that graph
 * are the whole tree under the packages it imports.
 */
import assert from "node:assert/strict";
import { findWorkerModules } from "../scripts/compile.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DEV_ONLY = ["fast-check", "picomatch", "@xterm/headless"];

interface Graph {
  modules: string[];
  /** Names of every npm package in the graph, dependencies of dependencies included. */
  packages: Set<string>;
}

async function graphOf(rel: string): Promise<Graph> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", rel],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `deno info ${rel}: ${new TextDecoder().decode(out.stderr)}`);
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; npmPackage?: string }[];
    npmPackages?: Record<string, { name: string; dependencies?: string[] }>;
  };
  // `npmPackages` is every package the resolution knows (the lock's whole tree), so the graph's
  // own are found from the npm modules it imports, then their dependencies.
  const known = info.npmPackages ?? {};
  const todo = info.modules.flatMap((m) => m.npmPackage ? [m.npmPackage] : []);
  const seen = new Set<string>();
  while (todo.length) {
    const id = todo.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    todo.push(...(known[id]?.dependencies ?? []));
  }
  return {
    modules: info.modules.map((m) => m.specifier),
    packages: new Set([...seen].map((id) => known[id]?.name ?? id)),
  };
}

const devOnlyIn = (g: Graph) => DEV_ONLY.filter((name) => g.packages.has(name));

Deno.test("dev deps: deno.json's import map names no test or bench tool", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const entries = Object.entries(config.imports as Record<string, string>);
  assert.ok(entries.length > 0, "no import map at all");
  for (const [key, target] of entries) {
    for (const name of DEV_ONLY) {
      assert.ok(key !== name && !target.startsWith(`npm:${name}@`), `${key} → ${target}`);
    }
  }
});

Deno.test("dev deps: the product's module graph reaches none of the test and bench tools", async () => {
  const workers = await findWorkerModules(ROOT);
  assert.ok(workers.includes("src/worker/effect_worker.ts"), `workers found: ${workers}`);
  for (const root of ["main.ts", ...workers]) {
    const g = await graphOf(root);
    assert.ok(g.modules.some((m) => m.endsWith(`/${root}`)), `${root} is not its own graph's root`);
    assert.deepEqual(devOnlyIn(g), [], `${root} reaches a test or bench tool`);
    const tooling = g.modules.filter((m) =>
      m.startsWith(`file://${ROOT}test/`) ||
      m.startsWith(`file://${ROOT}scripts/`)
    );
    assert.deepEqual(tooling, [], `${root} loads test or bench code`);
  }
  // The walk sees npm packages at all: main.ts's graph has commander, Ink and what they import.
  const main = await graphOf("main.ts");
  for (const name of ["commander", "ink", "lowlight", "highlight.js"]) {
    assert.ok(main.packages.has(name), `${name} missing from main.ts's graph`);
  }
});

Deno.test("dev deps: the same walk finds them where they are used", async () => {
  assert.deepEqual(devOnlyIn(await graphOf("src/util/escape_test.ts")), ["fast-check"]);
  assert.deepEqual(devOnlyIn(await graphOf("scripts/bench/glob_child.ts")), ["picomatch"]);
  assert.deepEqual(devOnlyIn(await graphOf("test/support/terminal.ts")), ["@xterm/headless"]);
});
