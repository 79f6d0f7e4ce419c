import assert from "node:assert/strict";
import { EffectWorker } from "./client.ts";

Deno.test("effect worker: stopSpawns stops a running pipeline (Ctrl-C in a session)", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-stop-ws-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-stop-scratch-" }));
  const worker = EffectWorker.start({ workspace: ws, scratch, run: true });
  try {
    let started!: () => void;
    const ready = new Promise<void>((resolve) => started = resolve);
    const sleeping = worker.call({
      op: "spawn",
      request: {
        stages: [{ program: "/bin/sh", args: ["-c", "echo ready; sleep 60; echo SLEPT"] }],
        stdin: null,
        cwd: ws,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 120_000,
        maxOutputBytes: 1024,
        streamBytes: 64,
      },
    }, () => started());
    // Stopped once it runs: a signal that lands before the program has started is lost, and the
    // ladder's next step would end it instead.
    await ready;
    const r = await worker.call({ op: "stopSpawns" });
    assert.ok(r.ok && r.value.stopped === 1);
    const result = await sleeping;
    assert.ok(result.ok);
    // The first step of the ladder: a command that does not handle SIGINT ends there.
    assert.equal(result.value.signal, "SIGINT");
    assert.deepEqual(result.value.stopSignals, ["SIGINT"]);
    assert.equal(result.value.timedOut, false);
    assert.doesNotMatch(new TextDecoder().decode(result.value.stdout), /SLEPT/);
    // Nothing is left running to stop.
    const again = await worker.call({ op: "stopSpawns" });
    assert.ok(again.ok && again.value.stopped === 0);
  } finally {
    await worker.terminate();
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
  }
});
