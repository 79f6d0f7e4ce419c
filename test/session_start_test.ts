/**
 * What a session tells the person when it starts (issue 21): where run confinement cannot be
 * planned — `run.sandbox: "bwrap"` with no usable bwrap, or a cover bwrap cannot mount — every
 * run will be refused, and the person hears it once, at the start, not at the first run.
 */
import assert from "node:assert/strict";
import { oneShotRun } from "./support/one_shot_fixture.ts";

Deno.test("session start: run.sandbox bwrap that cannot confine is said once, before any run", async () => {
  const empty = await Deno.makeTempDir({ prefix: "bb-no-bwrap-" });
  try {
    await oneShotRun({
      replies: [{ text: "done" }],
      config: { run: { sandbox: "bwrap" } },
      // No bwrap on PATH: the plan fails.
      env: { PATH: empty },
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      const said = run.stderr.split("\n").filter((l) => l.includes("bwrap is not on PATH"));
      assert.equal(said.length, 1, run.stderr);
      assert.match(said[0], /^bravebot: commands will be refused/);
    });
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});
