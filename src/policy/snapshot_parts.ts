/**
 * A run's snapshot of the workspace taken by the whole pool at once (docs/contract.md §13.5): a
 * walk is bound by one `lstat` an entry behind the worker's narrowed permissions, on one thread,
 * so the pool's workers each walk a part (`snapshotPartOf`, src/worker/ops/snapshot.ts) and the
 * parts are joined here. Every entry belongs to one part by its path; the folders every part
 * lists to find its own (the root and the folders directly beneath it) must have been listed by
 * every part as the same folder, or what lies beneath one is not known whole: it is marked,
 * like a folder the walk could not see into. The bounds are divided between the parts, so the
 * memory a snapshot may take is what it was.
 */
import type { EffectWorker } from "../worker/client.ts";
import type { SnapshotResult, WorkerRequest } from "../worker/protocol.ts";
import type { Snapshot, SnapshotEntry } from "./snapshot.ts";
import { isBeneath } from "./trust_map.ts";

/** What a snapshot is asked for (the worker's `snapshot` request, less the part). */
export type SnapshotRequest = Omit<Extract<WorkerRequest, { op: "snapshot" }>, "op" | "part">;

/** A failed snapshot: nothing known anywhere. */
export const UNKNOWN_SNAPSHOT: Snapshot = {
  entries: new Map(),
  recordedAll: false,
  foldersRecorded: false,
  blind: ["."],
};

/** Fields per entry in {@link SnapshotResult.stats}. */
const FIELDS = 5;

/**
 * The worker's packed snapshot as a map from workspace-relative path to its key, added to
 * `into` when given (the parts of one snapshot share one map).
 */
export function unpackSnapshot(
  result: SnapshotResult,
  into = new Map<string, SnapshotEntry>(),
): Snapshot {
  const entries = into;
  const paths = result.paths === "" ? [] : result.paths.split("\0");
  const s = result.stats;
  // Read in place (no view or array per entry): this runs twice a run over every entry.
  for (let i = 0, at = 0; i < paths.length; i++, at += FIELDS) {
    const dev = s[at], ino = s[at + 1], size = s[at + 2], mtime = s[at + 3], ctime = s[at + 4];
    entries.set(paths[i], {
      kind: result.kinds[i],
      key: `${dev}:${ino}:${size}:${mtime}:${ctime}`,
      size,
      ctimeMs: ctime,
      // The snapshot writes 0 for an inode the system does not give.
      id: ino === 0 ? null : { dev, ino },
    });
  }
  return {
    entries,
    recordedAll: result.recordedAll,
    foldersRecorded: result.foldersRecorded,
    blind: result.blind.map((rel) => rel === "" ? "." : rel),
  };
}

/** `rel` as the trust map names folders ("." for the root). */
const dotted = (rel: string) => rel === "" ? "." : rel;

/** Whether `rel` is one of the folders or lies beneath one. */
function atOrBeneath(folders: readonly string[], rel: string): boolean {
  return folders.some((dir) => dir === rel || isBeneath(dir, rel));
}

/** The marks, none beneath another. */
function outermost(marks: readonly string[]): string[] {
  const sorted = [...new Set(marks)].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const rel of sorted) if (!atOrBeneath(kept, rel)) kept.push(rel);
  return kept;
}

/**
 * Joins the parts of one split snapshot (each from {@link SnapshotResult}, part `i` of
 * `parts.length`). A folder every part lists (the root, or one directly beneath it) that some
 * part did not list as the folder the others did — another device or inode, or not at all, as
 * when it was made or swapped between two parts' listings — is marked, unless that part marked
 * it (or a folder above it) already.
 */
export function joinSnapshotParts(parts: readonly SnapshotResult[]): Snapshot {
  const entries = new Map<string, SnapshotEntry>();
  const blind: string[] = [];
  let recordedAll = true;
  let foldersRecorded = true;
  for (const part of parts) {
    const one = unpackSnapshot(part, entries);
    recordedAll &&= one.recordedAll;
    foldersRecorded &&= one.foldersRecorded;
    blind.push(...one.blind);
  }
  // Every folder some part entered, or that its owner recorded as a folder beneath the root.
  const shared = new Set<string>([""]);
  for (const part of parts) for (const e of part.entered ?? []) shared.add(e.rel);
  for (const [rel, entry] of entries) {
    if (entry.kind === "d" && !rel.includes("/")) shared.add(rel);
  }
  for (const rel of shared) {
    const recorded = rel === "" ? undefined : entries.get(rel);
    const ids = parts.map((part) => part.entered?.find((e) => e.rel === rel));
    const first = ids.find((id) => id !== undefined);
    const same = (id: { dev: number; ino: number } | undefined) =>
      id !== undefined && first !== undefined && id.dev === first.dev && id.ino === first.ino &&
      (recorded === undefined || recorded.kind !== "d" || recorded.id === null ||
        (recorded.id.dev === id.dev && recorded.id.ino === id.ino));
    const whole = parts.every((part, i) =>
      same(ids[i]) || atOrBeneath(part.blind.map(dotted), dotted(rel))
    );
    if (!whole) blind.push(dotted(rel));
  }
  return { entries, recordedAll, foldersRecorded, blind: outermost(blind) };
}

/** `n` divided into `of` shares, none smaller than one (unless `n` is none). */
const share = (n: number, of: number) => n <= 0 ? 0 : Math.max(1, Math.ceil(n / of));

/**
 * The workspace as it is now, walked by every live worker of `workers` at once, each in its
 * part, with the bounds of `request` divided between them; by the first worker alone when the
 * pool has one or a part fails. A snapshot that failed knows nothing.
 */
export async function takeSnapshot(
  workers: readonly EffectWorker[],
  request: SnapshotRequest,
): Promise<Snapshot> {
  const live = workers.filter((w) => w.alive);
  if (live.length > 1) {
    const of = live.length;
    const parts = await Promise.all(live.map((w, index) =>
      w.call({
        op: "snapshot",
        ...request,
        maxEntries: share(request.maxEntries, of),
        ...(request.maxChanges !== undefined ? { maxChanges: share(request.maxChanges, of) } : {}),
        ...(request.maxMarks !== undefined ? { maxMarks: share(request.maxMarks, of) } : {}),
        part: { index, of },
      })
    ));
    if (parts.every((p) => p.ok)) {
      return joinSnapshotParts(parts.map((p) => p.ok ? p.value : null!));
    }
  }
  const whole = await (live[0] ?? workers[0]).call({ op: "snapshot", ...request });
  return whole.ok ? unpackSnapshot(whole.value) : UNKNOWN_SNAPSHOT;
}
