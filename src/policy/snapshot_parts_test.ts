/**
 * A snapshot split over the pool (snapshot_parts.ts): the joined parts are the one walk's
 * snapshot, and a folder that changes between two parts' listings is marked, never left half
 * known.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../../test/support/fast_check.ts";
import { snapshotPartOf, snapshotTree } from "../worker/ops/snapshot.ts";
import type { SnapshotResult } from "../worker/protocol.ts";
import { EffectWorker } from "../worker/client.ts";
import { joinSnapshotParts, takeSnapshot, unpackSnapshot } from "./snapshot_parts.ts";
import type { Snapshot } from "./snapshot.ts";
import { isBeneath } from "./trust_map.ts";

async function tempRoot(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-snap-parts-" }));
}

/** Files (and folders, for names ending in "/") below `root`. */
function make(root: string, rels: readonly string[]): void {
  for (const rel of rels) {
    const abs = join(root, rel);
    if (rel.endsWith("/")) Deno.mkdirSync(abs, { recursive: true });
    else {
      Deno.mkdirSync(join(abs, ".."), { recursive: true });
      Deno.writeTextFileSync(abs, rel);
    }
  }
}

const BIG = { entries: 10_000, changes: 10_000, marks: 100 };

/** The parts of one snapshot of `root`, taken one after another; `between(i)` runs before part i. */
function parts(root: string, of: number, between?: (i: number) => void): SnapshotResult[] {
  const out: SnapshotResult[] = [];
  for (let index = 0; index < of; index++) {
    between?.(index);
    out.push(snapshotTree(root, [], BIG, undefined, { index, of }));
  }
  return out;
}

/** The snapshot's entries as `path key` lines, sorted. */
function keys(s: Snapshot): string[] {
  return [...s.entries].map(([rel, e]) => `${rel} ${e.kind} ${e.key}`).sort();
}

const blindCovers = (s: Snapshot, rel: string) =>
  s.blind.some((dir) => dir === rel || isBeneath(dir, rel));

Deno.test("snapshot parts: joined, they are the whole walk's snapshot, each entry once", async () => {
  const segment = fc.constantFrom("a", "b", "c", "d", "lib", "x.ts", "é", "n m");
  const relPath = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join("/"));
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(relPath, fc.boolean()), { maxLength: 40 }),
      fc.integer({ min: 2, max: 3 }),
      async (spec, of) => {
        const root = await tempRoot();
        try {
          for (const [rel, folder] of spec) {
            try {
              make(root, [folder ? `${rel}/` : rel]);
            } catch {
              // A file where a folder is wanted (or the reverse): that entry is left out.
            }
          }
          const whole = unpackSnapshot(snapshotTree(root, [], BIG));
          const split = parts(root, of);
          const joined = joinSnapshotParts(split);
          assert.deepEqual(keys(joined), keys(whole));
          assert.deepEqual(joined.blind, []);
          assert.equal(joined.recordedAll, true);
          // No entry came from two parts.
          const counted = split.reduce(
            (n, p) => n + (p.paths === "" ? 0 : p.paths.split("\0").length),
            0,
          );
          assert.equal(counted, whole.entries.size);
        } finally {
          await Deno.remove(root, { recursive: true });
        }
      },
    ),
    { numRuns: 40 },
  );
});

/** Names of folders directly beneath the root that part `index` of `of` does not own. */
function notOwnedBy(index: number, of: number, count: number): string[] {
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) {
    if (snapshotPartOf(`d${i}`, of) !== index) names.push(`d${i}`);
  }
  return names;
}

Deno.test("snapshot parts: a folder made between two parts' listings is marked, not half known", async () => {
  const root = await tempRoot();
  try {
    make(root, ["keep.txt", "src/a.ts"]);
    // A folder owned by part 1 appears after part 0 listed the root: part 0 never entered it,
    // so the folders beneath it that part 0 owns were not walked.
    const name = notOwnedBy(0, 2, 1)[0];
    const inner: string[] = [];
    for (let i = 0; i < 12; i++) inner.push(`${name}/s${i}/f.txt`);
    const joined = joinSnapshotParts(parts(root, 2, (i) => i === 1 && make(root, inner)));
    assert.ok(joined.entries.has(name), "the owner recorded the new folder");
    assert.ok(blindCovers(joined, name), "what part 0 did not walk beneath it is not claimed");
    // Everything else is known as in one walk.
    assert.ok(joined.entries.has("keep.txt") && joined.entries.has("src/a.ts"));
    assert.ok(!blindCovers(joined, "src"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("snapshot parts: a folder swapped between two parts' listings is marked", async () => {
  const root = await tempRoot();
  try {
    const [name] = notOwnedBy(1, 2, 1);
    make(root, [`${name}/one/f.txt`, `${name}/two/g.txt`, "other/h.txt"]);
    // Part 1 walks a folder of that name that is another folder than the one part 0 walked.
    const joined = joinSnapshotParts(parts(root, 2, (i) => {
      if (i !== 1) return;
      Deno.renameSync(join(root, name), join(root, "moved"));
      make(root, [`${name}/three/k.txt`]);
    }));
    assert.ok(blindCovers(joined, name));
    assert.ok(!blindCovers(joined, "other"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("snapshot parts: a part that could not see into a folder marks only that folder", async () => {
  const root = await tempRoot();
  try {
    make(root, ["a/x/1.txt", "b/y/2.txt", "c/z/3.txt"]);
    const split = parts(root, 2);
    // As if part 1 had found "b" unlistable: its own mark stands, and nothing else is marked.
    split[1] = {
      ...split[1],
      blind: ["b"],
      entered: split[1].entered!.filter((e) => e.rel !== "b"),
    };
    const joined = joinSnapshotParts(split);
    assert.deepEqual(joined.blind, ["b"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("snapshot parts: the pool takes the same snapshot as one worker, within divided bounds", async () => {
  const root = await tempRoot();
  const scratch = await Deno.makeTempDir({ prefix: "bb-snap-parts-scratch-" });
  const rels: string[] = [];
  for (let i = 0; i < 30; i++) rels.push(`p${i % 5}/q${i % 7}/f${i}.txt`);
  make(root, rels);
  const pool = EffectWorker.start({ workspace: root, scratch, run: false }, 2, "process");
  try {
    assert.equal(pool.pool.length, 2);
    const request = { root, skip: [], maxEntries: 1_000, maxChanges: 100, maxMarks: 10 };
    const split = await takeSnapshot(pool.pool, request);
    const alone = await takeSnapshot([pool], request);
    assert.deepEqual(keys(split), keys(alone));
    assert.equal(split.recordedAll, true);
    // Each part records at most its share of the bound: 30 files and 40 folders do not fit
    // in two shares of 20, so the split snapshot says it is not whole.
    const tight = await takeSnapshot(pool.pool, { ...request, maxEntries: 40, maxChanges: 0 });
    assert.equal(tight.recordedAll, false);
    assert.ok(tight.entries.size <= 40, `${tight.entries.size}`);
  } finally {
    await pool.terminate();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(scratch, { recursive: true });
  }
});
