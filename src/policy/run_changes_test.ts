/**
 * Finding what a run changed (design.md §13): snapshots by the worker's op on a real tree, and
 * the comparison, including a rewrite that restores size and modification time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { snapshotTree } from "../worker/ops/snapshot.ts";
import { compareSnapshots, unpackSnapshot } from "./run_changes.ts";

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-snap-" }));
  for (const [rel, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, rel), text);
  }
  return root;
}

const snap = (root: string, max = 1000, skip: string[] = []) =>
  unpackSnapshot(snapshotTree(root, skip, max));

/** A time safely before every change time already on disk, as a run started long ago. */
const LONG_AGO = 0;

Deno.test("run changes: created, changed and removed files are found; untouched ones are not", async () => {
  const root = await tree({ "src/a.ts": "a", "src/b.ts": "b", "keep.txt": "k" });
  try {
    const before = snap(root);
    // The run starts after everything above was written, in a later second.
    await new Promise((r) => setTimeout(r, 1100));
    const start = Date.now();
    await Deno.writeTextFile(join(root, "src/a.ts"), "A");
    await Deno.remove(join(root, "src/b.ts"));
    await Deno.mkdir(join(root, "out"));
    await Deno.writeTextFile(join(root, "out/new.txt"), "n");
    await Deno.symlink("../keep.txt", join(root, "out/link"));
    const changes = compareSnapshots(before, snap(root), start);
    assert.deepEqual(changes.created.sort(), ["out", "out/link", "out/new.txt"]);
    assert.deepEqual(changes.changed, ["src/a.ts"]);
    assert.deepEqual(changes.removed, ["src/b.ts"]);
    assert.equal(changes.complete, true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: a rewrite that restores size and modification time still counts", async () => {
  const root = await tree({ "f.txt": "same size" });
  try {
    const before = snap(root);
    const old = (await Deno.stat(join(root, "f.txt"))).mtime!;
    await new Promise((r) => setTimeout(r, 1100));
    const start = Date.now();
    await Deno.writeTextFile(join(root, "f.txt"), "SAME SIZE");
    await Deno.utime(join(root, "f.txt"), old, old);
    assert.deepEqual(compareSnapshots(before, snap(root), start).changed, ["f.txt"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: past the bound, change times decide and created files are not told apart", async () => {
  const root = await tree({ "a": "1", "b": "2", "c": "3" });
  try {
    const before = snap(root, 1);
    assert.equal(before.complete, false);
    await Deno.writeTextFile(join(root, "d"), "4");
    const changes = compareSnapshots(before, snap(root, 1), LONG_AGO);
    assert.equal(changes.complete, false);
    assert.deepEqual(changes.created, []);
    // Every file's change time is after "long ago": all count, the new one among them.
    assert.ok(changes.changed.length >= 1);
    assert.deepEqual(changes.removed, [], "removals cannot be told from a partial snapshot");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: skipped folders are not entered, links are not followed", async () => {
  const root = await tree({ "state/secret": "s", "ws/a": "a" });
  const outside = await tree({ "x": "x" });
  try {
    await Deno.symlink(outside, join(root, "ws/out"));
    const s = snap(root, 1000, [join(root, "state")]);
    assert.deepEqual([...s.entries.keys()].sort(), ["ws", "ws/a", "ws/out"]);
    assert.equal(s.entries.get("ws/out")?.kind, "l");
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
