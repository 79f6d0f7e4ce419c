/**
 * Ink and React are loaded only for an interactive session: `--version`, `-p` and the
 * subcommands must not pay for them. The module graph of main.ts (from `deno info`) is walked
 * along static imports only (what loads before any `import()` runs) and along the dynamic ones
 * each command takes; only the session's path may reach `ink` or `react`.
 */
import assert from "node:assert/strict";
import { moduleGraph, src } from "./support/module_graph.ts";

const { deps, staticClosure } = await moduleGraph([src("main.ts"), src("src/cli/main.ts")]);

const isUi = (s: string) => /^npm:\/?(ink|react)@/.test(s);

/** What `--version`, `-p` and the subcommands load: no path that only a session takes. */
const NOT_SESSION = [
  "main.ts",
  "src/cli/main.ts",
  "src/cli/one_shot.ts",
  "src/cli/commands/vouch.ts",
  "src/cli/commands/trust.ts",
  "src/cli/commands/skills.ts",
  "src/cli/commands/doctor.ts",
  "src/cli/sessions.ts",
];

Deno.test("lazy UI: main.ts, --version and the subcommands load no ink or react", () => {
  const roots = [...NOT_SESSION, "src/cli/interactive.ts"].map(src);
  for (const r of roots) assert.ok(deps.has(r), `not in the graph: ${r}`);
  const loaded = [...staticClosure(roots)].filter(isUi);
  assert.deepEqual(loaded, [], "a one-shot or subcommand path loads the UI");
});

Deno.test("lazy UI: the session loads it through a dynamic import, and it is ink and react", () => {
  const dynamic = (deps.get(src("src/cli/interactive.ts")) ?? []).filter((d) => d.isDynamic);
  const ui = dynamic.find((d) => d.code?.specifier === src("src/person/ink/mod.ts"));
  assert.ok(ui, "interactive.ts does not import() the screen");
  const reached = [...staticClosure([ui.code!.specifier])].filter(isUi);
  assert.ok(reached.some((s) => s.includes("ink@")) && reached.some((s) => s.includes("react@")));
});

Deno.test("lazy UI: only the session loads the markdown renderer and its highlighter", () => {
  const roots = NOT_SESSION.map(src);
  const renderer = src("src/person/markdown.ts");
  const isRenderer = (s: string) => s === renderer || /^npm:\/?(lowlight|highlight\.js)@/.test(s);
  assert.deepEqual([...staticClosure(roots)].filter(isRenderer), []);
  // The session itself does load them: the check above looks for what is there.
  const session = [...staticClosure([src("src/cli/interactive.ts")])].filter(isRenderer);
  assert.ok(
    session.includes(renderer) && session.some((s) => s.includes("lowlight@")),
    `${session}`,
  );
});
