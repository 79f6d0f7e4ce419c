/**
 * Stopping a run the way a person expects (Ctrl-C in a session calls `policy.stopRuns()`): the
 * command itself gets SIGINT, then SIGTERM, then SIGKILL, confined by bwrap or not, and the
 * result the planner gets says which signal ended it, in our words. Each command writes down the
 * signals it got (test/support/signal_log.ts), so the order it saw them in is what is asserted.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withRunPolicy } from "./support/run_fixture.ts";
import { leftRunning, logLines, STAGE_SCRIPT, waitFor } from "./support/signal_log.ts";
import { runTool } from "../src/tools/run.ts";
import type { ToolDef, ToolOutput } from "../src/tools/tool.ts";
import { sandboxStatus } from "../src/policy/sandbox.ts";
import { settingsFrom } from "../src/state/settings.ts";
import { spawnMain } from "./support/run_main.ts";
import { startMockModel } from "../scripts/mock-model.ts";

const run = runTool as unknown as ToolDef<never>;

const status = await sandboxStatus(settingsFrom({ run: { sandbox: "bwrap" } }));
if (!status.inUse) console.log(`confined stop tests skipped: ${status.detail}`);

Deno.test({
  name: "run stop: in CI confinement works, so the confined stop tests run rather than skip",
  ignore: !(Deno.env.get("CI") === "true" && Deno.build.os === "linux"),
  fn: () => {
    assert.ok(
      status.inUse,
      `CI installs bubblewrap, but confinement does not work: ${status.detail}`,
    );
  },
});

type Mode = "int" | "term" | "none" | "child";

/** Runs the stage script approved once, stops it when its traps are set, and checks it. */
async function stopped(
  sandbox: "bwrap" | "none",
  mode: Mode,
  check: (out: ToolOutput, log: (name: string) => Promise<string[]>) => Promise<void>,
): Promise<void> {
  const marker = `bb-run-stop-${crypto.randomUUID()}`;
  await withRunPolicy({
    config: { run: { sandbox } },
    files: { "stage.sh": STAGE_SCRIPT },
    answers: [{ run: { answer: "once" } }],
  }, async (fx) => {
    const out = fx.call(run, {
      pipeline: [{ program: "sh", args: ["stage.sh", "log", mode, marker] }],
    });
    await waitFor(join(fx.root, mode === "child" ? "log.child.ready" : "log.ready"));
    assert.equal(await fx.policy.stopRuns(), 1);
    const result = await out;
    assert.equal(result.isError, false, result.content);
    if (sandbox === "bwrap") assert.match(result.content, /\[confined\]/);
    else assert.doesNotMatch(result.content, /\[confined\]/);
    await check(result, (name) => logLines(join(fx.root, name)));
    assert.equal(await leftRunning(marker), "", "nothing the command started is left running");
  });
}

for (const sandbox of ["none", "bwrap"] as const) {
  const ignore = sandbox === "bwrap" && !status.inUse;
  const where = sandbox === "bwrap" ? "confined" : "unconfined";

  Deno.test({
    name: `run stop (${where}): a command that exits on SIGINT stops at the first step`,
    ignore,
    fn: () =>
      stopped(sandbox, "int", async (out, log) => {
        assert.deepEqual(await log("log"), ["INT"]);
        assert.match(out.content, /^stopped by the person: ended on SIGINT$/m);
        assert.match(out.content, /^exit status 3, /m);
      }),
  });

  Deno.test({
    name: `run stop (${where}): a command that ignores SIGINT gets SIGTERM`,
    ignore,
    fn: () =>
      stopped(sandbox, "term", async (out, log) => {
        assert.deepEqual(await log("log"), ["INT", "TERM"]);
        assert.match(
          out.content,
          /^stopped by the person: ended on SIGTERM after it ignored SIGINT$/m,
        );
      }),
  });

  Deno.test({
    name: `run stop (${where}): a command that ignores SIGINT and SIGTERM is killed`,
    ignore,
    fn: () =>
      stopped(sandbox, "none", async (out, log) => {
        assert.deepEqual(await log("log"), ["INT", "TERM"]);
        assert.match(
          out.content,
          /^stopped by the person: killed with SIGKILL after it ignored SIGINT and SIGTERM$/m,
        );
      }),
  });

  Deno.test({
    name: `run stop (${where}): a child of the command gets the signals too`,
    ignore,
    fn: () =>
      stopped(sandbox, "child", async (out, log) => {
        assert.deepEqual(await log("log.child"), ["INT", "TERM"]);
        // The command itself waited on its child, and took its signals after it.
        assert.deepEqual(await log("log"), ["INT", "TERM"]);
        assert.match(
          out.content,
          /^stopped by the person: ended on SIGTERM after it ignored SIGINT$/m,
        );
      }),
  });
}

Deno.test("run stop (one-shot): Ctrl-C stops a command the policy file ran: SIGINT, then SIGTERM", async () => {
  const marker = `bb-run-stop-${crypto.randomUUID()}`;
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-stop-1shot-ws-" }));
  const tmp = await Deno.makeTempDir({ prefix: "bb-stop-1shot-state-" });
  const argv = ["sh", "stage.sh", "log", "term", marker];
  const mock = await startMockModel({
    script: {
      replies: [
        {
          tool_calls: [{
            name: "run",
            arguments: { pipeline: [{ program: "sh", args: argv.slice(1) }] },
          }],
        },
        { text: "stopped" },
      ],
    },
  });
  try {
    await Deno.writeTextFile(join(root, "stage.sh"), STAGE_SCRIPT);
    await Deno.writeTextFile(
      join(tmp, "config.json"),
      JSON.stringify({ run: { sandbox: "none" } }),
    );
    await Deno.writeTextFile(join(tmp, "approvals.json"), JSON.stringify({ run: [{ argv }] }));
    const child = spawnMain([
      "-p",
      "run the stage",
      "-w",
      root,
      "--state-dir",
      join(tmp, "state"),
      "--config",
      join(tmp, "config.json"),
      "--approvals",
      join(tmp, "approvals.json"),
      "--endpoint",
      mock.url,
      "--model",
      "m",
    ]);
    const output = child.output();
    await waitFor(join(root, "log.ready"));
    child.kill("SIGINT");
    const out = await output;
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 130, stderr);
    assert.match(stderr, /stopping/);
    assert.deepEqual(await logLines(join(root, "log")), ["INT", "TERM"]);
    assert.equal(await leftRunning(marker), "", "nothing the command started is left running");
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(tmp, { recursive: true });
  }
});
