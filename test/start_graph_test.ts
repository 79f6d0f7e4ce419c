/**
 * What `bravebot --version` and `bravebot -p` load before they do anything (issue 24): the module
 * graph (`deno info`) walked along static imports, which all load and run before the first
 * `import()` does. `--version` loads no npm package and no Node module at all; `-p` loads none of
 * the session's screen, the markdown renderer and its highlighter, or the tokenizer (which the
 * driver imports at its first request). zod is on `-p`'s path: the configuration and the tools'
 * schemas are checked with it.
 */
import assert from "node:assert/strict";
import { moduleGraph, src } from "./support/module_graph.ts";
import { CLI_MODULE } from "../main.ts";

const graph = await moduleGraph([src("main.ts"), src("src/cli/main.ts")]);

/** Modules a one-shot run must not load at start, by npm name or by file. */
const HEAVY_NPM = /^npm:\/?(ink|react|marked|lowlight|highlight\.js|gpt-tokenizer|string-width)@/;
const HEAVY_FILES = [
  "src/cli/interactive.ts",
  "src/person/ink/mod.ts",
  "src/person/markdown.ts",
].map(src);
const heavy = (s: string) => HEAVY_NPM.test(s) || HEAVY_FILES.includes(s);

Deno.test("start graph: --version loads main.ts's few modules and nothing from npm or Node", () => {
  const loaded = [...graph.staticClosure([src("main.ts")])];
  assert.deepEqual(loaded.filter((s) => !s.startsWith("file:")), [], "npm or node modules");
  assert.ok(!loaded.includes(src("src/cli/main.ts")), "the command line is loaded for --version");
  assert.ok(loaded.length <= 6, `${loaded.length} modules: ${loaded.join(", ")}`);
});

Deno.test("start graph: main.ts loads the command line by the name the compiler includes", () => {
  assert.equal(new URL(CLI_MODULE, src("main.ts")).href, src("src/cli/main.ts"));
  assert.ok(graph.deps.has(src("src/cli/main.ts")));
});

Deno.test("start graph: -p loads no screen, renderer, highlighter or tokenizer at start", () => {
  const roots = ["main.ts", "src/cli/main.ts", "src/cli/one_shot.ts"].map(src);
  for (const r of roots) assert.ok(graph.deps.has(r), `not in the graph: ${r}`);
  const loaded = [...graph.staticClosure(roots)];
  assert.deepEqual(loaded.filter(heavy), []);
  // The check looks for what is there: the session's path does reach them.
  const session = [...graph.staticClosure([src("src/cli/interactive.ts")])];
  assert.ok(session.some((s) => HEAVY_FILES.includes(s)), "the list names real modules");
});

Deno.test("start graph: the one-shot path reaches the tokenizer only through import()", () => {
  const roots = ["src/cli/one_shot.ts"].map(src);
  const all = new Set<string>();
  for (const s of graph.staticClosure(roots)) {
    for (const d of graph.deps.get(s) ?? []) {
      if (d.code?.specifier && /gpt-tokenizer@/.test(d.code.specifier)) {
        assert.ok(d.isDynamic, `${s} imports the tokenizer statically`);
        all.add(s);
      }
    }
  }
  assert.ok(all.size > 0, "the driver's import() of the tokenizer is on the path");
});
