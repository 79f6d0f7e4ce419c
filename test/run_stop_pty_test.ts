/**
 * Ctrl-C on a running command, in the real program through a pseudo-terminal (the way
 * test/interactive_pty_test.ts drives it, with test/support/pty_drive.py): the person approves a
 * `run` of a command that ignores SIGINT, presses Ctrl-C while it runs, and the command gets
 * SIGINT and then SIGTERM — confined by bwrap and not — while the session goes on to the next
 * prompt. The command writes down the signals it got, so their order is what is asserted.
 */
import assert from "node:assert/strict";
import { drivePty, KEY, type PtyStep, sessionArgs } from "./support/pty.ts";
import { join } from "node:path";
import { leftRunning, logLines, STAGE_SCRIPT } from "./support/signal_log.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";
import { sandboxStatus } from "../src/policy/sandbox.ts";
import { settingsFrom } from "../src/state/settings.ts";

/** The tool results the planner got, from the session's transcript. */
async function toolResults(state: string): Promise<string[]> {
  const results: string[] = [];
  const sessions = join(state, "workspaces");
  for await (const w of Deno.readDir(sessions)) {
    for await (const s of Deno.readDir(join(sessions, w.name, "sessions"))) {
      const file = join(sessions, w.name, "sessions", s.name, "transcript.jsonl");
      for (const line of (await Deno.readTextFile(file)).trim().split("\n")) {
        const entry = JSON.parse(line);
        if (entry.message?.role === "tool") results.push(entry.message.content as string);
      }
    }
  }
  return results;
}

const confinement = await sandboxStatus(settingsFrom({ run: { sandbox: "bwrap" } }));

/**
 * A session whose planner asks to run the stage script in `mode`; the person approves it once,
 * then `stopping` are the steps from its "traps set" line on. Returns the screen, the signals the
 * command logged and the run's result as the planner got it.
 */
async function stopInSession(
  sandbox: "bwrap" | "none",
  mode: "term" | "none",
  stopping: PtyStep[],
): Promise<{ screen: string; log: string[]; ran: string }> {
  const marker = `bb-stop-pty-${crypto.randomUUID()}`;
  const replies: MockReply[] = [
    {
      tool_calls: [{
        name: "run",
        arguments: { pipeline: [{ program: "sh", args: ["stage.sh", "log", mode, marker] }] },
      }],
    },
    { text: "It was stopped." },
  ];
  const mock = await startMockModel({ script: { replies } });
  const root = await Deno.makeTempDir({ prefix: "bb-stop-pty-session-" });
  const ws = join(root, "myrepo");
  const state = join(root, "state");
  const config = join(root, "config.json");
  try {
    await Deno.mkdir(ws);
    await Deno.writeTextFile(join(ws, "stage.sh"), STAGE_SCRIPT);
    await Deno.writeTextFile(config, JSON.stringify({ run: { sandbox } }));
    const r = await drivePty(
      [
        { expect: "Trust:", send: "w", answer: true },
        { expect: "myrepo \\(T,pub\\)(?: \\d+%)? ›", send: "run the stage please" + KEY.enter },
        // One key: run it once.
        { expect: "Run it\\?", send: "y", answer: true },
        // Its output, shown as it comes, says its traps are set: from here, the person stops it.
        { expect: `traps set \\(${mode}\\)`, timeout: 60 },
        ...stopping,
        { expect: "stopped by the person", timeout: 60 },
        // The session goes on: the next prompt.
        { expect: "›", send: "/exit" + KEY.enter, timeout: 60 },
      ],
      sessionArgs({ ws, state, config, endpoint: mock.url }),
      {
        TERM: "xterm-256color",
        NO_COLOR: "1",
        SHELL: "/bin/sh",
      },
    );
    assert.ok(r.ok, r.screen.slice(-3000));
    assert.match(r.screen, /session kept: bravebot --resume/);
    const ran = (await toolResults(state)).find((c) => c.startsWith("ran")) ?? "";
    assert.equal(ran.includes("[confined]"), sandbox === "bwrap", ran);
    if (Deno.env.get("BB_SHOW_SCREEN")) console.log(r.screen);
    assert.equal(await leftRunning(marker), "", "nothing the command started is left running");
    return { screen: r.screen, log: await logLines(join(ws, "log")), ran };
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
  }
}

for (const sandbox of ["none", "bwrap"] as const) {
  const where = sandbox === "bwrap" ? "confined" : "unconfined";
  const ignore = sandbox === "bwrap" && !confinement.inUse;

  Deno.test({
    name: `run stop (pty, ${where}): Ctrl-C sends SIGINT, then SIGTERM, and the session goes on`,
    ignore,
    sanitizeResources: false,
    async fn() {
      const r = await stopInSession(sandbox, "term", [{ send: KEY.ctrlC }]);
      // The command saw SIGINT, went on, and ended on SIGTERM: not killed at once.
      assert.deepEqual(r.log, ["INT", "TERM"]);
      const stopLine = "stopped by the person: ended on SIGTERM after it ignored SIGINT";
      assert.ok(r.screen.includes(stopLine), r.screen.slice(-3000));
      assert.ok(r.ran.includes(stopLine), `the planner was told, in our words: ${r.ran}`);
    },
  });

  Deno.test({
    name: `run stop (pty, ${where}): Ctrl-C again kills a command that ignores SIGINT`,
    ignore,
    sanitizeResources: false,
    async fn() {
      const r = await stopInSession(sandbox, "none", [
        { send: KEY.ctrlC },
        { expect: "\\(stopping…\\)", send: KEY.ctrlC },
      ]);
      // SIGINT came first (its trap may not have run before the SIGKILL); SIGKILL at the end.
      assert.ok(r.log.length === 0 || r.log[0] === "INT", r.log.join(","));
      assert.match(r.ran, /^stopped by the person: killed with SIGKILL after it ignored SIGINT/m);
    },
  });
}
