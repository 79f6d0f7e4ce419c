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

Deno.test("session start: the probe's line, said after the first request went, still comes before the first run's call; the run is refused", async () => {
  const empty = await Deno.makeTempDir({ prefix: "bb-no-bwrap-" });
  try {
    await oneShotRun({
      replies: [
        {
          for: "planner",
          tool_calls: [{ name: "run", arguments: { pipeline: [{ program: "true" }] } }],
        },
        { for: "planner", text: "done" },
      ],
      config: { run: { sandbox: "bwrap" } },
      env: { PATH: empty },
      args: ["--output-format", "stream-json"],
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stderr.split("\n");
      const told = lines.findIndex((l) => /^bravebot: commands will be refused/.test(l));
      assert.ok(told >= 0, run.stderr);
      assert.equal(lines.filter((l) => l.includes("bwrap is not on PATH")).length, 1, run.stderr);
      // stream-json writes no call lines on stderr: the stream on stdout has the run's call.
      const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(events[0].type, "start");
      assert.equal(events.at(-1).type, "final");
      const call = events.find((e) => e.type === "tool_call" && e.name === "run");
      assert.ok(call, run.stdout);
      const result = events.find((e) => e.type === "tool_result" && e.name === "run");
      assert.equal(result?.is_error, true, "the run was refused: nothing could confine it");
    });
    await oneShotRun({
      replies: [
        {
          for: "planner",
          tool_calls: [{ name: "run", arguments: { pipeline: [{ program: "true" }] } }],
        },
        { for: "planner", text: "done" },
      ],
      config: { run: { sandbox: "bwrap" } },
      env: { PATH: empty },
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stderr.split("\n");
      const told = lines.findIndex((l) => /^bravebot: commands will be refused/.test(l));
      const called = lines.findIndex((l) => l.startsWith("→ run"));
      assert.ok(told >= 0 && called >= 0, run.stderr);
      assert.ok(told < called, `said before the run's call:\n${run.stderr}`);
    });
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});
