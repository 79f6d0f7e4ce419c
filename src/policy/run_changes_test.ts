/**
 * Finding what a run changed (docs/contract.md §13.5): snapshots by the worker's op on a real tree,
 * and the comparison, including a rewrite that restores size and modification time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Marks, snapshotTree } from "../worker/ops/snapshot.ts";
import { createHash } from "node:crypto";
import {
  compareSnapshots,
  fingerprint,
  fingerprintOfHash,
  HOT_MAX_BYTES,
  HOT_MAX_FILES,
  hotFiles,
  hotToHashAgain,
  type RunStart,
  runStart,
  secondOf,
  type Snapshot,
  type SnapshotEntry,
  type StartClock,
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

/**
 * The fingerprints of files as the worker takes them (run_changes.ts `fingerprintFiles`), read
 * here directly: null for one that is no longer the file the snapshot recorded.
 */
function printsOf(root: string, files: readonly [string, SnapshotEntry][]) {
  const out = new Map<string, string | null>();
  for (const [rel, entry] of files) {
    const abs = join(root, rel);
    try {
      const info = Deno.lstatSync(abs);
      const bytes = Deno.readFileSync(abs);
      out.set(
        rel,
        fingerprintOfHash(abs, entry, {
          sha256: createHash("sha256").update(bytes).digest("hex"),
          mode: info.mode! & 0o777,
          opened: { real: abs, dev: info.dev, ino: info.ino! },
        }),
      );
    } catch {
      out.set(rel, null);
    }
  }
  return Promise.resolve(out);
}

/** Starts as a run does: at once when the files changed in this second are hashed. */
const startRun = (root: string, before: Snapshot) =>
  runStart(before, (files) => printsOf(root, files));

/** Compares as a run does: hot files whose key did not move are hashed again. */
async function compareRun(root: string, before: Snapshot, after: Snapshot, start: RunStart) {
  const hot = start.hot === null ? undefined : {
    before: start.hot,
    after: await printsOf(root, hotToHashAgain(start.hot, before, after)),
  };
  return compareSnapshots(before, after, start.startMs, hot);
}

/** A time safely before every change time already on disk, as a run started long ago. */
const LONG_AGO = 0;

Deno.test("run changes: created, changed and removed files are found; untouched ones are not", async () => {
  const root = await tree({ "src/a.ts": "a", "src/b.ts": "b", "keep.txt": "k" });
  try {
    const before = snap(root);
    // The run starts as a run does: the files just written above are hot, and hashed.
    const start = await startRun(root, before);
    await Deno.writeTextFile(join(root, "src/a.ts"), "A");
    await Deno.remove(join(root, "src/b.ts"));
    await Deno.mkdir(join(root, "out"));
    await Deno.writeTextFile(join(root, "out/new.txt"), "n");
    await Deno.symlink("../keep.txt", join(root, "out/link"));
    const changes = await compareRun(root, before, snap(root), start);
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
    const start = await startRun(root, before);
    await Deno.writeTextFile(join(root, "f.txt"), "SAME SIZE");
    await Deno.utime(join(root, "f.txt"), old, old);
    assert.deepEqual((await compareRun(root, before, snap(root), start)).changed, ["f.txt"]);
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
    const start = await startRun(root, before);
    assert.equal(start.hot, null, "a partial snapshot waits");
    for (let f = 0; f < 30; f++) await Deno.writeTextFile(join(root, `d0/f${f}.txt`), "new");
    const after = snap(root, 3, [], secondOf(start.startMs));
    assert.ok(after.entries.size > 30, `only ${after.entries.size} entries came back`);
    const changes = await compareRun(root, before, after, start);
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
    const start = await startRun(root, before);
    for (let d = 0; d < 6; d++) {
      for (let f = 0; f < 10; f++) await Deno.writeTextFile(join(root, `d${d}/f${f}.txt`), "new");
    }
    const raw = snapshotTree(root, [], bounds, secondOf(start.startMs));
    assert.ok(raw.paths.split("\0").length <= bounds.entries + bounds.changes, raw.paths);
    assert.ok(raw.blind.length > 0 && raw.blind.length <= bounds.marks, raw.blind.join(","));
    const changes = await compareRun(root, before, unpackSnapshot(raw), start);
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
    const start = await startRun(root, before);
    await Deno.mkdir(join(root, "made"));
    await Deno.writeTextFile(join(root, "d1/extra.txt"), "x");
    const after = snap(root, 2, [], secondOf(start.startMs));
    const changes = await compareRun(root, before, after, start);
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
    const start = await startRun(root, before);
    await Deno.mkdir(join(root, "flood"));
    for (let i = 0; i < 40; i++) await Deno.writeTextFile(join(root, `flood/f${i}`), "x");
    const raw = snapshotTree(root, [], bounds, secondOf(start.startMs));
    assert.deepEqual(raw.blind, ["flood"]);
    assert.ok(raw.paths.split("\0").length <= bounds.entries + bounds.changes, raw.paths);
    const changes = await compareRun(root, before, unpackSnapshot(raw), start);
    assert.deepEqual(changes.blind, ["flood"]);
    assert.ok(changes.created.includes("flood"), JSON.stringify(changes));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// Issue 24: a run no longer waits for a second in which nothing changed; the files changed in
// this second (hot) are hashed before it, and those whose key did not move hashed again after.

/** A synthetic entry: `key` stands for device, inode, size and times. */
function fileEntry(key: string, ctimeMs: number, kind = "f", size = 4): SnapshotEntry {
  return { kind, key, size, ctimeMs, id: { dev: 1, ino: Number(key.split(":")[0]) || 1 } };
}

function snapshotOf(entries: [string, SnapshotEntry][], partial: Partial<Snapshot> = {}): Snapshot {
  return {
    entries: new Map(entries),
    recordedAll: true,
    foldersRecorded: true,
    blind: [],
    ...partial,
  };
}

/** A clock that stands still unless told, and records the sleeps asked of it. */
function fakeClock(times: number[]): StartClock & { slept: number[] } {
  const slept: number[] = [];
  let i = 0;
  return {
    slept,
    now: () => times[Math.min(i++, times.length - 1)],
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
}

/** Runs `attempt` until the file at `rel` kept its key across it (same second), at most 10 times. */
async function inOneSecond(
  root: string,
  rel: string,
  attempt: () => Promise<{ before: Snapshot; after: Snapshot }>,
): Promise<{ before: Snapshot; after: Snapshot }> {
  for (let i = 0; i < 10; i++) {
    const got = await attempt();
    if (got.before.entries.get(rel)?.key === got.after.entries.get(rel)?.key) return got;
    await Deno.writeTextFile(join(root, rel), "same size");
  }
  throw new Error("the file never kept its key: every attempt crossed a second");
}

Deno.test("run changes: a file written just before a run and rewritten by it in the same second, size and modification time restored, counts", async () => {
  const root = await tree({ "f.txt": "same size" });
  try {
    let start: RunStart | undefined;
    const { before, after } = await inOneSecond(root, "f.txt", async () => {
      const before = snap(root);
      const old = (await Deno.lstat(join(root, "f.txt"))).mtime!;
      start = await startRun(root, before);
      await Deno.writeTextFile(join(root, "f.txt"), "SAME SIZE");
      await Deno.utime(join(root, "f.txt"), old, old);
      return { before, after: snap(root) };
    });
    assert.ok(start!.hot?.has("f.txt"), "the file was hot, and hashed");
    const changes = await compareRun(root, before, after, start!);
    assert.deepEqual(changes.changed, ["f.txt"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: a file written just before a run that the run leaves alone is not counted (no false positive)", async () => {
  const root = await tree({ "mine.txt": "written by the person", "other.txt": "o" });
  try {
    const before = snap(root);
    const start = await startRun(root, before);
    assert.ok(start.hot?.has("mine.txt"), "the file was hot, and hashed");
    await Deno.writeTextFile(join(root, "made.txt"), "by the run");
    const after = snap(root);
    const changes = await compareRun(root, before, after, start);
    assert.deepEqual(changes.changed, []);
    assert.deepEqual(changes.created, ["made.txt"]);
    assert.equal(changes.steady?.has("mine.txt"), true);
    // The rule of change times alone would count it: its change time is in the run's second.
    assert.ok(compareSnapshots(before, after, start.startMs).changed.includes("mine.txt"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: a hot file the run rewrites with the same bytes is not changed; a chmod, or a write through a hard link, is", async () => {
  const files = ["same", "moded", "linked"];
  const root = await tree({ "same": "s", "moded": "m", "linked": "l" });
  try {
    const attempt = async () => {
      const before = snap(root);
      const start = await startRun(root, before);
      const times = new Map<string, Date>();
      for (const rel of files) times.set(rel, (await Deno.lstat(join(root, rel))).mtime!);
      await Deno.writeTextFile(join(root, "same"), "s");
      await Deno.chmod(join(root, "moded"), 0o600);
      await Deno.link(join(root, "linked"), join(root, "alias"));
      await Deno.writeTextFile(join(root, "alias"), "L");
      for (const [rel, old] of times) await Deno.utime(join(root, rel), old, old);
      return { before, after: snap(root), start };
    };
    for (let i = 0; i < 10; i++) {
      const { before, after, start } = await attempt();
      const kept = files.every((rel) =>
        before.entries.get(rel)!.key === after.entries.get(rel)!.key
      );
      if (!kept) {
        // A second passed: every key moved, which tells nothing of the hashes. Again.
        await Deno.remove(join(root, "alias"));
        await Deno.writeTextFile(join(root, "linked"), "l");
        await Deno.chmod(join(root, "moded"), 0o644);
        continue;
      }
      assert.ok(files.every((rel) => start.hot?.has(rel)), "all three were hot");
      const changes = await compareRun(root, before, after, start);
      assert.deepEqual(changes.changed.sort(), ["linked", "moded"]);
      assert.deepEqual(changes.created, ["alias"]);
      assert.deepEqual([...changes.steady!.keys()], ["same"]);
      return;
    }
    throw new Error("every attempt crossed a second");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("run changes: a hot file whose key stayed counts when it cannot be hashed again, or is no longer a regular file", () => {
  const before = snapshotOf([
    ["a", fileEntry("1:a", 5_000)],
    ["b", fileEntry("2:b", 5_000)],
    ["c", fileEntry("3:c", 5_000)],
    ["d", fileEntry("4:d", 5_000)],
    ["e", fileEntry("5:e", 1_000)],
  ]);
  const after = snapshotOf([
    ["a", fileEntry("1:a", 5_000)],
    ["b", fileEntry("2:b", 5_000)],
    // Its inode number reused by a link, of the same size and times.
    ["c", fileEntry("3:c", 5_000, "l")],
    ["d", fileEntry("4:d", 5_000)],
    ["e", fileEntry("5:e", 1_000)],
  ]);
  const hot = {
    before: new Map([["a", "A"], ["b", "B"], ["c", "C"], ["d", "D"]]),
    after: new Map<string, string | null>([["a", "A"], ["b", null], ["c", "C"]]),
  };
  const changes = compareSnapshots(before, after, 5_000, hot);
  assert.deepEqual(changes.changed, ["b", "c", "d"]);
  assert.deepEqual([...changes.steady!.keys()], ["a"]);
  assert.equal(
    hotToHashAgain(hot.before, before, after).map(([rel]) => rel).join(","),
    "a,b,d",
    "only regular files whose key stayed are hashed again",
  );
});

Deno.test("run changes: a run whose hot files are hashed starts at once, without asking the clock to sleep", async () => {
  const t = 7_020; // 20 ms into a second: a run that waited would wait for 30 ms at least
  const before = snapshotOf([
    ["hot", fileEntry("1:h", 7_000)],
    ["late", fileEntry("2:l", 6_000)], // within the margin's reach: the second before counts
    ["cold", fileEntry("3:c", 5_000)],
    ["dir", fileEntry("4:d", 7_000, "d")],
  ]);
  const asked: string[][] = [];
  const clock = fakeClock([t]);
  const start = await runStart(before, (files) => {
    asked.push(files.map(([rel]) => rel));
    return Promise.resolve(new Map(files.map(([rel]) => [rel, `print of ${rel}`])));
  }, clock);
  assert.deepEqual(clock.slept, []);
  assert.deepEqual(asked, [["hot", "late"]]);
  assert.deepEqual([...start.hot!], [["hot", "print of hot"], ["late", "print of late"]]);
  assert.equal(start.startMs, t - 50);
  // Nothing hot: nothing hashed, and no wait either.
  const quiet = fakeClock([9_500]);
  const cold = await runStart(snapshotOf([["cold", fileEntry("3:c", 5_000)]]), () => {
    throw new Error("nothing to hash");
  }, quiet);
  assert.deepEqual(quiet.slept, []);
  assert.equal(cold.startMs, 9_450);
});

Deno.test("run changes: a clock set back while the hot files are hashed moves the start back with it", async () => {
  const before = snapshotOf([["hot", fileEntry("1:h", 7_000)]]);
  const clock = fakeClock([7_400, 3_200]);
  const start = await runStart(
    before,
    (files) => Promise.resolve(new Map(files.map(([rel]) => [rel, "p"]))),
    clock,
  );
  assert.deepEqual(clock.slept, []);
  assert.equal(start.startMs, 3_150);
});

Deno.test("run changes: the run still waits for the next second when its hot files cannot all be hashed", async () => {
  const many = Array.from(
    { length: HOT_MAX_FILES + 1 },
    (_, i): [string, SnapshotEntry] => [`f${i}`, fileEntry(`${i + 1}:x`, 7_000, "f", 1)],
  );
  const cases: [string, Snapshot, (string | null)?][] = [
    ["more files than the bound", snapshotOf(many)],
    [
      "more bytes than the bound",
      snapshotOf([["big", fileEntry("1:b", 7_000, "f", HOT_MAX_BYTES + 1)]]),
    ],
    ["a partial snapshot", snapshotOf([["hot", fileEntry("1:h", 7_000)]], { recordedAll: false })],
    ["a blind folder", snapshotOf([["hot", fileEntry("1:h", 7_000)]], { blind: ["dark"] })],
    ["a hash not had", snapshotOf([["hot", fileEntry("1:h", 7_000)]]), null],
  ];
  for (const [name, before, print] of cases) {
    const clock = fakeClock([7_300]);
    const start = await runStart(
      before,
      (files) => Promise.resolve(new Map(files.map(([rel]) => [rel, print ?? null]))),
      clock,
    );
    assert.deepEqual(clock.slept, [750], name); // to 50 ms into the next second
    assert.equal(start.hot, null, name);
    assert.equal(start.startMs, 7_300, name);
  }
  assert.equal(hotFiles(snapshotOf(many.slice(0, HOT_MAX_FILES)), 7_300)?.length, HOT_MAX_FILES);
});

Deno.test("run changes: a hash counts only for the file the snapshot recorded", () => {
  const entry = fileEntry("7:x", 7_000);
  const hashed = { sha256: "ab", mode: 0o644, opened: { real: "/w/f", dev: 1, ino: 7 } };
  assert.equal(fingerprintOfHash("/w/f", entry, hashed), fingerprint("ab", 0o644));
  // Renamed over between the snapshot and the hash: another inode.
  const other = { ...hashed, opened: { ...hashed.opened, ino: 8 } };
  assert.equal(fingerprintOfHash("/w/f", entry, other), null);
  // Reached through a link put there since: another real path.
  const linked = { ...hashed, opened: { ...hashed.opened, real: "/w/g" } };
  assert.equal(fingerprintOfHash("/w/f", entry, linked), null);
  assert.equal(fingerprintOfHash("/w/f", entry, null), null);
  assert.notEqual(fingerprint("ab", 0o600), fingerprint("ab", 0o644));
});
