/**
 * A one-shot run at a terminal (issue 25): the retry notes of one request update one line in
 * place — each written over the one before it, nothing left between them — and what comes next
 * (the answer) starts on a line of its own below the last. On a pipe each note is a line
 * (test/one_shot_contract_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { drivePty, sessionArgs } from "./support/pty.ts";
import { startMockModel } from "../scripts/mock-model.ts";

Deno.test("one-shot at a terminal: retry notes rewrite one line; the answer follows on its own line", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-1pty-ws-" }));
  const state = await Deno.makeTempDir({ prefix: "bb-1pty-state-" });
  const config = join(state, "config.json");
  await Deno.writeTextFile(config, "{}");
  const mock = await startMockModel({
    script: {
      replies: [{ fault: { status: 500, error_message: "busy GPU" }, times: 2 }, {
        text: "THE-ANSWER",
      }],
    },
  });
  try {
    const r = await drivePty(
      [{ expect: "THE-ANSWER", timeout: 60 }],
      ["-p", "do it", ...sessionArgs({ ws, state: join(state, "s"), config, endpoint: mock.url })],
    );
    assert.ok(r.ok, r.screen);
    // The erase is the one sequence the writer sends itself (util/output.ts, progressErr).
    // deno-lint-ignore no-control-regex
    const notes = [...r.raw.matchAll(/\r\x1b\[2Kbravebot: the model endpoint [^\r\n]*/g)];
    assert.equal(notes.length, 2, JSON.stringify(r.raw));
    assert.match(notes[0][0], /HTTP 500: busy GPU; trying again in [\d.]+ s \(try 2\)$/);
    // Nothing between the two: the second is written over the first.
    assert.equal(notes[1].index, notes[0].index! + notes[0][0].length);
    // The answer starts below the last note.
    const after = r.raw.slice(notes[1].index! + notes[1][0].length);
    assert.match(after, /^\r?\n(.*\n)*THE-ANSWER/);
  } finally {
    await mock.stop();
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(state, { recursive: true });
  }
});
