/**
 * The worker's own containment checks (wall.ts), on the operations directly: a link placed
 * before an operation and pointing outside is refused, and so is one swapped in exactly once
 * between the check and the act (the swap hook); nothing outside is read or written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  hash,
  read,
  readCapped,
  readDirs,
  readDirsPacked,
  readMany,
  readWithStat,
  stat,
  write,
} from "./fs.ts";
import { findInFiles } from "./search.ts";
import { snapshotTree } from "./snapshot.ts";
import { setRoots, setSwapHook, type SwapStage } from "./wall.ts";
import type { FindInFilesRequest } from "../search_protocol.ts";
import { folderOf } from "../../../test/support/resolved_folder.ts";

const SECRET = "OUTSIDE-SECRET";
const enc = new TextEncoder();
const dec = new TextDecoder();

interface Places {
  ws: string;
  out: string;
}

/**
 * A workspace (the only root) with `f.txt` and `d/f.txt`, and an outside folder with
 * `secret.txt` and `sub/f.txt` (same name as the inside one) and `sub/only-outside.txt`.
 */
async function withPlaces(fn: (p: Places) => Promise<void> | void) {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-ws-" }));
  const out = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-wall-out-" }));
  try {
    await Deno.writeTextFile(join(ws, "f.txt"), "inside hit\n");
    await Deno.mkdir(join(ws, "d"));
    await Deno.writeTextFile(join(ws, "d", "f.txt"), "inside hit\n");
    await Deno.writeTextFile(join(out, "secret.txt"), `${SECRET} hit\n`);
    await Deno.mkdir(join(out, "sub"));
    await Deno.writeTextFile(join(out, "sub", "f.txt"), `${SECRET} hit\n`);
    await Deno.writeTextFile(join(out, "sub", "only-outside.txt"), `${SECRET} hit\n`);
    setRoots([ws]);
    await fn({ ws, out });
  } finally {
    setSwapHook(null);
    setRoots(null);
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(out, { recursive: true });
  }
}

/** The outside folder, every file with its bytes: to show nothing there changed. */
function outsideState(out: string): string[] {
  const found: string[] = [];
  const visit = (dir: string, rel: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) {
        found.push(`${r}/`);
        visit(join(dir, e.name), r);
      } else found.push(`${r}=${Deno.readTextFileSync(join(dir, e.name))}`);
    }
  };
  visit(out, "");
  return found.sort();
}

function isOutsideWall(e: unknown, ...paths: string[]): boolean {
  assert.ok(e instanceof Error, String(e));
  assert.equal(e.name, "OutsideWall", `${e.name}: ${e.message}`);
  for (const p of paths) assert.ok(!e.message.includes(p), "the message carries no path");
  return true;
}

/**
 * Once, at the first act of `stage` on the real path `at`: `swap` (the file itself, or a folder
 * above it) is renamed away and becomes a link to `to`.
 */
function swapAt(stage: SwapStage, at: string, swap: string, to: string): () => boolean {
  let fired = false;
  setSwapHook((s, real) => {
    if (fired || s !== stage || real !== at) return;
    fired = true;
    Deno.renameSync(swap, `${swap}.orig`);
    Deno.symlinkSync(to, swap);
  });
  return () => fired;
}

function search(paths: string[]): FindInFilesRequest {
  return {
    op: "findInFiles",
    paths,
    needle: enc.encode("hit"),
    maxBytes: 1 << 20,
    maxLines: 100,
    lineChars: 200,
    hashWanted: new Uint8Array(paths.length).fill(1),
  };
}

// ---- (1) a link placed before the operation, pointing outside ----

Deno.test("wall: every read of a link placed to an outside file, or through an outside folder, is OutsideWall", async () => {
  await withPlaces(async ({ ws, out }) => {
    await Deno.symlink(join(out, "secret.txt"), join(ws, "link"));
    await Deno.symlink(join(out, "sub"), join(ws, "dlink"));
    const before = outsideState(out);
    for (const path of [join(ws, "link"), join(ws, "dlink", "f.txt")]) {
      const no = (e: unknown) => isOutsideWall(e, path, out);
      assert.throws(() => read(path, { length: 100 }), no, "range");
      assert.throws(() => read(path, { offset: 2, length: 100 }), no, "range at an offset");
      assert.throws(() => read(path, { maxBytes: 100 }), no, "capped");
      assert.throws(() => readCapped(path, 100), no, "readCapped");
      assert.throws(() => readWithStat(path, 100), no, "withStat");
      await assert.rejects(hash(path), no, "hash");
      assert.throws(() => stat(path, true), no, "stat");
      const [item] = readMany([path], 100);
      assert.deepEqual(item, { path, skipped: "error", error: "OutsideWall" });
      const found = await findInFiles(search([path]));
      assert.deepEqual(found.errors, [{ index: 0, name: "OutsideWall" }]);
      assert.equal(found.texts, "");
    }
    // lstat of the link itself is inside; lstat of an entry through the outside folder is not.
    assert.equal(stat(join(ws, "link"), false).kind, "symlink");
    assert.throws(() => stat(join(ws, "dlink", "f.txt"), false), (e) => isOutsideWall(e));
    assert.deepEqual(outsideState(out), before);
  });
});

Deno.test("wall: listings and snapshots of an outside folder through a link are OutsideWall", async () => {
  await withPlaces(async ({ ws, out }) => {
    await Deno.symlink(join(out, "sub"), join(ws, "dlink"));
    const [listed] = readDirs([join(ws, "dlink")]);
    assert.ok("error" in listed);
    assert.match(listed.error, /^OutsideWall: /);
    assert.ok(!listed.error.includes(out));
    const packed = readDirsPacked([join(ws, "dlink"), ws]);
    assert.equal(packed.names[0], "");
    assert.match(packed.errors[0] ?? "", /^OutsideWall: /);
    assert.deepEqual(packed.names[1].split("\0"), ["d", "dlink", "f.txt"], "the rest is listed");
    assert.throws(() => snapshotTree(join(ws, "dlink"), [], 100), (e) => isOutsideWall(e));
    // A snapshot of the workspace records the link as a link and never enters it.
    const snap = snapshotTree(ws, [], 100);
    assert.ok(!snap.paths.includes("only-outside"));
    assert.ok(snap.complete);
  });
});

Deno.test("wall: a write to a link placed to an outside file, or into an outside folder, is refused and nothing outside changes", async () => {
  await withPlaces(async ({ ws, out }) => {
    await Deno.symlink(join(out, "secret.txt"), join(ws, "link"));
    await Deno.symlink(join(out, "sub"), join(ws, "dlink"));
    const before = outsideState(out);
    const bytes = enc.encode("planted");
    const no = (e: unknown) => isOutsideWall(e, out);
    await assert.rejects(
      write(join(ws, "link"), bytes, undefined, false, undefined, await folderOf(join(ws, "link"))),
      no,
      "target link",
    );
    await assert.rejects(
      write(
        join(ws, "dlink", "new.txt"),
        bytes,
        null,
        false,
        undefined,
        await folderOf(join(ws, "dlink", "new.txt")),
      ),
      no,
      "parent",
    );
    await assert.rejects(
      write(
        join(ws, "dlink", "f.txt"),
        bytes,
        undefined,
        false,
        undefined,
        await folderOf(join(ws, "dlink", "f.txt")),
      ),
      no,
    );
    await assert.rejects(
      write(
        join(ws, "dlink", "a", "b", "new.txt"),
        bytes,
        null,
        true,
        undefined,
        await folderOf(join(ws, "dlink", "a", "b", "new.txt")),
      ),
      no,
      "folders made below an outside link",
    );
    assert.deepEqual(outsideState(out), before);
    assert.equal(Deno.readLinkSync(join(ws, "link")), join(out, "secret.txt"));
  });
});

// ---- (2) a link swapped in once, between the check and the act ----

Deno.test("wall: a file swapped for an outside link between check and open is refused (every read form, hash, readMany, search)", async () => {
  const forms: [string, (path: string) => unknown][] = [
    ["range", (p) => read(p, { length: 100 })],
    ["capped", (p) => read(p, { maxBytes: 100 })],
    ["readCapped", (p) => readCapped(p, 100)],
    ["withStat", (p) => readWithStat(p, 100)],
    ["hash", (p) => hash(p)],
    ["readMany", (p) => {
      const [item] = readMany([p], 100);
      if (item.error) throw Object.assign(new Error("item"), { name: item.error });
      return item;
    }],
    ["search", async (p) => {
      const r = await findInFiles(search([p]));
      assert.equal(r.texts.includes(SECRET), false);
      if (r.errors.length > 0) throw Object.assign(new Error("item"), { name: r.errors[0].name });
      return r;
    }],
  ];
  for (const [name, op] of forms) {
    for (const which of ["file", "parent"] as const) {
      await withPlaces(async ({ ws, out }) => {
        const path = which === "file" ? join(ws, "f.txt") : join(ws, "d", "f.txt");
        const fired = which === "file"
          ? swapAt("open", path, path, join(out, "secret.txt"))
          : swapAt("open", path, join(ws, "d"), join(out, "sub"));
        let error: unknown = null;
        try {
          await op(path);
        } catch (e) {
          error = e;
        }
        assert.ok(error !== null, `${name}/${which}: refused`);
        isOutsideWall(error);
        assert.ok(fired(), `${name}/${which}: the swap happened`);
      });
    }
  }
});

Deno.test("wall: a write whose file or folder is swapped for an outside link between check and act is refused; nothing outside changes", async () => {
  const cases: [string, (p: Places) => { run: () => Promise<unknown>; fired: () => boolean }][] = [
    ["existing file, at its open", ({ ws, out }) => ({
      fired: swapAt("open", join(ws, "f.txt"), join(ws, "f.txt"), join(out, "secret.txt")),
      run: async () =>
        write(
          join(ws, "f.txt"),
          enc.encode("planted"),
          undefined,
          false,
          undefined,
          await folderOf(join(ws, "f.txt")),
        ),
    })],
    ["existing file's folder, at its open", ({ ws, out }) => ({
      fired: swapAt("open", join(ws, "d", "f.txt"), join(ws, "d"), join(out, "sub")),
      run: async () =>
        write(
          join(ws, "d", "f.txt"),
          enc.encode("planted"),
          undefined,
          false,
          undefined,
          await folderOf(join(ws, "d", "f.txt")),
        ),
    })],
    ["new file's folder, at the temporary file's creation", ({ ws, out }) => {
      let fired = false;
      setSwapHook((stage) => {
        if (fired || stage !== "create") return;
        fired = true;
        Deno.renameSync(join(ws, "d"), join(ws, "d.orig"));
        Deno.symlinkSync(join(out, "sub"), join(ws, "d"));
      });
      return {
        run: async () =>
          write(
            join(ws, "d", "new.txt"),
            enc.encode("planted"),
            null,
            false,
            undefined,
            await folderOf(join(ws, "d", "new.txt")),
          ),
        fired: () => fired,
      };
    }],
    ["a folder made for the write, at its mkdir", ({ ws, out }) => ({
      fired: swapAt("mkdir", join(ws, "d", "new"), join(ws, "d"), join(out, "sub")),
      run: async () =>
        write(
          join(ws, "d", "new", "x.txt"),
          enc.encode("planted"),
          null,
          true,
          undefined,
          await folderOf(join(ws, "d", "new", "x.txt")),
        ),
    })],
  ];
  for (const [name, make] of cases) {
    await withPlaces(async (p) => {
      const before = outsideState(p.out);
      const c = make(p);
      await assert.rejects(c.run(), (e) => isOutsideWall(e, p.out), name);
      assert.ok(c.fired(), `${name}: the swap happened`);
      assert.deepEqual(outsideState(p.out), before, `${name}: nothing outside changed`);
    });
  }
});

Deno.test("wall: a folder swapped for an outside link while it is listed gives OutsideWall, not its names", async () => {
  await withPlaces(({ ws, out }) => {
    swapAt("list", join(ws, "d"), join(ws, "d"), join(out, "sub"));
    const [listed] = readDirs([join(ws, "d")]);
    assert.ok("error" in listed && listed.error.startsWith("OutsideWall: "));
    Deno.removeSync(join(ws, "d"));
    Deno.renameSync(join(ws, "d.orig"), join(ws, "d"));
    swapAt("list", join(ws, "d"), join(ws, "d"), join(out, "sub"));
    const packed = readDirsPacked([join(ws, "d")]);
    assert.deepEqual([packed.names[0], packed.kinds[0]], ["", ""]);
    assert.match(packed.errors[0] ?? "", /^OutsideWall: /);
  });
});

Deno.test("wall: a snapshot whose folder is swapped for an outside link while listed records nothing from outside and says it is partial", async () => {
  await withPlaces(({ ws, out }) => {
    swapAt("list", join(ws, "d"), join(ws, "d"), join(out, "sub"));
    const snap = snapshotTree(ws, [], 100);
    assert.ok(!snap.paths.includes("only-outside"), snap.paths);
    assert.equal(snap.complete, false);
  });
});

Deno.test("wall: without a swap, the checked operations work as before", async () => {
  await withPlaces(async ({ ws }) => {
    setSwapHook(() => {}); // called, does nothing
    const path = join(ws, "d", "f.txt");
    assert.equal(dec.decode((await read(path, { maxBytes: 100 })).bytes), "inside hit\n");
    assert.equal(dec.decode(readWithStat(path, 100).bytes!), "inside hit\n");
    assert.equal(readMany([path], 100)[0].size, 11);
    assert.equal((await findInFiles(search([path]))).found.length, 1);
    await write(
      join(ws, "d", "n", "m", "new.txt"),
      enc.encode("x"),
      null,
      true,
      undefined,
      await folderOf(join(ws, "d", "n", "m", "new.txt")),
    );
    assert.equal(await Deno.readTextFile(join(ws, "d", "n", "m", "new.txt")), "x");
    assert.deepEqual(readDirsPacked([join(ws, "d")]).names, ["f.txt\0n"]);
    assert.ok(snapshotTree(ws, [], 100).complete);
    assert.equal(stat(join(ws, "d"), true).kind, "directory");
  });
});

Deno.test("wall: readMany not following links skips a link and a path through one (inside or not)", async () => {
  await withPlaces(async ({ ws }) => {
    await Deno.symlink(join(ws, "f.txt"), join(ws, "inner-link"));
    await Deno.symlink(join(ws, "d"), join(ws, "inner-dir"));
    const paths = [join(ws, "inner-link"), join(ws, "inner-dir", "f.txt"), join(ws, "f.txt")];
    const r = readMany(paths, 100, false);
    assert.deepEqual(r.map((i) => i.skipped ?? "read"), ["not_file", "not_file", "read"]);
    assert.deepEqual(readMany(paths, 100).map((i) => i.skipped ?? "read"), [
      "read",
      "read",
      "read",
    ]);
  });
});

Deno.test("wall: the swap hook is for tests only: the worker's entry never sets it", async () => {
  const entry = await Deno.readTextFile(new URL("../effect_worker.ts", import.meta.url));
  assert.ok(!entry.includes("setSwapHook"));
});

Deno.test("wall: a folder swapped while a search or readMany reads its files undoes the whole run, and other folders' results stand", async () => {
  await withPlaces(async ({ ws, out }) => {
    await Deno.writeTextFile(join(ws, "d", "g.txt"), "inside hit\n");
    await Deno.writeTextFile(join(out, "sub", "g.txt"), `${SECRET} hit\n`);
    const paths = [join(ws, "f.txt"), join(ws, "d", "f.txt"), join(ws, "d", "g.txt")];
    // The swap comes after d/f.txt was read (inside), as d/g.txt is opened: both are refused.
    swapAt("open", join(ws, "d", "g.txt"), join(ws, "d"), join(out, "sub"));
    const r = await findInFiles(search(paths));
    assert.ok(!r.texts.includes(SECRET));
    assert.deepEqual(r.found.map((f) => f.index), [0]);
    assert.deepEqual(r.errors, [{ index: 1, name: "OutsideWall" }, {
      index: 2,
      name: "OutsideWall",
    }]);
    assert.equal(r.lineNumbers.length, 1);
    Deno.removeSync(join(ws, "d"));
    Deno.renameSync(join(ws, "d.orig"), join(ws, "d"));
    swapAt("open", join(ws, "d", "g.txt"), join(ws, "d"), join(out, "sub"));
    const many = readMany(paths, 100);
    assert.deepEqual(many.map((i) => i.error ?? dec.decode(i.bytes!)), [
      "inside hit\n",
      "OutsideWall",
      "OutsideWall",
    ]);
  });
});

// ---- (3) what a read opened, for the policy layer ----

// The policy layer labels an entry it checked; the worker's checks keep it inside its roots but
// cannot know which entry that was. Every read therefore says what it opened, and a link inside
// the workspace says where it led: its target's real path and inode, never the link's own.
Deno.test("wall: every read reports the file it opened: the handle's device and inode and its real path", async () => {
  await withPlaces(async ({ ws }) => {
    const file = join(ws, "d", "f.txt");
    const link = join(ws, "to-d-file");
    await Deno.symlink(file, link);
    const info = Deno.statSync(file);
    const opened = { dev: info.dev, ino: info.ino, real: file };
    for (const path of [file, link]) {
      assert.deepEqual((await read(path, { maxBytes: 100 })).opened, opened, "capped read");
      assert.deepEqual((await read(path, { length: 4 })).opened, opened, "range read");
      assert.deepEqual(readWithStat(path, 100).opened, opened, "read with stat");
      assert.deepEqual(readMany([path], 100)[0].opened, opened, "readMany");
      assert.deepEqual((await hash(path)).opened, opened, "hash");
      assert.deepEqual((await findInFiles(search([path]))).found[0].opened, opened, "search");
    }
    assert.equal(readWithStat(join(ws, "d"), 100).opened, null, "nothing opened, nothing said");
    const dir = Deno.statSync(join(ws, "d"));
    const listed = { dev: dir.dev, ino: dir.ino, real: join(ws, "d") };
    await Deno.symlink(join(ws, "d"), join(ws, "to-d"));
    for (const path of [join(ws, "d"), join(ws, "to-d")]) {
      assert.deepEqual(readDirsPacked([path]).opened, [listed], "packed listing");
      const [one] = readDirs([path]);
      assert.ok("opened" in one && one.opened.real === listed.real, "listing");
    }
    assert.deepEqual(readDirsPacked([join(ws, "missing")]).opened, [null]);
  });
});

Deno.test("wall: a link swapped out between the stat and the real path, and in again before the open, is refused (its target's bytes are never reported as opened at the name)", async () => {
  const forms: [string, (path: string) => unknown][] = [
    ["capped", (p) => read(p, { maxBytes: 100 })],
    ["hash", (p) => hash(p)],
    ["search", async (p) => {
      const r = await findInFiles(search([p]));
      if (r.errors.length > 0) throw Object.assign(new Error("item"), { name: r.errors[0].name });
      return r;
    }],
  ];
  for (const [name, op] of forms) {
    await withPlaces(async ({ ws }) => {
      // f.txt is the trusted file; v.txt, inside the workspace too, holds other bytes.
      const path = join(ws, "f.txt");
      const held = join(ws, "f.txt.hold");
      await Deno.writeTextFile(join(ws, "v.txt"), "vendored hit\n");
      Deno.renameSync(path, held);
      Deno.symlinkSync(join(ws, "v.txt"), path);
      const toLink = () => {
        Deno.renameSync(path, held);
        Deno.symlinkSync(join(ws, "v.txt"), path);
      };
      const toFile = () => {
        Deno.removeSync(path);
        Deno.renameSync(held, path);
      };
      const fired: SwapStage[] = [];
      setSwapHook((stage, at) => {
        if (at !== path || fired.includes(stage)) return;
        if (stage === "real") toFile();
        else if (stage === "open") toLink();
        else return;
        fired.push(stage);
      });
      let error: unknown = null;
      try {
        await op(path);
      } catch (e) {
        error = e;
      }
      assert.deepEqual(fired, ["real"], `${name}: swapped back before the real path was read`);
      assert.ok(error !== null, `${name}: refused`);
      isOutsideWall(error);
    });
  }
});
