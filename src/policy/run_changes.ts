/**
 * What a run changed in the workspace (design.md §13, "Files a run changes"), found by comparing
 * two snapshots taken by the effect worker before and after it: a file is created when its path
 * is new, changed when its device, inode, size, modification or change time differs — or when its
 * change time is at or after the run's start, which no program can set back (it moves on every
 * write, and `touch -d` moves it too). Removed files are those the second snapshot no longer has.
 *
 * Past the snapshot's bound the first snapshot is partial: then a file counts as changed when
 * its change time is at or after the run's start, and whether it was created cannot be told (so
 * its name must be taken as chosen by the run).
 *
 * Change times are reported to the whole second, so a run must start in a second in which
 * nothing in the workspace changed before it ({@link runStart} waits for one): then a change
 * time in or after that second means the run (or something running beside it) changed the file,
 * and no rewrite that restores size and modification time can hide in the same second.
 */
import { plural } from "../util/plural.ts";
import type { SnapshotResult } from "../worker/protocol.ts";
import type { Policy } from "./core.ts";
import type { FileEntry } from "./trust_map.ts";
import type { Integrity } from "../util/label.ts";
import { isGitPath } from "./git_dir.ts";

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
 * When a run may start, given the snapshot taken before it: now, unless something in the
 * workspace changed in the current second (or the snapshot is partial, so that cannot be told),
 * in which case at the start of the next second. Waits that long, and returns the start.
 */
export async function runStart(before: Snapshot, now = () => Date.now()): Promise<number> {
  const current = secondOf(now());
  let latest = -Infinity;
  for (const entry of before.entries.values()) latest = Math.max(latest, entry.ctimeMs);
  if (before.complete && secondOf(latest) < current) return now();
  const wait = current + 1000 - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait + 2));
  return now();
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

/**
 * Paths a run can never make trusted, whatever its label (design.md §13): git's own files (they
 * tell git what to run), Brave Bot's workspace folder (skills, config) and the project memory.
 */
export function neverTrustedFromRun(rel: string): boolean {
  const first = rel.split("/")[0];
  return isGitPath(rel) || first === ".bravebot" || rel === "AGENTS.md";
}

/**
 * Records what a run did to the workspace in the trust map, in one change. A created file gets
 * the run's integrity; a changed one the join of the run's and its own (a vouched command that
 * rewrites a vendored file does not make it trusted: labels only move towards `U`). `T` is bound
 * to the bytes the file has now, and never given to the paths of {@link neverTrustedFromRun}.
 * Every created name — and, when the snapshots were partial, every changed one, since it may
 * have been created — is marked as chosen by the run.
 */
export async function recordRunChanges(
  policy: Policy,
  changes: RunChanges,
  integrity: Integrity,
): Promise<void> {
  const touched = [...changes.created, ...changes.changed];
  if (touched.length === 0) return;
  const created = new Set(changes.created);
  const entries: [string, FileEntry][] = [];
  for (const rel of touched) {
    const nameChosen = created.has(rel) || !changes.complete;
    let entry: FileEntry = { integrity: "U", why: "run", ...(nameChosen ? { nameChosen } : {}) };
    const own = created.has(rel) && changes.complete ? "T" : priorIntegrity(policy, rel);
    if (integrity === "T" && own === "T" && !neverTrustedFromRun(rel)) {
      const hash = await policy.worker.call({
        op: "hash",
        path: `${policy.workspace.root}/${rel}`,
      });
      if (hash.ok) entry = { ...entry, integrity: "T", sha256: hash.value };
    }
    entries.push([rel, entry]);
  }
  await policy.changeTrust((map) => {
    for (const [rel, entry] of entries) map.setFile(rel, entry);
  });
}

/** The integrity a file had before the run: its own entry, else its directory's rule. */
function priorIntegrity(policy: Policy, rel: string): Integrity {
  return policy.trust.files.get(rel)?.integrity ?? policy.trust.ruleIntegrity(rel);
}

/** The line a run's result gives the planner about the files it touched (counts only). */
export function changesLine(changes: RunChanges): string | null {
  const { created, changed, removed, complete } = changes;
  if (complete && created.length + changed.length + removed.length === 0) return null;
  const files = (n: number) => plural(n, "file");
  if (!complete) {
    return `files: ${files(changed.length)} created or changed (the workspace is larger than ` +
      "the snapshot's bound, so removals are not counted); they are marked untrusted unless " +
      "the command was vouched";
  }
  return `files: ${created.length} created, ${changed.length} changed, ${removed.length} removed`;
}
