/**
 * A stop by the person (Ctrl-C in a session) climbs SIGINT, SIGTERM, SIGKILL (spawn.ts,
 * STOP_LADDER): each command here writes down the signals it got, in order, so the tests assert
 * what the command saw rather than how long anything took. Confined runs are in
 * test/run_stop_test.ts, through the run tool.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnPipeline, STOP_LADDER, stopAllSpawns } from "./spawn.ts";
import type { SpawnRequest, SpawnResult } from "../protocol.ts";
import { leftRunning, logLines, STAGE_SCRIPT, waitFor } from "../../../test/support/signal_log.ts";

const PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

async function withStage(
  mode: "int" | "term" | "none" | "child",
  stop: () => void,
  check: (r: SpawnResult, log: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-ladder-" }));
  const marker = `bb-ladder-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(join(dir, "stage.sh"), STAGE_SCRIPT);
    const log = join(dir, "log");
    const request: SpawnRequest = {
      stages: [{ program: "/bin/sh", args: [join(dir, "stage.sh"), log, mode, marker] }],
      stdin: null,
      cwd: dir,
      env: { PATH },
      timeoutMs: 120_000,
      maxOutputBytes: 1 << 16,
    };
    const running = spawnPipeline(request);
    await waitFor(`${mode === "child" ? `${log}.child` : log}.ready`);
    stop();
    const r = await running;
    await check(r, log);
    assert.equal(await leftRunning(marker), "", "nothing the command started is left running");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const stopOnce = () => assert.equal(stopAllSpawns(), 1);

Deno.test("stop: the ladder is SIGINT, SIGTERM 2 s later, SIGKILL 2 s after that", () => {
  assert.deepEqual(STOP_LADDER.map((s) => s.signal), ["SIGINT", "SIGTERM", "SIGKILL"]);
  assert.deepEqual(STOP_LADDER.slice(0, 2).map((s) => s.waitMs), [2_000, 2_000]);
});

Deno.test("stop: a command that exits on SIGINT stops at the first step", async () => {
  await withStage("int", stopOnce, async (r, log) => {
    assert.deepEqual(await logLines(log), ["INT"]);
    assert.deepEqual(r.stopSignals, ["SIGINT"]);
    assert.equal(r.code, 3);
    assert.equal(r.timedOut, false);
  });
});

Deno.test("stop: a command that goes on after SIGINT gets SIGTERM", async () => {
  await withStage("term", stopOnce, async (r, log) => {
    assert.deepEqual(await logLines(log), ["INT", "TERM"]);
    assert.deepEqual(r.stopSignals, ["SIGINT", "SIGTERM"]);
    assert.equal(r.code, 4);
  });
});

Deno.test("stop: a command that goes on after SIGINT and SIGTERM is killed", async () => {
  await withStage("none", stopOnce, async (r, log) => {
    assert.deepEqual(await logLines(log), ["INT", "TERM"]);
    assert.deepEqual(r.stopSignals, ["SIGINT", "SIGTERM", "SIGKILL"]);
    assert.equal(r.signal, "SIGKILL");
  });
});

Deno.test("stop: the command's children get the signals too (its process group)", async () => {
  await withStage("child", stopOnce, async (r, log) => {
    assert.deepEqual(await logLines(`${log}.child`), ["INT", "TERM"]);
    assert.deepEqual(r.stopSignals, ["SIGINT", "SIGTERM"]);
  });
});

Deno.test("stop: asked again while the ladder is under way, it goes straight to SIGKILL", async () => {
  await withStage("none", () => {
    stopOnce();
    stopOnce();
  }, async (r, log) => {
    assert.deepEqual(r.stopSignals, ["SIGKILL"]);
    assert.equal(r.signal, "SIGKILL");
    assert.deepEqual(await logLines(log), []);
  });
});

Deno.test("stop: nothing running, nothing stopped", () => {
  assert.equal(stopAllSpawns(), 0);
});
