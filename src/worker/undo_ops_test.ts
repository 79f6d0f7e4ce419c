/**
 * The worker's side of `/undo` (issue 27): a write may be given the mode to restore, of which only
 * the permission bits are ever set; `readMany` reports each file's permission bits; `makeDir`
 * makes an empty folder again, inside the wall only.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker } from "./client.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

async function withWorker(fn: (w: EffectWorker, ws: string, outside: string) => Promise<void>) {
  const real = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const [ws, scratch, outside] = [
    await real("bb-undo-ops-ws-"),
    await real("bb-undo-ops-scratch-"),
    await real("bb-undo-ops-outside-"),
  ];
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false }, 1);
  try {
    await fn(worker, ws, outside);
  } finally {
    await worker.terminate();
    for (const d of [ws, scratch, outside]) await Deno.remove(d, { recursive: true });
  }
}

const bytes = new TextEncoder().encode("#!/bin/sh\n");
const modeOf = async (path: string) => (await Deno.lstat(path)).mode! & 0o7777;

Deno.test("undo ops: a write given a mode sets its permission bits, never setuid, setgid or sticky", async () => {
  await withWorker(async (w, ws) => {
    const path = join(ws, "tool.sh");
    const made = await w.call({
      op: "write",
      path,
      within: await folderOf(path),
      bytes,
      makeParents: false,
      mode: 0o7755,
    });
    assert.ok(made.ok, made.ok ? "" : made.error.message);
    assert.equal(await modeOf(path), 0o755);
    // Over an existing file too, whatever its mode was.
    await Deno.chmod(path, 0o4755);
    const again = await w.call({
      op: "write",
      path,
      within: await folderOf(path),
      bytes,
      makeParents: false,
      mode: 0o640,
    });
    assert.ok(again.ok);
    assert.equal(await modeOf(path), 0o640);
    const read = await w.call({ op: "readMany", paths: [path], maxBytes: 100, followLinks: false });
    assert.ok(read.ok);
    assert.equal(read.value[0].mode, 0o640);
  });
});

Deno.test("undo ops: makeDir makes a folder and those above it, leaves one there, refuses a file", async () => {
  await withWorker(async (w, ws) => {
    const deep = join(ws, "a/b/c");
    assert.ok((await w.call({ op: "makeDir", path: deep, within: await folderOf(deep) })).ok);
    assert.ok((await Deno.lstat(deep)).isDirectory);
    assert.ok(
      (await w.call({ op: "makeDir", path: deep, within: await folderOf(deep) })).ok,
      "a folder there already",
    );
    await Deno.writeTextFile(join(ws, "f"), "a file\n");
    assert.equal(
      (await w.call({ op: "makeDir", path: join(ws, "f"), within: await folderOf(join(ws, "f")) }))
        .ok,
      false,
    );
    assert.equal(await Deno.readTextFile(join(ws, "f")), "a file\n");
  });
});

Deno.test("undo ops: makeDir never makes a folder outside the workspace, by path or through a link", async () => {
  await withWorker(async (w, ws, outside) => {
    await Deno.symlink(outside, join(ws, "out"));
    for (const path of [join(outside, "made"), join(ws, "out/made"), join(ws, "../made-above")]) {
      const r = await w.call({ op: "makeDir", path, within: await folderOf(path) });
      assert.equal(r.ok, false, path);
    }
    assert.deepEqual([...Deno.readDirSync(outside)], []);
    await assert.rejects(Deno.lstat(join(ws, "../made-above")), Deno.errors.NotFound);
  });
});
