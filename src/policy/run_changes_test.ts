/**
 * Finding what a run changed (docs/contract.md §13.5): snapshots by the worker's op on a real tree,
 * and the comparison, including a rewrite that restores size and modification time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Marks, snapshotTree } from "../worker/ops/snapshot.ts";
import {
  compareSnapshots,
  runStart,
  secondOf,
  type Snapshot,
  type SnapshotEntry,
  unpackSnapshot,
} from "./run_changes.ts";
import { alsoWithoutCapabilities } from "../../test/support/unprivileged.ts";

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-snap-" }));
  for (const [rel, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, rel), text);
  }
  return root;
}

const snap = (root: string, max = 1000, skip: string[] = [], since?: number) =>
  unpackSnapshot(snapshotTree(root, skip, max, since));

/** A time safely before every change time already on disk, as a run started long ago. */
const LONG_AGO = 0;

Deno.test("run changes: created, changed and removed files are found; untouched ones are not", async () => {
  const root = await tree({ "src/a.ts": "a", "src/b.ts": "b", "keep.txt": "k" });
  try {
    const before = snap(root);
    // The run starts as a run does: in a second in which nothing above was written.
    const start = await runStart(before);
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
    const start = await runStart(before);
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
    assert.equal(before.recordedAll, false);
    await Deno.writeTextFile(join(root, "d"), "4");
    const changes = compareSnapshots(before, snap(root, 1, [], LONG_AGO), LONG_AGO);
    assert.equal(changes.complete, false);
    assert.deepEqual(changes.created, []);
    // Every file's change time is after "long ago": all count, the new one among them, and
    // whether each was created cannot be told.
    assert.ok(changes.unsure.includes("d"), JSON.stringify(changes));
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

/** A tree of `folders` folders of `files` files each, named `dN/fM.txt`. */
function wide(folders: number, files: number): Record<string, string> {
  const tree: Record<string, string> = {};
  for (let d = 0; d < folders; d++) {
    for (let f = 0; f < files; f++) tree[`d${d}/f${f}.txt`] = "old";
  }
  return tree;
}

// Before: past the bound the snapshot after the run recorded nothing more, so a file rewritten
// there was never compared, and stayed as trusted as its folder.
Deno.test("run changes: past the bound, every entry changed since the run's start comes back", async () => {
  const root = await tree(wide(1, 30));
  try {
    const before = snap(root, 3);
    const start = await runStart(before);
    for (let f = 0; f < 30; f++) await Deno.writeTextFile(join(root, `d0/f${f}.txt`), "new");
    const after = snap(root, 3, [], secondOf(start));
    assert.ok(after.entries.size > 30, `only ${after.entries.size} entries came back`);
    const changes = compareSnapshots(before, after, start);
    const touched = new Set([...changes.changed, ...changes.unsure]);
    for (let f = 0; f < 30; f++) assert.ok(touched.has(`d0/f${f}.txt`), `d0/f${f}.txt`);
    assert.deepEqual(changes.removed, [], "removals cannot be told past the bound");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: past both bounds whole folders are marked, and nothing more is kept", async () => {
  const root = await tree(wide(6, 10));
  try {
    const bounds = { entries: 2, changes: 3, marks: 4 };
    const before = unpackSnapshot(snapshotTree(root, [], bounds));
    const start = await runStart(before);
    for (let d = 0; d < 6; d++) {
      for (let f = 0; f < 10; f++) await Deno.writeTextFile(join(root, `d${d}/f${f}.txt`), "new");
    }
    const raw = snapshotTree(root, [], bounds, secondOf(start));
    assert.ok(raw.paths.split("\0").length <= bounds.entries + bounds.changes, raw.paths);
    assert.ok(raw.blind.length > 0 && raw.blind.length <= bounds.marks, raw.blind.join(","));
    const changes = compareSnapshots(before, unpackSnapshot(raw), start);
    const touched = new Set([...changes.created, ...changes.changed, ...changes.unsure]);
    const marked = (rel: string) =>
      changes.blind.some((dir) => dir === "." || rel.startsWith(dir + "/"));
    for (let d = 0; d < 6; d++) {
      for (let f = 0; f < 10; f++) {
        const rel = `d${d}/f${f}.txt`;
        assert.ok(touched.has(rel) || marked(rel), rel);
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: marks past their bound merge into their parents and still cover all", () => {
  const marks = new Marks(4);
  const added = ["a/b/c", "a/b/d", "a/e", "f/g/h", "f/i", "j/k", "j/l/m", "n"];
  for (const rel of added) marks.add(rel);
  const kept = marks.list();
  assert.ok(kept.length <= 4, kept.join(","));
  for (const rel of added) assert.ok(marks.covers(rel), rel);
  for (const rel of added) assert.ok(marks.covers(`${rel}/below`), rel);
});

Deno.test("run changes: where the first snapshot was blind, change times decide and names are unsure", () => {
  const entry = (kind: string, key: string, ctimeMs: number): SnapshotEntry => ({
    kind,
    key,
    size: 0,
    ctimeMs,
    id: null,
  });
  const before: Snapshot = {
    entries: new Map([["d", entry("d", "1", 0)], ["e", entry("f", "2", 0)]]),
    recordedAll: true,
    foldersRecorded: true,
    blind: ["d"],
  };
  const after: Snapshot = {
    entries: new Map([
      ["d", entry("d", "1", 5_000)],
      ["d/new", entry("f", "3", 5_000)],
      ["d/old", entry("f", "4", 1_000)],
      ["e", entry("f", "2", 0)],
      ["made", entry("d", "5", 5_000)],
    ]),
    recordedAll: true,
    foldersRecorded: true,
    blind: ["made"],
  };
  const changes = compareSnapshots(before, after, 5_000);
  assert.deepEqual(changes.unsure, ["d/new"]);
  assert.deepEqual(changes.created, ["made"]);
  assert.deepEqual(changes.changed, []);
  assert.deepEqual(changes.blind, ["made"]);
});

Deno.test("run changes: past the bound, a folder made by the run is still told apart", async () => {
  const root = await tree(wide(3, 5));
  try {
    const before = snap(root, 2);
    assert.equal(before.recordedAll, false);
    assert.equal(before.foldersRecorded, true);
    const start = await runStart(before);
    await Deno.mkdir(join(root, "made"));
    await Deno.writeTextFile(join(root, "d1/extra.txt"), "x");
    const changes = compareSnapshots(before, snap(root, 2, [], secondOf(start)), start);
    assert.ok(changes.created.includes("made"), JSON.stringify(changes));
    assert.ok(!changes.unsure.includes("d1") && !changes.created.includes("d1"));
    assert.ok(changes.unsure.includes("d1/extra.txt"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// A folder that cannot be listed, or whose entries cannot be looked at, is marked: as root that
// takes dropped capabilities (support/unprivileged.ts), as anyone else plain permissions.
alsoWithoutCapabilities(
  import.meta.url,
  "run changes: a folder the walk cannot list or look into is marked, never called complete",
  async () => {
    const root = await tree({ "shut/a": "a", "dark/b": "b", "open/c": "c" });
    try {
      await Deno.chmod(join(root, "shut"), 0o311);
      await Deno.chmod(join(root, "dark"), 0o644);
      const s = snapshotTree(root, [], 1000);
      const canRead = (() => {
        try {
          Deno.readDirSync(join(root, "shut"));
          return true;
        } catch {
          return false;
        }
      })();
      if (canRead) assert.deepEqual(s.blind, [], "root with its capabilities sees everything");
      else {
        assert.deepEqual(s.blind.sort(), ["dark", "shut"]);
        assert.equal(s.complete, false);
        assert.ok(s.paths.split("\0").includes("open/c"));
      }
    } finally {
      await Deno.chmod(join(root, "shut"), 0o755);
      await Deno.chmod(join(root, "dark"), 0o755);
      await Deno.remove(root, { recursive: true });
    }
  },
);

Deno.test("run changes: one folder with more new entries than both bounds is marked, not held", async () => {
  const root = await tree({ "keep.txt": "k" });
  try {
    const bounds = { entries: 3, changes: 4, marks: 10 };
    const before = unpackSnapshot(snapshotTree(root, [], bounds));
    const start = await runStart(before);
    await Deno.mkdir(join(root, "flood"));
    for (let i = 0; i < 40; i++) await Deno.writeTextFile(join(root, `flood/f${i}`), "x");
    const raw = snapshotTree(root, [], bounds, secondOf(start));
    assert.deepEqual(raw.blind, ["flood"]);
    assert.ok(raw.paths.split("\0").length <= bounds.entries + bounds.changes, raw.paths);
    const changes = compareSnapshots(before, unpackSnapshot(raw), start);
    assert.deepEqual(changes.blind, ["flood"]);
    assert.ok(changes.created.includes("flood"), JSON.stringify(changes));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
