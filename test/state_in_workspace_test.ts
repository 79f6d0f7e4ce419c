/**
 * Brave Bot's state inside the workspace (a home-folder workspace), end to end: a one-shot session
 * writes a file and runs a program, and `bravebot diff` (a read-only worker) reads what it
 * changed, with the state covered in the effect worker's box where the kernel wall is used
 * (src/worker/kernel.ts `hiddenCovers`). What the cover keeps out is src/worker/hidden_state_test.ts;
 * this is that the covered box still serves a session and its diff.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { runMain } from "./support/run_main.ts";

Deno.test({
  name: "state in the workspace: a session writes, runs and is diffed with its state covered",
  sanitizeResources: false,
  async fn() {
    // Filled once the workspace exists (the fixture reads its args after `setup`).
    const args: string[] = ["--output-format", "json"];
    let state = "";
    await oneShotRun({
      files: { "a.txt": "OLDLINE\n" },
      approvals: { trust: ["."], writes: ["a.txt"], run: [{ prefix: ["touch"] }] },
      args,
      setup: (root) => {
        state = join(root, ".local", "state", "bravebot");
        args.push("--state-dir", state);
        return Promise.resolve();
      },
      replies: [
        {
          for: "planner",
          tool_calls: [{ name: "write_file", arguments: { path: "a.txt", contents: "NEWLINE\n" } }],
        },
        {
          for: "planner",
          tool_calls: [{
            name: "run",
            arguments: { pipeline: [{ program: "touch", args: ["b"] }] },
          }],
        },
        { for: "planner", text: "Done." },
      ],
    }, async (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(await run.read("a.txt"), "NEWLINE\n");
      await Deno.stat(join(run.root, "b"));
      const id: string = JSON.parse(run.stdout).session;
      const sessions = [];
      for await (const e of Deno.readDir(state)) sessions.push(e.name);
      assert.ok(sessions.length > 0, "the state is where --state-dir put it");
      const diff = await runMain([
        "diff",
        "--session",
        id,
        "-w",
        run.root,
        "--state-dir",
        state,
        "--config",
        join(run.stateDir, "config.json"),
      ]);
      assert.equal(diff.code, 0, diff.stderr);
      assert.match(diff.stdout, /^a\.txt$/m);
      assert.match(diff.stdout, /\+\s*NEWLINE/);
    });
  },
});
