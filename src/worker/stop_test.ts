import assert from "node:assert/strict";
import { EffectWorker } from "./client.ts";

Deno.test("effect worker: stopSpawns kills a running pipeline (Ctrl-C in a session)", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-stop-ws-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-stop-scratch-" }));
  const worker = EffectWorker.start({ workspace: ws, scratch, run: true });
  try {
    const sleeping = worker.call({
      op: "spawn",
      request: {
        stages: [{ program: "/bin/sh", args: ["-c", "sleep 60; echo SLEPT"] }],
        stdin: null,
        cwd: ws,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 120_000,
        maxOutputBytes: 1024,
      },
    });
    let stopped = 0;
    for (let i = 0; i < 200 && stopped === 0; i++) {
      const r = await worker.call({ op: "stopSpawns" });
      if (r.ok) stopped = r.value.stopped;
      if (stopped === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(stopped, 1);
    const result = await sleeping;
    assert.ok(result.ok);
    assert.equal(result.value.signal, "SIGKILL");
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
