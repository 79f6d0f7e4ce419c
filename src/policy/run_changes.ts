/**
 * What a run changed in the workspace (docs/contract.md §13.5), found by comparing two snapshots
 * taken by the effect worker before and after it: a file is created when its path is new, changed
 * when its device, inode, size, modification or change time differs — or when its change time is
 * at or after the run's start, which no program can set back (it moves on every write, and
 * `touch -d` moves it too). Removed files are those the second snapshot no longer has.
 *
 * No blind spot. Where the first snapshot did not know a place (past its bound, or beneath a
 * folder it could not see), an entry counts when its change time is at or after the run's start,
 * and whether it was created cannot be told, so its name is taken as chosen by the run. The
 * second snapshot records every entry changed since the run's start even past its bound; a folder
 * it could not see beneath (not listable, an entry not `lstat`-able, or past its second bound)
 * comes back whole, as a prefix entry of the trust map that carries the run's label.
 *
 * Change times are reported to the whole second, so a rewrite that restores size and
 * modification time in the second a file last changed keeps its key. A run therefore starts only
 * once every file that changed in the current second (**hot** files) has been hashed
 * ({@link runStart}): every other entry changed in a second strictly before any change time a
 * write by the run can carry, so its key moves on any write; a hot file whose key did not move
 * is hashed again after the run, and counts as changed when its bytes or mode differ
 * ({@link compareSnapshots}). Where the hot files cannot all be hashed (a partial snapshot, too
 * many or too large, one that cannot be read), the run waits instead for a second in which
 * nothing in the workspace changed: then a change time in or after that second means the run
 * (or something running beside it) changed the file.
 */
import { plural } from "../util/plural.ts";
import type { ChangeRecords, FileLabels, WorkspaceFiles } from "./capabilities.ts";
import { type FileEntry, isBeneath, neverTrustedFromRun } from "./trust_map.ts";
import { type Integrity, type Label, label } from "../util/label.ts";
import { type CheckedEntry, openedAsChecked } from "./paths.ts";
import type { Snapshot, SnapshotEntry } from "./snapshot.ts";
import type { FileId, OpenedFile } from "../worker/protocol.ts";
import { DEFAULT_LIMITS } from "../state/settings.ts";
import { recordRunFiles } from "./undo.ts";
import type { Before } from "./change_log.ts";

/** How many entries a snapshot records in full before change times decide (the settings'). */
export const SNAPSHOT_MAX_ENTRIES = DEFAULT_LIMITS.snapshotEntries;

export type { Snapshot, SnapshotEntry };

export interface RunChanges {
  /** New paths (files, links, folders): their names may have been chosen by the run. */
  created: string[];
  /** Files (and links) that were there before and whose content or identity changed. */
  changed: string[];
  /**
   * Paths changed since the run's start in a place the first snapshot did not know: created or
   * changed, which cannot be told (folders too: a folder the run made has a chosen name).
   */
  unsure: string[];
  removed: string[];
  /** Folders the second snapshot could not see beneath: everything there takes the run's label. */
  blind: string[];
  /** False when a snapshot was partial: then removals are not counted. */
  complete: boolean;
  /**
   * The identity the snapshot after the run saw for each created, changed and unsure path: a
   * hash that binds trust to its bytes must be of that file (`openedAsChecked`), not of one put
   * there since.
   */
  seen: ReadonlyMap<string, FileId | null>;
  /**
   * The state before the run of each regular file it may change, as kept before it started
   * (run_keep.ts): absent after a run whose files were not kept (a leftover's change).
   */
  kept?: ReadonlyMap<string, Before>;
  /**
   * Hot files the run left as they were, with their {@link fingerprint}: until the next snapshot,
   * a leftover watch tells a change to them by their bytes, not their change time (leftovers.ts).
   */
  steady?: ReadonlyMap<string, string>;
}

// Taking a snapshot (over the whole pool) and unpacking the worker's reply: snapshot_parts.ts.
export { UNKNOWN_SNAPSHOT, unpackSnapshot } from "./snapshot_parts.ts";

/** The whole second a time falls in: change times are reported to the second. */
export function secondOf(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/** Whether `rel` lies beneath one of the folders (`.`: anything). */
function beneathAny(folders: readonly string[], rel: string): boolean {
  return folders.some((dir) => isBeneath(dir, rel));
}

/**
 * How far the change time of a write may lag the moment it was made. The kernel stamps change
 * times from a coarse clock that may lag the real one by a tick (up to 10 ms): a write made in
 * the first moments of a second can carry the second before. A run that waits starts at least
 * this far into a second; one that does not counts from this far before its start.
 */
const START_MARGIN_MS = 50;

/**
 * How many hot files, holding how many bytes, are hashed at most before a run rather than waiting
 * for the next second. Hashing lies on every run's path, twice (before it, and after it for each
 * file whose key did not move), while the wait it saves is half a second on average and one at
 * most: 64 MiB hashed from the page cache takes some 50–150 ms each way, 1,000 small files about
 * as long in opens and reads. Past either, waiting costs less.
 */
export const HOT_MAX_FILES = 1_000;
export const HOT_MAX_BYTES = 64 * 1024 * 1024;

/** How many hashes are asked of the worker at once. */
const HASHES_IN_FLIGHT = 16;

/**
 * A regular file's state as a hot file is compared by: the SHA-256 of its bytes and its
 * permission bits (a `chmod` moves the change time only, and the key of a file that is not hot).
 */
export function fingerprint(sha256: string, mode: number): string {
  return `${sha256}:${(mode & 0o777).toString(8)}`;
}

/**
 * The hot files of a snapshot taken before a run, at `t`: the regular files whose change time
 * falls in the second of `t` less {@link START_MARGIN_MS} or later (the clock set back puts a
 * change time after `t`: hot too). Null when they cannot stand for every entry a run's write
 * could leave with its key: the snapshot is partial (past its bound, or blind somewhere), or
 * there are more than {@link HOT_MAX_FILES} of them or {@link HOT_MAX_BYTES} in them.
 *
 * Only regular files: a folder counts only when created, and a link or another kind cannot be
 * hashed; one changed in that second keeps the rule of change times, and counts as changed
 * (a link's target cannot be rewritten in place, but a link made again may reuse the inode
 * number, and `touch -h` restores its modification time).
 */
export function hotFiles(before: Snapshot, t: number): [string, SnapshotEntry][] | null {
  if (!before.recordedAll || before.blind.length > 0) return null;
  const from = secondOf(t - START_MARGIN_MS);
  const hot: [string, SnapshotEntry][] = [];
  let bytes = 0;
  for (const [rel, entry] of before.entries) {
    if (entry.kind !== "f" || entry.ctimeMs < from) continue;
    hot.push([rel, entry]);
    bytes += entry.size;
    if (hot.length > HOT_MAX_FILES || bytes > HOT_MAX_BYTES) return null;
  }
  return hot;
}

/** The clock a run's start is decided by (tests give their own). */
export interface StartClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const SYSTEM_CLOCK: StartClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** When a run starts, as {@link runStart} decided it. */
export interface RunStart {
  /**
   * The earliest time a change the run makes can carry: the snapshot after the run keeps every
   * entry changed since it, and the comparison counts a change time at or after it.
   */
  startMs: number;
  /** Each hot file's {@link fingerprint} before the run; null when the run waited instead. */
  hot: ReadonlyMap<string, string> | null;
}

/**
 * When a run may start, given the snapshot taken before it. At once, when every hot file
 * ({@link hotFiles}) has a fingerprint (`fingerprints`: of the file the snapshot saw, null where
 * it cannot be had); the start is then the earlier of the moments before and after they were
 * taken, less {@link START_MARGIN_MS}, so that a clock set back meanwhile makes more entries
 * count, never fewer. Otherwise as before hot files: in the current second, unless something in
 * the workspace changed in it (or the snapshot is partial, so that cannot be told), in which case
 * in the next one; in either, no earlier than {@link START_MARGIN_MS} into it. Waits that long.
 */
export async function runStart(
  before: Snapshot,
  fingerprints: (files: [string, SnapshotEntry][]) => Promise<ReadonlyMap<string, string | null>>,
  clock: StartClock = SYSTEM_CLOCK,
): Promise<RunStart> {
  const t = clock.now();
  const files = hotFiles(before, t);
  if (files !== null) {
    const got = files.length === 0 ? new Map<string, string | null>() : await fingerprints(files);
    const hot = new Map<string, string>();
    for (const [rel] of files) {
      const print = got.get(rel);
      if (typeof print === "string") hot.set(rel, print);
    }
    if (hot.size === files.length) {
      return { startMs: Math.min(t, clock.now()) - START_MARGIN_MS, hot };
    }
  }
  const current = secondOf(clock.now());
  let latest = -Infinity;
  for (const entry of before.entries.values()) latest = Math.max(latest, entry.ctimeMs);
  const whole = before.recordedAll && before.blind.length === 0;
  const second = whole && secondOf(latest) < current ? current : current + 1000;
  const wait = second + START_MARGIN_MS - clock.now();
  if (wait > 0) await clock.sleep(wait);
  return { startMs: clock.now(), hot: null };
}

/** What the worker's `hash` op with `identify` gives. */
export interface HashOfFile {
  sha256: string;
  opened: OpenedFile;
  mode: number;
}

/**
 * The fingerprint a hash gives a file the snapshot recorded as `entry` at `abs`: null unless the
 * worker hashed that very file (`openedAsChecked`: not one put there since).
 */
export function fingerprintOfHash(
  abs: string,
  entry: SnapshotEntry,
  hashed: HashOfFile | null,
): string | null {
  if (hashed === null || !openedAsChecked({ abs, id: entry.id }, hashed.opened)) return null;
  return fingerprint(hashed.sha256, hashed.mode);
}

/**
 * The fingerprints of files as a snapshot recorded them, hashed by the worker a chunk at a time
 * (a regular file only, the bytes never carried over); null for one that could not be read or
 * is no longer the file recorded.
 */
export async function fingerprintFiles(
  policy: Pick<WorkspaceFiles, "worker" | "workspace">,
  files: readonly [string, SnapshotEntry][],
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (let i = 0; i < files.length; i += HASHES_IN_FLIGHT) {
    await Promise.all(
      files.slice(i, i + HASHES_IN_FLIGHT).map(async ([rel, entry]) => {
        const abs = `${policy.workspace.root}/${rel}`;
        const got = await policy.worker.call({ op: "hash", path: abs, identify: true });
        out.set(rel, fingerprintOfHash(abs, entry, got.ok ? got.value : null));
      }),
    );
  }
  return out;
}

/**
 * The fingerprints of the hot files before a run: from what `keepBeforeRun` read of them in this
 * same call (`fresh`: checked against the snapshot), else hashed by the worker. A state it kept
 * from an earlier run is not used: it was read in another second, before the file's last change
 * could be told from a later one.
 */
export async function hotFingerprints(
  policy: Pick<WorkspaceFiles, "worker" | "workspace">,
  files: readonly [string, SnapshotEntry][],
  kept: ReadonlyMap<string, Before>,
  fresh: ReadonlySet<string>,
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const toHash: [string, SnapshotEntry][] = [];
  for (const [rel, entry] of files) {
    const state = fresh.has(rel) ? kept.get(rel) : undefined;
    if (state?.kind === "bytes" && state.mode !== undefined && state.size === entry.size) {
      out.set(rel, fingerprint(state.sha256, state.mode));
    } else toHash.push([rel, entry]);
  }
  for (const [rel, print] of await fingerprintFiles(policy, toHash)) out.set(rel, print);
  return out;
}

/**
 * The hot files to hash again after the run: those whose entry `after` is still a regular file
 * with the key they had `before` (any other changed, as a key that moved tells), the identity
 * the hash must find being the one `after` recorded.
 */
export function hotToHashAgain(
  hot: ReadonlyMap<string, string>,
  before: Snapshot,
  after: Snapshot,
): [string, SnapshotEntry][] {
  const out: [string, SnapshotEntry][] = [];
  for (const rel of hot.keys()) {
    const was = before.entries.get(rel);
    const now = after.entries.get(rel);
    if (was === undefined || now === undefined || beneathAny(after.blind, rel)) continue;
    if (now.kind === "f" && now.key === was.key) out.push([rel, now]);
  }
  return out;
}

/**
 * Hot files for {@link compareSnapshots}: each one's fingerprint before, and after the run for
 * those {@link hotToHashAgain} named (null: it could not be had).
 */
export interface HotFiles {
  before: ReadonlyMap<string, string>;
  after: ReadonlyMap<string, string | null>;
}

/**
 * Compares the snapshots taken before and after a run that started at `startMs` (the clock of
 * the machine the files are on). Folders count only when created (or, where the first snapshot
 * did not know them, when their change time moved): adding a file to one changes its times, not
 * its content. What lies beneath a folder the second snapshot could not see is in `blind`.
 *
 * A hot file (`hot`, {@link runStart}) whose key did not move counts as changed when its
 * fingerprint after the run differs or could not be had: a change time at or after the start
 * says nothing of it, since it was already there before the run. A rewrite of the same bytes is
 * a touch, not a change. Every other entry keeps the rule of change times.
 */
export function compareSnapshots(
  before: Snapshot,
  after: Snapshot,
  startMs: number,
  hot?: HotFiles,
): RunChanges {
  const since = secondOf(startMs);
  const created: string[] = [];
  const changed: string[] = [];
  const unsure: string[] = [];
  const removed: string[] = [];
  const steady = new Map<string, string>();
  for (const [path, now] of after.entries) {
    if (beneathAny(after.blind, path)) continue;
    const was = before.entries.get(path);
    if (was === undefined) {
      const known = !beneathAny(before.blind, path) &&
        (before.recordedAll || (now.kind === "d" && before.foldersRecorded));
      if (known) created.push(path);
      else if (now.ctimeMs >= since) unsure.push(path);
      continue;
    }
    if (now.kind === "d" && was.kind === "d") continue;
    const print = hot?.before.get(path);
    if (was.key !== now.key) changed.push(path);
    else if (print !== undefined) {
      // The key includes no kind: an inode number reused by another kind keeps it.
      if (now.kind !== "f" || hot!.after.get(path) !== print) changed.push(path);
      else steady.set(path, print);
    } else if (now.ctimeMs >= since) changed.push(path);
  }
  const complete = before.recordedAll && after.recordedAll;
  if (complete) {
    for (const path of before.entries.keys()) {
      if (!after.entries.has(path) && !beneathAny(after.blind, path)) removed.push(path);
    }
  }
  const seen = new Map(
    [...created, ...changed, ...unsure].map((path) => [path, after.entries.get(path)!.id]),
  );
  return {
    created,
    changed,
    unsure,
    removed,
    blind: [...after.blind],
    complete,
    seen,
    ...(steady.size > 0 ? { steady } : {}),
  };
}

/**
 * Records what a run did to the workspace in the trust map, in one change. A created file gets
 * the run's integrity; a changed one the join of the run's and its own (a vouched command that
 * rewrites a vendored file does not make it trusted: labels only move towards `U`). `T` is bound
 * to the bytes the file has now, and never given to the paths of {@link neverTrustedFromRun}.
 * Every created name, and every name that may have been created, is marked as chosen by the run;
 * every folder it could not see beneath becomes a prefix entry with the run's label.
 */
export async function recordRunChanges(
  policy: ChangeRecords & FileLabels & WorkspaceFiles,
  changes: RunChanges,
  integrity: Integrity,
): Promise<void> {
  const touched = [...changes.created, ...changes.changed, ...changes.unsure];
  if (touched.length === 0 && changes.blind.length === 0 && changes.removed.length === 0) return;
  const created = new Set(changes.created);
  const changed = new Set(changes.changed);
  const entries: [string, FileEntry][] = [];
  const hashes = new Map<string, () => Promise<string | null>>();
  /** Changed files whose hash-bound entry stands: not relabelled, but recorded for /undo. */
  const standing: string[] = [];
  for (const rel of touched) {
    let hashed: Promise<string | null> | undefined;
    // The bytes of the file the snapshot saw, or none: a file put there since (a rename over
    // it, a link) is not what the run wrote, and gets the untrusted label, not a bound entry.
    const seen: CheckedEntry = {
      abs: `${policy.workspace.root}/${rel}`,
      id: changes.seen.get(rel) ?? null,
    };
    const hash = () =>
      hashed ??= policy.worker.call({ op: "hash", path: seen.abs, identify: true })
        .then((h) => h.ok && openedAsChecked(seen, h.value.opened) ? h.value.sha256 : null);
    hashes.set(rel, hash);
    // Bytes a hash-bound entry still matches are the ones approved or vouched for, whatever
    // touched the file (a `touch`, a rewrite that put them back): that entry stands.
    const bound = policy.trust.files.get(rel)?.sha256;
    if (bound !== undefined && !created.has(rel) && await hash() === bound) {
      standing.push(rel); // still the run's change for /undo: its bytes before may differ
      continue;
    }
    const nameChosen = !changed.has(rel);
    let entry: FileEntry = { integrity: "U", why: "run", ...(nameChosen ? { nameChosen } : {}) };
    const own = created.has(rel) ? "T" : priorIntegrity(policy, rel);
    if (integrity === "T" && own === "T" && !neverTrustedFromRun(rel)) {
      const sha256 = await hash();
      if (sha256 !== null) entry = { ...entry, integrity: "T", sha256 };
    }
    entries.push([rel, entry]);
  }
  // For /undo: the state each changed or removed file had before the run, and its label then
  // (computed before the map below changes).
  // A folder's state is only used for one the run removed (an empty one, made again on undo): a
  // folder that became a file has no bytes before.
  const removedBefore = (rel: string): Before => changes.kept?.get(rel) ?? { kind: "unknown" };
  const beforeOf = (rel: string): Before => {
    const before = removedBefore(rel);
    return before.kind === "folder" ? { kind: "unknown" } : before;
  };
  const labels = new Map<string, Label>();
  for (const rel of [...changes.changed, ...changes.removed]) {
    const before = beforeOf(rel);
    if (before.kind !== "bytes") continue;
    const integrity = await policy.trust.fileIntegrity(rel, () => Promise.resolve(before.sha256));
    labels.set(rel, label(integrity, policy.privatePaths.confidentialityOf(rel)));
  }
  const trustBefore = await policy.changeTrust((map) => {
    const was = new Map(entries.map(([rel]) => [rel, map.files.get(rel) ?? null]));
    for (const [rel, entry] of entries) map.setFile(rel, entry);
    for (const dir of changes.blind) map.setPrefix(dir, { integrity, why: "run" });
    return was;
  });
  // A removed folder comes back with the files beneath it; an empty one is made again.
  const removedFolder = (rel: string) => changes.removed.some((r) => r.startsWith(`${rel}/`));
  // For /diff and /undo (undo.ts): the files the run created, changed or removed.
  await recordRunFiles(
    policy,
    [
      ...entries.map(([rel, entry]) => ({
        rel,
        before: created.has(rel) ? { kind: "absent" as const } : beforeOf(rel),
        trustBefore: trustBefore.get(rel) ?? null,
        nameChosen: entry.nameChosen === true,
        labelBefore: labels.get(rel),
      })),
      ...standing.map((rel) => ({
        rel,
        before: beforeOf(rel),
        trustBefore: policy.trust.files.get(rel) ?? null,
        nameChosen: false,
        labelBefore: labels.get(rel),
      })),
      ...changes.removed.filter((rel) => !removedFolder(rel)).map((rel) => ({
        rel,
        before: removedBefore(rel),
        trustBefore: policy.trust.files.get(rel) ?? null,
        nameChosen: false,
        removed: true,
        labelBefore: labels.get(rel),
      })),
    ],
    (rel) => hashes.get(rel)?.() ?? Promise.resolve(null),
  );
}

/** The integrity a file had before the run: its own entry, else its directory's rule. */
function priorIntegrity(policy: FileLabels, rel: string): Integrity {
  return policy.trust.files.get(rel)?.integrity ?? policy.trust.ruleIntegrity(rel);
}

/** The line a run's result gives the planner about the files it touched (counts only). */
export function changesLine(changes: RunChanges): string | null {
  const { created, changed, unsure, removed, blind, complete } = changes;
  const touched = created.length + changed.length + unsure.length + removed.length;
  if (complete && touched === 0 && blind.length === 0) return null;
  const counts = [`${created.length} created`, `${changed.length} changed`];
  if (unsure.length > 0) counts.push(`${unsure.length} created or changed`);
  counts.push(complete ? `${removed.length} removed` : "removals not counted");
  const notes: string[] = [];
  if (!complete) notes.push("the workspace is larger than the snapshot's bound");
  if (blind.length > 0) {
    notes.push(
      `${plural(blind.length, "folder")} could not be seen into, so everything in ` +
        `${blind.length === 1 ? "it" : "them"} takes the run's label`,
    );
  }
  return `files: ${counts.join(", ")}${notes.length ? ` (${notes.join("; ")})` : ""}`;
}
