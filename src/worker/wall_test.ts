/**
 * The second wall on its own: these tests skip the policy layer entirely and ask the effect
 * worker for things only Deno's permissions stand in the way of.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker } from "./client.ts";

async function withWorker(fn: (w: EffectWorker, ws: string, scratch: string) => Promise<void>) {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-ws-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-scratch-" }));
  const worker = EffectWorker.start({ workspace: ws, scratch, run: true });
  try {
    await fn(worker, ws, scratch);
  } finally {
    await worker.terminate();
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
  }
}

Deno.test("second wall: reading /etc/passwd is refused by Deno", async () => {
  await withWorker(async (w) => {
    const r = await w.call({ op: "read", path: "/etc/passwd", maxBytes: 1 << 20 });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.name, "NotCapable");
  });
});

Deno.test("second wall: writing outside the workspace is refused and nothing appears", async () => {
  const outside = await Deno.makeTempDir({ prefix: "bb-wall-outside-" });
  try {
    await withWorker(async (w) => {
      const target = join(outside, "escaped.txt");
      const r = await w.call({
        op: "write",
        path: target,
        bytes: new TextEncoder().encode("x"),
        makeParents: false,
      });
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error.name, "NotCapable");
      await assert.rejects(Deno.stat(target), Deno.errors.NotFound);
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("second wall: opening a network socket is refused by Deno", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await withWorker(async (w) => {
      const r = await w.call({
        op: "probe",
        what: "net",
        target: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
      });
      assert.equal(r.ok, true);
      if (r.ok) assert.equal(r.value.refused, true, r.value.error ?? "");
      if (r.ok) assert.match(r.value.error ?? "", /^NotCapable/);
    });
  } finally {
    listener.close();
  }
});

Deno.test("second wall: reading an environment variable is refused by Deno", async () => {
  await withWorker(async (w) => {
    const r = await w.call({ op: "probe", what: "env", target: "HOME" });
    assert.equal(r.ok, true);
    if (r.ok) assert.equal(r.value.refused, true, r.value.error ?? "");
    // The tests run without --ignore-env, so Deno itself must say no, not just hide the value.
    if (r.ok) assert.match(r.value.error ?? "", /^NotCapable/);
  });
});

Deno.test("second wall: the workspace itself is readable and writable", async () => {
  await withWorker(async (w, ws) => {
    const path = join(ws, "a.txt");
    const wrote = await w.call({
      op: "write",
      path,
      bytes: new TextEncoder().encode("hi"),
      makeParents: false,
      expectSha256: null,
    });
    assert.equal(wrote.ok, true);
    const r = await w.call({ op: "read", path, maxBytes: 1 << 20 });
    assert.equal(r.ok && new TextDecoder().decode(r.value), "hi");
  });
});

Deno.test("effect worker: an overwrite keeps permission bits but never setuid or setgid", async () => {
  if (Deno.build.os === "windows") return;
  await withWorker(async (w, ws) => {
    const path = join(ws, "tool.sh");
    await Deno.writeTextFile(path, "old");
    await Deno.chmod(path, 0o6755);
    const wrote = await w.call({
      op: "write",
      path,
      bytes: new TextEncoder().encode("new"),
      makeParents: false,
    });
    assert.equal(wrote.ok, true);
    assert.equal((await Deno.stat(path)).mode! & 0o7777, 0o755);
  });
});

Deno.test("effect worker: a write refuses when the file changed after approval", async () => {
  await withWorker(async (w, ws) => {
    const path = join(ws, "a.txt");
    await Deno.writeTextFile(path, "changed");
    const r = await w.call({
      op: "write",
      path,
      bytes: new TextEncoder().encode("x"),
      makeParents: false,
      expectSha256: "0".repeat(64),
    });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.name, "Changed");
    assert.equal(await Deno.readTextFile(path), "changed");
    const leftovers = [...Deno.readDirSync(ws)].map((e) => e.name);
    assert.deepEqual(leftovers, ["a.txt"], "no temporary file is left");
  });
});
