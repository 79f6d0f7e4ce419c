/**
 * The worker's `remove` (ops/fs.ts), which `/undo` uses to take away a file the session created,
 * asked directly with the policy layer skipped, on both walls: it removes only a regular file
 * that still holds the bytes it was told; a link in the file's place is neither followed nor
 * removed, a folder in its place or swapped in above it is refused, and nothing outside the
 * workspace is ever removed. Where bwrap does not work the kernel wall's tests skip and say why —
 * except in CI, which installs bwrap: there they fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus, type Wall } from "./client.ts";
import { sha256 } from "../util/hash.ts";
import { startFlipper } from "../../test/support/flipper.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
const kernel = kernelWallStatus();
if (!kernel.usable && !inCi) console.log(`remove: kernel wall tests skipped: ${kernel.why}`);

const BYTES = new TextEncoder().encode("made by the session\n");
const HASH = sha256(BYTES);

interface Box {
  ws: string;
  outside: string;
}

async function withWall(wall: Wall, fn: (w: EffectWorker, box: Box) => Promise<void>) {
  const real = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const box = { ws: await real("bb-rm-ws-"), outside: await real("bb-rm-outside-") };
  const scratch = await real("bb-rm-scratch-");
  // The outside file holds the very bytes expected: only the walls stand in the way.
  await Deno.writeFile(join(box.outside, "f.txt"), BYTES);
  const worker = EffectWorker.start({ workspace: box.ws, scratch, run: false }, 1, wall);
  try {
    assert.equal(worker.wall, wall);
    await fn(worker, box);
  } finally {
    await worker.terminate();
    for (const d of [box.ws, box.outside, scratch]) await Deno.remove(d, { recursive: true });
  }
}

async function exists(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch {
    return null;
  }
}

for (const wall of ["kernel", "process"] as const) {
  const ignore = wall === "kernel" && !kernel.usable && !inCi;
  const test = (name: string, fn: (w: EffectWorker, box: Box) => Promise<void>) =>
    Deno.test({ name: `remove (${wall} wall): ${name}`, ignore, fn: () => withWall(wall, fn) });

  test("a regular file goes only while it holds the expected bytes", async (w, { ws }) => {
    const path = join(ws, "f.txt");
    await Deno.writeFile(path, BYTES);
    const wrong = await w.call({
      op: "remove",
      path,
      within: await folderOf(path),
      expectSha256: sha256(new Uint8Array(1)),
    });
    assert.ok(!wrong.ok && wrong.error.name === "Changed", JSON.stringify(wrong));
    assert.ok((await exists(path))?.isFile, "a file that changed was removed");
    const right = await w.call({
      op: "remove",
      path,
      within: await folderOf(path),
      expectSha256: HASH,
    });
    assert.ok(right.ok, JSON.stringify(right));
    assert.equal(await exists(path), null);
  });

  test("a link in the file's place is neither followed nor removed", async (w, { ws, outside }) => {
    await Deno.writeFile(join(ws, "real.txt"), BYTES);
    for (const target of [join(outside, "f.txt"), join(ws, "real.txt"), "real.txt"]) {
      const path = join(ws, "f.txt");
      await Deno.symlink(target, path);
      const r = await w.call({
        op: "remove",
        path,
        within: await folderOf(path),
        expectSha256: HASH,
      });
      assert.equal(r.ok, false, `removed through a link to ${target}`);
      assert.ok((await exists(path))?.isSymlink, `the link to ${target} was removed`);
      await Deno.remove(path);
    }
    assert.ok((await exists(join(outside, "f.txt")))?.isFile, "the outside file was removed");
    assert.ok((await exists(join(ws, "real.txt")))?.isFile, "the link's target was removed");
  });

  test("a folder in the file's place is refused and stays", async (w, { ws }) => {
    const path = join(ws, "f.txt");
    await Deno.mkdir(path);
    await Deno.writeFile(join(path, "inner.txt"), BYTES);
    const r = await w.call({
      op: "remove",
      path,
      within: await folderOf(path),
      expectSha256: HASH,
    });
    assert.equal(r.ok, false);
    assert.ok((await exists(join(path, "inner.txt")))?.isFile, "the folder was removed");
  });

  test("a folder above swapped for a link outside is refused", async (w, { ws, outside }) => {
    await Deno.symlink(outside, join(ws, "d"));
    const r = await w.call({
      op: "remove",
      path: join(ws, "d", "f.txt"),
      within: await folderOf(join(ws, "d", "f.txt")),
      expectSha256: HASH,
    });
    assert.equal(r.ok, false);
    assert.ok((await exists(join(outside, "f.txt")))?.isFile, "removed a file outside");
  });
}

// Racing the worker: a process swaps the file's folder for a link outside and back while the
// worker is asked to remove the file in it. On the kernel wall outside does not exist for the
// worker at all, so no interleaving can reach it. (On the process wall the in-process checks are
// the only backstop, and a continuously racing process can beat them: docs/trust.md.)
Deno.test({
  name:
    "remove (kernel wall): a folder swapped for a link outside mid-remove never removes outside",
  ignore: !kernel.usable && !inCi,
  fn: () =>
    withWall("kernel", async (w, { ws, outside }) => {
      await Deno.mkdir(join(ws, "d"));
      const { done } = startFlipper(ws, outside);
      let finished = false;
      done.then(() => finished = true);
      let removed = 0, calls = 0;
      const inside = join(ws, "d", "f.txt");
      while (!finished) {
        // Put the file back in the real folder (wherever it is now), then ask for it to go.
        for (const dir of ["d", "d.real"]) {
          const info = await exists(join(ws, dir));
          if (info?.isDirectory) {
            await Deno.writeFile(join(ws, dir, "f.txt"), BYTES).catch(() => {});
          }
        }
        // Resolved as the policy layer would just before asking; mid-flip it may not resolve,
        // and the policy layer would not ask.
        const within = await folderOf(inside).catch(() => null);
        if (within === null) continue;
        const r = await w.call({ op: "remove", path: inside, within, expectSha256: HASH });
        calls++;
        if (r.ok) removed++;
        assert.ok((await exists(join(outside, "f.txt")))?.isFile, "a file outside was removed");
      }
      const flips = await done;
      console.log(`remove race: ${flips} flips, ${calls} removes asked, ${removed} done inside`);
      assert.ok(flips > 0 && calls > 0);
    }),
});
