/**
 * `bravebot diff --session ID` (issue 27), end to end: a one-shot session writes a file the person
 * approved in advance and runs a program that creates one whose name the run chose, then the
 * subcommand lists both against their state before the session — the edit as a diff, the run's
 * file marked and its name escaped, never sent to the terminal as it is. An unknown or ambiguous
 * id is exit 2 with one clear line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { runMain } from "./support/run_main.ts";
import { statePaths } from "../src/state/session_paths.ts";

const ESC = "\x1b";
/** A name a run chooses: a bidi override and an OSC 52 clipboard write. */
const HOSTILE = `x\u202Etxt.sh${ESC}]52;c;cm0=\x07`;

Deno.test({
  name: "cli diff: a one-shot session's write and a run's new file, listed and escaped",
  sanitizeResources: false,
  async fn() {
    await oneShotRun({
      files: { "a.txt": "OLDLINE\n" },
      approvals: { trust: ["."], writes: ["a.txt"], run: [{ prefix: ["touch"] }] },
      args: ["--output-format", "json"],
      replies: [
        {
          for: "planner",
          tool_calls: [{ name: "write_file", arguments: { path: "a.txt", contents: "NEWLINE\n" } }],
        },
        {
          for: "planner",
          tool_calls: [{
            name: "run",
            arguments: { pipeline: [{ program: "touch", args: [HOSTILE] }] },
          }],
        },
        { for: "planner", text: "Done." },
      ],
    }, async (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(await run.read("a.txt"), "NEWLINE\n");
      await Deno.stat(join(run.root, HOSTILE)); // the run did create it
      const id: string = JSON.parse(run.stdout).session;
      const where = [
        "-w",
        run.root,
        "--state-dir",
        join(run.stateDir, "state"),
        "--config",
        join(run.stateDir, "config.json"),
      ];
      const diff = await runMain(["diff", "--session", id, ...where]);
      assert.equal(diff.code, 0, diff.stderr);
      const out = diff.stdout;
      assert.match(out, /^a\.txt$/m);
      assert.match(out, /-\s*OLDLINE/);
      assert.match(out, /\+\s*NEWLINE/);
      // The run's file: marked, its name shown with markers, no escape or bidi reaching the screen.
      assert.match(out, /x⟦U\+202E⟧txt\.sh⟦U\+001B⟧\]52;c;cm0=⟦U\+0007⟧ \(changed by a run\)/);
      for (const raw of [ESC, "\u202E", "\x07"]) {
        assert.ok(!out.includes(raw), `${JSON.stringify(raw)} reached the terminal`);
      }
      // Not a terminal: no colour.
      assert.ok(!out.includes("\x1b["), out);

      // A prefix of the id names it; a prefix of two ids, or no id, is exit 2.
      const short = await runMain(["diff", "--session", id.slice(0, 10), ...where]);
      assert.equal(short.code, 0, short.stderr);
      assert.equal(short.stdout, out);
      const sessions = statePaths(join(run.stateDir, "state"), run.root).sessionsDir;
      await Deno.mkdir(join(sessions, `${id.slice(0, 10)}-other`));
      await Deno.writeTextFile(join(sessions, `${id.slice(0, 10)}-other`, "transcript.jsonl"), "");
      const two = await runMain(["diff", "--session", id.slice(0, 10), ...where]);
      assert.equal(two.code, 2);
      assert.equal(two.stdout, "");
      assert.match(two.stderr, /begins 2 sessions' ids; give more of it/);
      const unknown = await runMain(["diff", "--session", "no-such-session", ...where]);
      assert.equal(unknown.code, 2);
      assert.equal(unknown.stdout, "");
      assert.match(unknown.stderr, /--session: no session 'no-such-session' in this workspace/);
      assert.ok(!unknown.stderr.includes("    at "), unknown.stderr);
    });
  },
});
