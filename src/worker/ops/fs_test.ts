import assert from "node:assert/strict";
import { join } from "node:path";
import { read, readCapped, readDirsPacked, readMany, readWithStat } from "./fs.ts";
import { EffectWorker } from "../client.ts";

async function withDir(fn: (dir: string) => Promise<void> | void) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-fs-ops-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Every entry as [name, kind]: f for a file, unless the packed kinds say otherwise. */
function unpack(names: string, kinds: string): [string, string][] {
  const list = names === "" ? [] : names.split("\0");
  assert.deepEqual(list, [...list].sort(), "sorted by code units");
  const special = new Map<string, string>();
  const pairs = kinds === "" ? [] : kinds.split("\0");
  for (let i = 0; i < pairs.length; i += 2) special.set(pairs[i], pairs[i + 1]);
  for (const name of special.keys()) assert.ok(list.includes(name), name);
  return list.map((n): [string, string] => [n, special.get(n) ?? "f"]);
}

Deno.test("readDirsPacked: every name, however odd, comes back whole with its kind", async () => {
  await withDir(async (dir) => {
    const odd = ["a\nb", "tab\there", "ä", "\u202Eevil", "x y", "\u{1F600}"];
    for (const name of odd) await Deno.writeTextFile(join(dir, name), "");
    await Deno.mkdir(join(dir, "sub"));
    await Deno.symlink("sub", join(dir, "link"));
    await Deno.mkdir(join(dir, "empty"));
    const r = readDirsPacked([dir, join(dir, "empty"), join(dir, "missing"), join(dir, "sub")]);
    assert.deepEqual(
      unpack(r.names[0], r.kinds[0]),
      [
        ...odd.map((n): [string, string] => [n, "f"]),
        ["empty", "d"],
        ["link", "l"],
        ["sub", "d"],
      ].sort(([a], [b]) => a < b ? -1 : 1),
    );
    assert.deepEqual([r.names[1], r.kinds[1], r.errors[1]], ["", "", null]);
    assert.deepEqual([r.names[2], r.kinds[2]], ["", ""]);
    assert.match(r.errors[2] ?? "", /^NotFound/);
    assert.deepEqual([r.names[3], r.errors[3]], ["", null], "an error does not spill over");
    assert.equal(r.errors[0], null);
  });
});

Deno.test("readWithStat: a small file's bytes and stat; nothing read past the limit or off a file", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "small"), "hello\n");
    await Deno.writeTextFile(join(dir, "big"), "x".repeat(100));
    await Deno.mkdir(join(dir, "d"));
    const small = readWithStat(join(dir, "small"), 100);
    assert.equal(small.stat.kind, "file");
    assert.equal(small.stat.size, 6);
    assert.equal(new TextDecoder().decode(small.bytes!), "hello\n");
    const big = readWithStat(join(dir, "big"), 99);
    assert.deepEqual([big.stat.kind, big.stat.size, big.bytes], ["file", 100, null]);
    assert.equal(readWithStat(join(dir, "big"), 100).bytes?.length, 100, "the limit is inclusive");
    const d = readWithStat(join(dir, "d"), 100);
    assert.deepEqual([d.stat.kind, d.bytes], ["directory", null]);
    assert.throws(() => readWithStat(join(dir, "missing"), 100), Deno.errors.NotFound);
  });
});

Deno.test("readWithStat: a FIFO is stat'ed, never opened (opening it would block)", async () => {
  if (Deno.build.os === "windows") return;
  await withDir(async (dir) => {
    const fifo = join(dir, "pipe");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    const r = readWithStat(fifo, 100);
    assert.deepEqual([r.stat.kind, r.bytes], ["other", null]);
  });
});

Deno.test("effect worker: read with stat and packed readDirs cross the wall, and the wall holds", async () => {
  await withDir(async (ws) => {
    const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-fs-ops-s-" }));
    const worker = EffectWorker.start({ workspace: ws, scratch, run: false });
    try {
      await Deno.writeTextFile(join(ws, "f.txt"), "bytes");
      const read = await worker.call({
        op: "read",
        path: join(ws, "f.txt"),
        withStat: true,
        maxBytes: 10,
      });
      assert.ok(read.ok);
      if (read.ok) {
        assert.equal(read.value.stat.size, 5);
        assert.equal(new TextDecoder().decode(read.value.bytes!), "bytes");
      }
      const listed = await worker.call({ op: "readDirs", paths: [ws, "/etc"], packed: true });
      assert.ok(listed.ok);
      if (listed.ok) {
        assert.deepEqual([listed.value.names[0], listed.value.kinds[0]], ["f.txt", ""]);
        assert.equal(listed.value.names[1], "");
        assert.match(listed.value.errors[1] ?? "", /^NotCapable/);
      }
      const outside = await worker.call({
        op: "read",
        path: "/etc/passwd",
        withStat: true,
        maxBytes: 1e6,
      });
      assert.equal(outside.ok, false);
      if (!outside.ok) assert.equal(outside.error.name, "NotCapable");
    } finally {
      worker.terminate();
      await Deno.remove(scratch, { recursive: true });
    }
  });
});

Deno.test("a whole-file read stops one byte past its bound, however big the file or its stat", async () => {
  await withDir(async (dir) => {
    const big = join(dir, "big");
    await Deno.writeTextFile(big, "");
    await Deno.truncate(big, 256 * 1024 * 1024); // sparse: no disk
    assert.equal((await read(big, { maxBytes: 1000 })).bytes.length, 1001);
    // A stat taken when the file was small: the cap, not the stale size, bounds the read.
    assert.equal(readCapped(big, 100_000, 10).bytes.length, 100_001);
    assert.deepEqual(readMany([big], 1000), [{ path: big, skipped: "too_big", size: 268435456 }]);
    await Deno.writeTextFile(join(dir, "small"), "hello");
    assert.equal(
      new TextDecoder().decode((await read(join(dir, "small"), { maxBytes: 5 })).bytes),
      "hello",
    );
    assert.equal(readCapped(join(dir, "small"), 5, 1_000_000).bytes.length, 5);
  });
});
