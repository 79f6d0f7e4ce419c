import assert from "node:assert/strict";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { hashRegularFile, readRegularFile, setBeforeOpenHook } from "./regular_file.ts";

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-regular-" }));
  try {
    await fn(dir);
  } finally {
    setBeforeOpenHook(null);
    await Deno.remove(dir, { recursive: true });
  }
}

async function mkfifo(path: string): Promise<void> {
  assert.equal((await new Deno.Command("mkfifo", { args: [path] }).output()).code, 0);
}

const text = (r: ReturnType<typeof readRegularFile>) =>
  r.kind === "read" ? new TextDecoder().decode(r.bytes) : r;

Deno.test("regular file: a regular file is read whole, a missing one (or a missing folder) is missing", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(join(dir, "a"));
    await Deno.writeTextFile(join(dir, "a/f.json"), "{}");
    assert.equal(text(readRegularFile(dir, "a/f.json", 16)), "{}");
    assert.deepEqual(readRegularFile(dir, "a/none.json", 16), { kind: "missing" });
    assert.deepEqual(readRegularFile(dir, "b/f.json", 16), { kind: "missing" });
    // A file where a folder was expected: nothing there by that name.
    assert.deepEqual(readRegularFile(dir, "a/f.json/x", 16), { kind: "missing" });
  });
});

Deno.test("regular file: at most maxBytes; one more is refused, not cut", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "f"), "x".repeat(1024));
    assert.equal(text(readRegularFile(dir, "f", 1024)), "x".repeat(1024));
    const over = readRegularFile(dir, "f", 1023);
    assert.equal(over.kind, "refused");
    assert.match((over as { why: string }).why, /larger than 1023 bytes/);
    assert.match((readRegularFile(dir, "f", 512) as { why: string }).why, /larger than 0\.5|512/);
  });
});

Deno.test("regular file (adversarial): FIFOs, devices and links are refused without being read", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "real.json"), "{}");
    await mkfifo(join(dir, "fifo"));
    await Deno.symlink("/dev/zero", join(dir, "zero"));
    await Deno.symlink("real.json", join(dir, "inside"));
    await Deno.symlink("fifo", join(dir, "to-fifo"));
    await Deno.mkdir(join(dir, "d"));
    await Deno.symlink("d", join(dir, "linked-dir"));
    await Deno.writeTextFile(join(dir, "d/c.json"), "{}");
    const why = (rel: string) => {
      const r = readRegularFile(dir, rel, 1024);
      assert.equal(r.kind, "refused", rel);
      return (r as { why: string }).why;
    };
    assert.match(why("fifo"), /is not a regular file/);
    assert.match(why("zero"), /is a symbolic link/);
    assert.match(why("inside"), /is a symbolic link/);
    assert.match(why("to-fifo"), /is a symbolic link/);
    assert.match(why("linked-dir/c.json"), /inside a symbolic link \(linked-dir\/\)/);
    assert.match(why("d"), /is not a regular file/);
    assert.equal(hashRegularFile(dir, "fifo").kind, "refused");
    assert.equal(hashRegularFile(dir, "zero").kind, "refused");
  });
});

Deno.test("regular file (adversarial): a file swapped between the look and the open is refused", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "other.json"), '{"other": true}');
    await mkfifo(join(dir, "fifo"));
    for (const swapIn of ["other.json", "fifo", "/dev/zero"]) {
      const path = join(dir, "c.json");
      await Deno.writeTextFile(path, "{}");
      setBeforeOpenHook((p) => {
        Deno.removeSync(p);
        Deno.symlinkSync(swapIn, p);
      });
      const r = readRegularFile(dir, "c.json", 1024);
      setBeforeOpenHook(null);
      assert.equal(r.kind, "refused", swapIn);
      assert.match((r as { why: string }).why, /changed while it was opened/);
      await Deno.remove(path);
    }
    // A second regular file renamed over it: the same kind, another inode.
    await Deno.writeTextFile(join(dir, "c.json"), "{}");
    setBeforeOpenHook((p) => Deno.renameSync(join(dir, "other.json"), p));
    assert.match(
      (readRegularFile(dir, "c.json", 1024) as { why: string }).why,
      /changed while it was opened/,
    );
  });
});

Deno.test("regular file: the hash is the SHA-256 of the bytes, read in chunks", async () => {
  await withDir(async (dir) => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i % 251);
    await Deno.writeFile(join(dir, "prog"), bytes);
    const r = hashRegularFile(dir, "prog");
    assert.deepEqual(r, { kind: "hash", hex: createHash("sha256").update(bytes).digest("hex") });
  });
});
