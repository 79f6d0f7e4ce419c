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
 * Change times are reported to the whole second, so a run must start in a second in which
 * nothing in the workspace changed before it ({@link runStart} waits for one): then a change
 * time in or after that second means the run (or something running beside it) changed the file,
 * and no rewrite that restores size and modification time can hide in the same second.
 */
import { plural } from "../util/plural.ts";
import type { ChangeRecords, FileLabels, WorkspaceFiles } from "./capabilities.ts";
import { type FileEntry, isBeneath, neverTrustedFromRun } from "./trust_map.ts";
import { type Integrity, type Label, label } from "../util/label.ts";
import { type CheckedEntry, openedAsChecked } from "./paths.ts";
import type { Snapshot, SnapshotEntry } from "./snapshot.ts";
import type { FileId } from "../worker/protocol.ts";
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
 * How far into a second a run starts at the earliest. The kernel stamps change times from a
 * coarse clock that may lag the real one by a tick (up to 10 ms): a write made in the first
 * moments of a second can carry the second before, which the run's start must not be.
 */
const START_MARGIN_MS = 50;

/**
 * When a run may start, given the snapshot taken before it: in the current second, unless
 * something in the workspace changed in it (or the snapshot is partial, so that cannot be told),
 * in which case in the next one; in either, no earlier than {@link START_MARGIN_MS} into it.
 * Waits that long, and returns the start.
 */
export async function runStart(before: Snapshot, now = () => Date.now()): Promise<number> {
  const current = secondOf(now());
  let latest = -Infinity;
  for (const entry of before.entries.values()) latest = Math.max(latest, entry.ctimeMs);
  const whole = before.recordedAll && before.blind.length === 0;
  const second = whole && secondOf(latest) < current ? current : current + 1000;
  const wait = second + START_MARGIN_MS - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  return now();
}

/**
 * Compares the snapshots taken before and after a run that started at `startMs` (the clock of
 * the machine the files are on). Folders count only when created (or, where the first snapshot
 * did not know them, when their change time moved): adding a file to one changes its times, not
 * its content. What lies beneath a folder the second snapshot could not see is in `blind`.
 */
export function compareSnapshots(before: Snapshot, after: Snapshot, startMs: number): RunChanges {
  const since = secondOf(startMs);
  const created: string[] = [];
  const changed: string[] = [];
  const unsure: string[] = [];
  const removed: string[] = [];
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
    if (was.key !== now.key || now.ctimeMs >= since) changed.push(path);
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
  return { created, changed, unsure, removed, blind: [...after.blind], complete, seen };
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
