/**
 * The second wall on its own: these tests skip the policy layer entirely and ask the effect
 * worker for things only Deno's permissions stand in the way of.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EarlyWorker, EffectWorker } from "./client.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

async function withWorker(
  fn: (w: EffectWorker, ws: string, scratch: string) => Promise<void>,
  wall: "auto" | "process" = "auto",
) {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-ws-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-scratch-" }));
  const worker = EffectWorker.start({ workspace: ws, scratch, run: true }, 1, wall);
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
        within: await folderOf(target),
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
      within: await folderOf(path),
      bytes: new TextEncoder().encode("hi"),
      makeParents: false,
      expectSha256: null,
    });
    assert.equal(wrote.ok, true);
    const r = await w.call({ op: "read", path, maxBytes: 1 << 20 });
    assert.equal(r.ok && new TextDecoder().decode(r.value.bytes), "hi");
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
      within: await folderOf(path),
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
      within: await folderOf(path),
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

Deno.test("second wall: links inside the workspace to outside are refused by the worker's own checks (OutsideWall), through a narrowed worker", async () => {
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-outside-" }));
  try {
    await Deno.writeTextFile(join(outside, "secret.txt"), "OUTSIDE hit\n");
    await withWorker(async (w, ws, scratch) => {
      await Deno.symlink(join(outside, "secret.txt"), join(ws, "link"));
      await Deno.symlink(outside, join(ws, "dlink"));
      await Deno.symlink(outside, join(scratch, "dlink"));
      const paths = [join(ws, "link"), join(ws, "dlink", "secret.txt")];
      const refused = (r: { ok: boolean; error?: { name: string; message: string } }) => {
        assert.equal(r.ok, false);
        assert.equal(r.error?.name, "OutsideWall");
        assert.ok(!r.error?.message.includes(outside), "no path in the message");
      };
      for (const path of [...paths, join(scratch, "dlink", "secret.txt")]) {
        refused(await w.call({ op: "read", path, maxBytes: 100 }));
        refused(await w.call({ op: "read", path, length: 100 }));
        refused(await w.call({ op: "read", path, withStat: true, maxBytes: 100 }));
        refused(await w.call({ op: "hash", path }));
        refused(await w.call({ op: "stat", path }));
      }
      refused(await w.call({ op: "lstat", path: join(ws, "dlink", "secret.txt") }));
      const many = await w.call({ op: "readMany", paths, maxBytes: 100 });
      assert.deepEqual(many.ok && many.value.map((i) => i.error), ["OutsideWall", "OutsideWall"]);
      const found = await w.call({
        op: "findInFiles",
        paths,
        needle: new TextEncoder().encode("hit"),
        maxBytes: 100,
        maxLines: 10,
        lineChars: 100,
        hashWanted: new Uint8Array(2),
      });
      assert.ok(found.ok);
      if (found.ok) {
        assert.deepEqual(found.value.errors.map((e) => e.name), ["OutsideWall", "OutsideWall"]);
        assert.equal(found.value.texts, "");
      }
      const listed = await w.call({ op: "readDirs", paths: [join(ws, "dlink")], packed: true });
      assert.match(listed.ok ? listed.value.errors[0] ?? "" : "", /^OutsideWall: /);
      refused(await w.call({ op: "snapshot", root: join(ws, "dlink"), skip: [], maxEntries: 10 }));
      for (const path of [join(ws, "link"), join(ws, "dlink", "new.txt")]) {
        refused(
          await w.call({
            op: "write",
            path,
            within: await folderOf(path),
            bytes: new TextEncoder().encode("x"),
            makeParents: true,
          }),
        );
      }
      assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
      assert.equal(await Deno.readTextFile(join(outside, "secret.txt")), "OUTSIDE hit\n");
      // What lies inside, reached through a link inside, is still read.
      await Deno.writeTextFile(join(ws, "real.txt"), "inside");
      await Deno.symlink(join(ws, "real.txt"), join(ws, "inner"));
      const inner = await w.call({ op: "read", path: join(ws, "inner"), maxBytes: 100 });
      assert.equal(inner.ok && new TextDecoder().decode(inner.value.bytes), "inside");
    }, "process"); // the in-process wall's own checks; the kernel wall is kernel_test.ts
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("second wall: an effect worker started with read permission everywhere refuses every path", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-ws-" }));
  const worker = new Worker(new URL("./effect_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: "inherit" },
  });
  try {
    await Deno.writeTextFile(join(ws, "a.txt"), "a");
    const reply = await new Promise<{ ok: boolean; error?: { name: string } }>((resolve) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.postMessage({ id: 0, request: { op: "read", path: join(ws, "a.txt"), maxBytes: 9 } });
    });
    assert.equal(reply.ok, false);
    assert.equal(reply.error?.name, "OutsideWall");
  } finally {
    worker.terminate();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("second wall: an early Worker is taken over only with the same permissions", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-ws-" }));
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-other-" }));
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-scratch-" }));
  try {
    await Deno.writeTextFile(join(ws, "a.txt"), "in the workspace\n");
    await Deno.writeTextFile(join(other, "b.txt"), "in another folder\n");
    for (const wall of ["process", "auto"] as const) {
      // Started for another folder (a session opened elsewhere): not used, so `other` stays out
      // of reach, and the workspace is within it.
      const stray = new EarlyWorker({ workspace: other, scratch, run: true });
      const w = EffectWorker.start({ workspace: ws, scratch, run: true }, 1, wall, stray);
      try {
        const outside = await w.call({ op: "read", path: join(other, "b.txt"), maxBytes: 1024 });
        assert.equal(outside.ok, false, wall);
        if (!outside.ok) assert.equal(outside.error.name, "NotCapable");
        const inside = await w.call({ op: "read", path: join(ws, "a.txt"), maxBytes: 1024 });
        assert.equal(inside.ok, true, `${wall}: ${JSON.stringify(inside)}`);
      } finally {
        await w.terminate();
      }
      // Started for this workspace: taken over, and it answers as the Worker it stands in for
      // (the process wall's every call; the kernel wall's runs).
      const early = new EarlyWorker({ workspace: ws, scratch, run: true });
      const v = EffectWorker.start({ workspace: ws, scratch, run: true }, 1, wall, early);
      try {
        const inside = await v.call({ op: "read", path: join(ws, "a.txt"), maxBytes: 1024 });
        assert.equal(inside.ok, true, `${wall}: ${JSON.stringify(inside)}`);
        const outside = await v.call({ op: "read", path: join(other, "b.txt"), maxBytes: 1024 });
        assert.equal(outside.ok, false, wall);
      } finally {
        await v.terminate();
      }
    }
  } finally {
    for (const d of [ws, other, scratch]) await Deno.remove(d, { recursive: true });
  }
});
