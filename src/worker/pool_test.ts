import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker } from "./client.ts";
import { fanout, poolSize } from "./pool.ts";
import { FIND } from "./search_protocol.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

async function withPool(size: number, fn: (w: EffectWorker, ws: string) => Promise<void>) {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-pool-ws-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-pool-scratch-" }));
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false }, size);
  try {
    await fn(worker, ws);
  } finally {
    await worker.terminate();
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
  }
}

Deno.test("worker pool: every worker of the pool is behind the second wall (/etc/passwd is NotCapable)", async () => {
  await withPool(3, async (w, ws) => {
    await Deno.writeTextFile(join(ws, "in.txt"), "root:x:0:0\n");
    assert.equal(w.pool.length, 3);
    assert.equal(new Set(w.pool).size, 3);
    for (const member of w.pool) {
      const read = await member.call({ op: "read", path: "/etc/passwd", maxBytes: 1 << 20 });
      assert.equal(read.ok, false);
      if (!read.ok) assert.equal(read.error.name, "NotCapable");
      const found = await member.call({
        op: "findInFiles",
        paths: ["/etc/passwd", join(ws, "in.txt")],
        needle: new TextEncoder().encode("root"),
        maxBytes: 1024,
        maxLines: 10,
        lineChars: 100,
        hashWanted: new Uint8Array(2),
      });
      assert.ok(found.ok);
      if (!found.ok) continue;
      assert.deepEqual([...found.value.status], [FIND.unreadable, FIND.matched]);
      assert.deepEqual(found.value.errors, [{ index: 0, name: "NotCapable" }]);
      const write = await member.call({
        op: "write",
        path: "/tmp/bb-pool-escape.txt",
        within: await folderOf("/tmp/bb-pool-escape.txt"),
        bytes: new Uint8Array([1]),
        makeParents: false,
      });
      assert.equal(write.ok, false);
      if (!write.ok) assert.equal(write.error.name, "NotCapable");
    }
  });
});

Deno.test("worker pool: stopping the first worker stops the whole pool", async () => {
  await withPool(2, async (w) => {
    const [first, second] = w.pool;
    first.terminate();
    const r = await second.call({ op: "stat", path: "/" });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.name, "Terminated");
  });
});

Deno.test("worker pool: a worker started alone is its own pool, as before", async () => {
  await withPool(1, async (w, ws) => {
    assert.deepEqual(w.pool, [w]);
    const r = await w.call({ op: "stat", path: ws });
    assert.ok(r.ok);
  });
});

Deno.test("worker pool: fanout sends to the least busy worker", async () => {
  await withPool(2, async (w, ws) => {
    const [first, second] = w.pool;
    const busy = first.call({ op: "stat", path: ws });
    assert.equal(first.pending, 1);
    const sent = fanout(w.pool, { op: "stat", path: ws });
    assert.equal(second.pending, 1);
    assert.ok((await sent).ok);
    assert.ok((await busy).ok);
  });
});

Deno.test("worker pool: two workers by default, one per core up to three", () => {
  assert.equal(poolSize(1), 2);
  assert.equal(poolSize(2), 2);
  assert.equal(poolSize(3), 3);
  assert.equal(poolSize(64), 3);
  assert.equal(poolSize(Number.NaN), 2);
});

Deno.test("worker pool: a helper that died is passed over, so the work still gets done", async () => {
  await withPool(3, async (w, ws) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "x");
    const [, second, third] = w.pool;
    second.terminate();
    third.terminate();
    assert.equal(second.alive, false);
    // Sent together, so the live worker is busy and a dead one looks least busy.
    const all = await Promise.all(
      Array.from({ length: 5 }, () => fanout(w.pool, { op: "readDirs", paths: [ws] })),
    );
    for (const listed of all) assert.equal(listed.ok, true, JSON.stringify(listed));
  });
});

Deno.test("worker pool: with every worker dead, the request is answered with the error", async () => {
  await withPool(2, async (w, ws) => {
    for (const member of [...w.pool].reverse()) member.terminate();
    const listed = await fanout(w.pool, { op: "readDirs", paths: [ws] });
    assert.equal(listed.ok, false);
    if (!listed.ok) assert.equal(listed.error.name, "Terminated");
  });
});
