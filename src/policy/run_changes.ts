/**
 * What a run changed in the workspace (design.md §13, "Files a run changes"), found by comparing
 * two snapshots taken by the effect worker before and after it: a file is created when its path
 * is new, changed when its device, inode, size, modification or change time differs — or when its
 * change time is at or after the run's start, which no program can set back (it moves on every
 * write, and `touch -d` moves it too). Removed files are those the second snapshot no longer has.
 *
 * Past the snapshot's bound the first snapshot is partial: then a file counts as changed when
 * its change time is at or after the run's start, and whether it was created cannot be told (so
 * its name must be taken as chosen by the run). Change times are compared to the second, as the
 * platform reports them, so a file written in the same second before the run counts as changed:
 * the error goes towards labeling more, never less.
 */
import type { SnapshotResult } from "../worker/protocol.ts";

/** How many entries a snapshot records before it falls back to change times. */
export const SNAPSHOT_MAX_ENTRIES = 200_000;

export interface Snapshot {
  readonly entries: ReadonlyMap<string, { kind: string; key: string; ctimeMs: number }>;
  readonly complete: boolean;
}

export interface RunChanges {
  /** New paths (files, links, folders): their names may have been chosen by the run. */
  created: string[];
  /** Files (and links) whose content or identity changed. */
  changed: string[];
  removed: string[];
  /** False when a snapshot was partial: then created files are among `changed`, not told apart. */
  complete: boolean;
}

/** The worker's packed snapshot as a map from workspace-relative path to its key. */
export function unpackSnapshot(result: SnapshotResult): Snapshot {
  const entries = new Map<string, { kind: string; key: string; ctimeMs: number }>();
  const paths = result.paths === "" ? [] : result.paths.split("\0");
  paths.forEach((path, i) => {
    const s = result.stats.subarray(i * 5, i * 5 + 5);
    entries.set(path, { kind: result.kinds[i], key: Array.from(s).join(":"), ctimeMs: s[4] });
  });
  return { entries, complete: result.complete };
}

/** The whole second a time falls in: change times are reported to the second. */
function secondOf(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/**
 * Compares the snapshots taken before and after a run that started at `startMs` (the clock of
 * the machine the files are on). Folders count only when created: adding a file to one changes
 * its times, not its content.
 */
export function compareSnapshots(before: Snapshot, after: Snapshot, startMs: number): RunChanges {
  const since = secondOf(startMs);
  const created: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [path, now] of after.entries) {
    const was = before.entries.get(path);
    if (was === undefined) {
      if (before.complete) created.push(path);
      else if (now.ctimeMs >= since && now.kind !== "d") changed.push(path);
      continue;
    }
    if (now.kind === "d" && was.kind === "d") continue;
    if (was.key !== now.key || now.ctimeMs >= since) changed.push(path);
  }
  if (after.complete) {
    for (const path of before.entries.keys()) if (!after.entries.has(path)) removed.push(path);
  }
  return { created, changed, removed, complete: before.complete && after.complete };
}
