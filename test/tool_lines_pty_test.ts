/**
 * Tool lines on the person's screen at 80 columns (issue 25), through a real pseudo-terminal
 * against the scripted model: a result is the tool's short summary, not the planner's text;
 * `/expand` shows what the planner was shown, whole, with its line breaks; a call whose quoted
 * argument is cut at the row's edge keeps the spaces there; and no line repeats the label the
 * prompt line shows.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { drivePty, sessionArgs } from "./support/pty.ts";
import { startMockModel } from "../scripts/mock-model.ts";

Deno.test("tool lines pty: summaries, /expand and a quoted string cut at 80 columns", async () => {
  // "→ search pattern='" and 61 letters fill 79 columns; the three spaces fall at the edge.
  const pattern = `${"a".repeat(61)}   tail words`;
  const mock = await startMockModel({
    script: {
      replies: [
        { tool_calls: [{ name: "read_file", arguments: { path: "src/app.ts" } }] },
        { tool_calls: [{ name: "search", arguments: { pattern } }] },
        { text: "done." },
      ],
    },
  });
  const root = await Deno.makeTempDir({ prefix: "bb-toollines-pty-" });
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(join(ws, "src"), { recursive: true });
    await Deno.writeTextFile(
      join(ws, "src/app.ts"),
      "export function a() {\n  return 1;\n}\n",
    );
    const config = join(root, "config.json");
    await Deno.writeTextFile(config, "{}");
    const r = await drivePty(
      [
        { expect: "Trust:", send: "w", answer: true },
        { expect: "›", send: "go\r" },
        { expect: "done\\.[\\s\\S]*›", send: "/expand 2\r" },
        { expect: "│ 3    \\}", send: "/exit\r" },
      ],
      sessionArgs({ ws, state: join(root, "state"), config, endpoint: mock.url }),
      { TERM: "xterm-256color", NO_COLOR: "1" },
      { columns: 80 },
    );
    assert.equal(r.ok, true, r.screen.slice(-3000));
    const [before, expanded] = r.screen.split("/expand 2");
    assert.ok(expanded !== undefined, r.screen.slice(-3000));
    // The person's summary, and not the planner's page squeezed onto one line.
    assert.match(before, /← read src\/app\.ts, 3 lines/);
    assert.doesNotMatch(before, /lines 1-3 of 3/);
    // (At 80 columns the summary wraps too, between its words.)
    assert.match(
      before,
      /← searched for\s'a{61} {3}tail words': 0\smatching\slines\sin\s\d+\sfiles/,
    );
    // Cut at the 80th column, the spaces begin the next row instead of being trimmed away.
    assert.match(before, new RegExp(`→ search pattern='a{61}\\n   tail words'`));
    // No per-turn jargon: the prompt line's label says it.
    assert.doesNotMatch(r.screen, /the planner context is now/);
    // /expand 2: the read, as the planner was shown it, with real line breaks.
    assert.match(
      expanded,
      /┌ read_file: what the planner was shown, \(T,pub\)\n│ src\/app\.ts: lines 1-3 of 3\n│ 1 {4}export function a\(\) \{\n│ 2 {6}return 1;\n│ 3 {4}\}\n└/,
    );
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
  }
});
