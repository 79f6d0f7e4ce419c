/**
 * The bytes of the workspace's files before a run (docs/decisions.md, issue 27), so that `/undo`
 * can take back one run's changes: a run's changes are found only afterwards, by snapshots, so
 * the files it might change are kept before it starts. The walk is the snapshot's own: every
 * regular file the snapshot before the run recorded, at most {@link KEEP_MAX_BYTES}, is read
 * through the effect worker (its wall checks every read), checked to be the file the snapshot
 * saw, and kept in the session's content-addressed store while the session's budget lasts
 * (`ChangeLog.keepAllWithinBudget`, one pack a batch), smallest first; past it, a file is not
 * read, unless bytes of its size are kept already (then it is hashed in the worker, and found
 * kept or not).
 *
 * A file read before is not read again while its device, inode, size, modification and change
 * time are what they were — and its change time fell in a second before the one its read began
 * in ({@link stillRead}): change times are reported to the second, so a rewrite in the second of
 * the read could keep them all.
 */
import type { SessionChanges, WorkspaceFiles } from "./capabilities.ts";
import { type Before, KEEP_MAX_BYTES, type RunRead } from "./change_log.ts";
import { secondOf, type Snapshot, type SnapshotEntry } from "./run_changes.ts";
import { openedAsChecked } from "./paths.ts";
import { isBeneath } from "./trust_map.ts";

/** How many files, and how many bytes, one round trip to the worker reads at most. */
const BATCH_FILES = 256;
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * The stores whose files are written once under the hash of their content and never rewritten in
 * place (docs/decisions.md): git's objects (loose and packed, a submodule's beneath
 * `.git/modules/`, large files' beneath `lfs/`), at any depth, and pnpm's content store. Keeping
 * them spends the budget, smallest first, on files no run rewrites: a run adds to them (and
 * undoing it removes what it added, which needs nothing kept), or removes from them (`git gc`),
 * which then cannot be undone.
 */
const CONTENT_STORES = [
  /(^|\/)\.git\/(modules\/.+\/)?(lfs\/)?objects\//,
  /(^|\/)\.pnpm-store\//,
];

/** Whether `rel` lies in a content-addressed store whose files are not kept before a run. */
export function inContentStore(rel: string): boolean {
  return CONTENT_STORES.some((store) => store.test(rel));
}

/**
 * Whether a file read before may stand for the entry the snapshot holds now: its key is the one
 * recorded with the read, and its change time fell in a second before `read.second`, the second
 * the read **began** in (taken before the worker is asked). Any write after that moment carries
 * a change time in that second or later, so it moves the key of a file whose change time was
 * earlier; a write before it is in the bytes read. Taken after the read, the second could be the
 * next one, and a rewrite between the read and it, in the file's own second (its size and
 * modification time kept), would leave its key and let bytes it replaced stand for it.
 */
function stillRead(read: RunRead | undefined, entry: SnapshotEntry): read is RunRead {
  return read !== undefined && read.key === entry.key && secondOf(entry.ctimeMs) < read.second;
}

/**
 * Keeps, before a run, the state of every regular file the snapshot `before` recorded: its
 * bytes and mode, or why they are not kept (over the bound, past the budget, in a content store),
 * and of every folder it saw into (one the run removes whole was empty). A file that changed
 * between the snapshot and its read (another identity, another size) is left out: its state
 * before is unknown, and a run that changes it cannot be undone. `fresh`, when given, gets the
 * files whose state was read (or hashed) in this call rather than kept from an earlier run.
 */
export async function keepBeforeRun(
  policy: SessionChanges & Pick<WorkspaceFiles, "worker" | "workspace">,
  before: Snapshot,
  fresh?: Set<string>,
): Promise<ReadonlyMap<string, Before>> {
  const known = policy.changes.runReads;
  const out = new Map<string, Before>();
  const toRead: [string, SnapshotEntry][] = [];
  for (const [rel, entry] of before.entries) {
    // A folder the snapshot saw into: if the run removes it and nothing beneath it, it was empty.
    if (entry.kind === "d" && !before.blind.some((dir) => dir === rel || isBeneath(dir, rel))) {
      out.set(rel, { kind: "folder" });
    }
    if (entry.kind !== "f") continue;
    if (entry.size > KEEP_MAX_BYTES) {
      out.set(rel, { kind: "unknown", why: "large" });
      continue;
    }
    if (inContentStore(rel)) {
      out.set(rel, { kind: "unknown", why: "store" });
      continue;
    }
    const read = known.get(rel);
    if (stillRead(read, entry)) out.set(rel, read.before);
    else toRead.push([rel, entry]);
  }
  // Smallest first, so that the budget keeps as many files as it can. Once a batch no longer
  // fits in what is left of it, a file is hashed (in the worker, its bytes not carried over) only
  // when the store holds bytes of its size: only then may they be kept already (kept before a
  // resume, or the same bytes as another file). Any other is not read at all: nothing would
  // use its hash, since bytes not kept are neither shown nor restored.
  toRead.sort((a, b) => a[1].size - b[1].size);
  let spent = false;
  for (let i = 0; i < toRead.length;) {
    const next: [string, SnapshotEntry][] = [];
    let bytes = 0;
    while (i < toRead.length && next.length < BATCH_FILES && bytes < BATCH_BYTES) {
      bytes += toRead[i][1].size;
      next.push(toRead[i++]);
    }
    spent ||= policy.changes.storedBytes + bytes > policy.changes.budget;
    const batch = spent ? next.filter(([, e]) => policy.changes.holdsSize(e.size)) : next;
    // Before the worker is asked: the second the batch's read begins in (stillRead).
    const second = secondOf(Date.now());
    if (spent) {
      // Remembered like a read, so a later run does not weigh it again while it is unchanged.
      for (const [rel, entry] of next) {
        if (policy.changes.holdsSize(entry.size)) continue;
        const state: Before = { kind: "unknown", why: "budget" };
        known.set(rel, { key: entry.key, before: state, second });
        out.set(rel, state);
      }
      if (batch.length === 0) continue;
    }
    const abs = batch.map(([rel]) => `${policy.workspace.root}/${rel}`);
    const got = await policy.worker.call({
      op: "readMany",
      paths: abs,
      maxBytes: KEEP_MAX_BYTES,
      followLinks: false,
      ...(spent ? { hashOnly: true as const } : {}),
    });
    if (!got.ok) continue;
    // The files that are what the snapshot saw: their bytes, kept in one pack, or their hash.
    const good: {
      rel: string;
      entry: SnapshotEntry;
      bytes?: Uint8Array;
      sha256?: string;
      mode?: number;
    }[] = [];
    for (const [j, item] of got.value.entries()) {
      const [rel, entry] = batch[j];
      if (item.size !== entry.size || item.skipped !== undefined) continue;
      if (!openedAsChecked({ abs: abs[j], id: entry.id }, item.opened)) continue;
      good.push({ rel, entry, bytes: item.bytes, sha256: item.sha256, mode: item.mode });
    }
    const withBytes = good.filter((g) => g.bytes !== undefined);
    const keptAs = await policy.changes.keepAllWithinBudget(withBytes.map((g) => g.bytes!));
    withBytes.forEach((g, k) => g.sha256 = keptAs[k].sha256);
    const keptHashes = new Set(keptAs.filter((k) => k.kept).map((k) => k.sha256));
    for (const { rel, entry, sha256, mode } of good) {
      if (sha256 === undefined) continue;
      const kept = keptHashes.has(sha256) || policy.changes.holds(sha256);
      const state: Before = {
        kind: "bytes",
        sha256,
        size: entry.size,
        kept,
        ...(kept ? {} : { budget: true as const }),
        // Permission bits only: a setuid, setgid or sticky bit is never restored.
        ...(mode === undefined ? {} : { mode: mode & 0o777 }),
      };
      known.set(rel, { key: entry.key, before: state, second });
      out.set(rel, state);
      fresh?.add(rel);
    }
  }
  return out;
}
