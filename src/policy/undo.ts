/**
 * `/diff` and `/undo` (docs/session.md#taking-changes-back): what the session changed, and
 * taking the last changes back. The decisions are here, one function per rule: what is kept of a
 * file before a change ({@link beforeOf}), which change can be undone and what blocks it
 * ({@link evaluateUndo}: a file whose bytes are no longer what the session left is someone
 * else's work and is never overwritten), and what the planner is told ({@link undoneLine}). The
 * effect worker restores and removes, each checked by hash; the trust map takes back the entry
 * the file had before, so restored bytes carry the label they had then.
 */
import type {
  ChangeRecords,
  FileLabels,
  Recording,
  SessionChanges,
  WorkspaceFiles,
} from "./capabilities.ts";
import { type Before, type ChangedFile, type ChangeRecord, KEEP_MAX_BYTES } from "./change_log.ts";
import type { FileEntry } from "./trust_map.ts";
import { contentsPreview, previewOf } from "./writes.ts";
import { decodeText, pathNameShown } from "./reads.ts";
import { LEADS_ELSEWHERE, resolveInPlace } from "./paths.ts";
import type { WritePreview } from "../person/person.ts";
import { TRUSTED_PRIVATE } from "../util/label.ts";
import type { Label } from "../util/label.ts";
import { plural } from "../util/plural.ts";
import { sha256 } from "../util/hash.ts";
import { err, ok, type Result } from "../util/result.ts";
import { recordDone } from "./verdict.ts";

/** The most files one run's record holds; a run that touched more is recorded as not undoable. */
export const RUN_RECORD_MAX_FILES = 1_000;

/**
 * Records the files one run changed, each with its state before (run_keep.ts kept the bytes of
 * the files it might change; a file it created was absent) and the hash it left: a file the run
 * removed left none. A file whose state before was not kept is recorded as unknown, and makes
 * the run's record not undoable.
 */
export async function recordRunFiles(
  policy: SessionChanges,
  touched: {
    rel: string;
    before: Before;
    trustBefore: FileEntry | null;
    nameChosen: boolean;
    removed?: boolean;
    labelBefore?: Label;
  }[],
  hashOf: (rel: string) => Promise<string | null>,
): Promise<void> {
  if (touched.length === 0) return;
  const files: ChangedFile[] = [];
  for (const t of touched.slice(0, RUN_RECORD_MAX_FILES)) {
    files.push({
      rel: t.rel,
      before: t.before,
      after: t.removed ? null : await hashOf(t.rel),
      trustBefore: t.trustBefore,
      ...(t.nameChosen ? { nameChosen: true as const } : {}),
      ...(t.removed ? { removed: true as const } : {}),
      ...(t.labelBefore ? { labelBefore: t.labelBefore } : {}),
    });
  }
  if (touched.length > RUN_RECORD_MAX_FILES) {
    // The rest are not listed; the one marker below keeps the record from being undone.
    files.push({ rel: ".", before: { kind: "unknown" }, after: null, trustBefore: null });
  }
  await policy.changes.add("run", files);
}

/** One file of `/diff`: a diff against its state before the session's first change, or a note. */
export interface FileDiff {
  rel: string;
  /** A run changed it at some point. */
  byRun: boolean;
  preview: WritePreview | null;
  /** Why there is no diff, or what else the person should know. */
  note: string | null;
}

/**
 * What `/diff` reads: the session's change log and the workspace's bytes now, through an effect
 * worker. A session's policy is one; `bravebot diff --session ID` makes one with a worker of its
 * own, without opening the policy layer.
 */
export type ChangeSource = SessionChanges & Pick<WorkspaceFiles, "worker" | "workspace">;

/** A recorded path that no longer resolves to itself (paths.ts, resolveInPlace): not read. */
const ELSEWHERE = "elsewhere";

/**
 * The workspace file's bytes now: null when there is none; "large" past the kept bound;
 * {@link ELSEWHERE} when its path now leads elsewhere, whose bytes are not this file's.
 */
async function currentBytes(
  policy: ChangeSource,
  rel: string,
): Promise<Uint8Array | null | "large" | typeof ELSEWHERE> {
  const where = await resolveInPlace(policy.workspace, rel);
  if (!where.ok) return ELSEWHERE;
  const read = await policy.worker.call({
    op: "read",
    path: where.value.abs,
    withStat: true,
    maxBytes: KEEP_MAX_BYTES,
  });
  if (!read.ok) return null;
  if (read.value.stat.kind !== "file") return null;
  return read.value.bytes ?? "large";
}

/** The hash of the regular file at `abs` (a resolved path) now; null when there is none. */
async function currentHash(policy: WorkspaceFiles, abs: string): Promise<string | null> {
  const lstat = await policy.worker.call({ op: "lstat", path: abs });
  if (!lstat.ok || lstat.value.kind !== "file") return null;
  const hashed = await policy.worker.call({ op: "hash", path: abs });
  return hashed.ok ? hashed.value : null;
}

/** An empty folder, as a state before: undoing makes it again. */
const FOLDER = "folder";

/**
 * The bytes a state before stands for: null for absent, {@link FOLDER} for an empty folder; a note
 * when they are not kept.
 */
async function bytesOf(
  policy: ChangeSource,
  before: Before,
): Promise<Result<Uint8Array | null | typeof FOLDER>> {
  if (before.kind === "absent") return ok(null);
  if (before.kind === "folder") return ok(FOLDER);
  if (
    before.kind === "unknown" && before.why === "budget" || before.kind === "bytes" && before.budget
  ) {
    return err(
      `changed by a run after the session had kept ${budgetLimit(policy)} of files: ` +
        "its bytes before were not kept, so it cannot be undone",
    );
  }
  if (before.kind === "unknown" && before.why === "store") {
    return err(
      "changed by a run in a content-addressed store (such as git's objects), whose files are " +
        "not kept before a run, so it cannot be undone",
    );
  }
  if (before.kind === "unknown") {
    return err(
      before.why === "large"
        ? `over ${keepLimit()} before a run changed it: its bytes were not kept, so it cannot be undone`
        : "changed by a run: its bytes before were not kept, so it cannot be undone",
    );
  }
  if (!before.kept) {
    return err(
      `over ${keepLimit()} before the change: recorded by hash only, so it cannot be undone`,
    );
  }
  const bytes = await policy.changes.kept(before.sha256);
  return bytes === null
    ? err("its kept bytes are gone or altered in the session's state, so it cannot be undone")
    : ok(bytes);
}

function keepLimit(): string {
  return `${KEEP_MAX_BYTES / (1024 * 1024)} MiB`;
}

/** The session's budget of kept bytes, as the person reads it. */
function budgetLimit(policy: ChangeSource): string {
  const mib = policy.changes.budget / (1024 * 1024);
  return mib >= 1 ? `${Math.floor(mib)} MiB` : plural(policy.changes.budget, "byte");
}

/**
 * The preview of going from `from` (null: no file) to `to` (null: the file removed; an empty
 * folder made again).
 */
function changePreview(
  rel: string,
  from: Uint8Array | null,
  to: Uint8Array | null | typeof FOLDER,
): { preview: WritePreview | null; note: string | null } {
  if (to === FOLDER) return { preview: null, note: "an empty folder, made again" };
  if (to === null) return { preview: null, note: from === null ? null : "the file is removed" };
  const text = decodeText(to);
  if (text === null) return { preview: null, note: `binary (${plural(to.length, "byte")})` };
  if (from === null) return { preview: contentsPreview(rel, text), note: "a new file" };
  return { preview: previewOf(rel, from, text), note: null };
}

/**
 * `/diff`: every file a standing change touched, in the order first changed, with the diff from
 * its state before the session's first change to it to its bytes now. For the person only: the
 * names are shown escaped on the screen, never sent to the planner.
 */
export async function sessionDiff(policy: ChangeSource): Promise<FileDiff[]> {
  const first = new Map<string, { before: Before; byRun: boolean }>();
  for (const record of policy.changes.standing) {
    for (const f of record.files) {
      if (f.rel === ".") continue;
      const seen = first.get(f.rel);
      if (seen) seen.byRun ||= record.by === "run";
      else first.set(f.rel, { before: f.before, byRun: record.by === "run" });
    }
  }
  const out: FileDiff[] = [];
  for (const [rel, { before, byRun }] of first) {
    const now = await currentBytes(policy, rel);
    const was = await bytesOf(policy, before);
    if (!was.ok) {
      out.push({
        rel,
        byRun,
        preview: null,
        note: was.error.replace(/, so it cannot be undone$/, "; no diff, not undoable"),
      });
      continue;
    }
    if (was.value === FOLDER) {
      // Its state before was an empty folder, which a run removed.
      out.push({ rel, byRun, preview: null, note: "an empty folder, removed" });
      continue;
    }
    if (now === "large") {
      out.push({ rel, byRun, preview: null, note: `over ${keepLimit()} now: not shown` });
      continue;
    }
    if (now === ELSEWHERE) {
      out.push({ rel, byRun, preview: null, note: `${LEADS_ELSEWHERE}: not shown, not undoable` });
      continue;
    }
    const shown = changePreview(rel, was.value, now);
    out.push({ rel, byRun, ...shown });
  }
  return out;
}

/** One file an undo puts back: to its bytes before (or removed), with the diff it applies. */
export interface UndoStep {
  rel: string;
  record: ChangeRecord;
  file: ChangedFile;
}

export interface UndoPlan {
  /** Newest first, as they are applied. */
  records: ChangeRecord[];
  steps: UndoStep[];
  /** Per file, what the whole undo does to it: current bytes to the state it restores. */
  shown: { rel: string; preview: WritePreview | null; note: string | null }[];
}

/** The facts an undo is decided on: the changes to take back and each file's hash now. */
export interface UndoFacts {
  records: ChangeRecord[];
  /** The hash of each file's bytes now (null: no regular file). */
  hashes: ReadonlyMap<string, string | null>;
  /** Whether the state before each file's change can be had. */
  restorable: (file: ChangedFile) => string | null;
}

/**
 * Whether the changes can be taken back, newest first: each file must hold exactly what the
 * change left (else someone changed it since, and their work is not overwritten), and its state
 * before must be known and kept. Answers the refusal, naming the file, or null.
 */
export function evaluateUndo(f: UndoFacts): string | null {
  const now = new Map(f.hashes);
  for (const record of f.records) {
    for (const file of record.files) {
      if (file.rel === ".") {
        return "a run changed more files than the session records; it cannot be undone";
      }
      const blocked = f.restorable(file);
      if (blocked !== null) return `${file.rel} was ${blocked}`;
      // A file the change removed must still be gone; any other must hold what it left.
      const left = file.removed ? now.get(file.rel) === null : file.after !== null &&
        now.get(file.rel) === file.after;
      if (!left) {
        return `${file.rel} changed since this session left it (its bytes are not what the ` +
          "session wrote); it is not overwritten";
      }
      now.set(file.rel, file.before.kind === "bytes" ? file.before.sha256 : null);
    }
  }
  return null;
}

/** `/undo N`: the plan to take back the last `n` standing changes, or why it cannot be. */
export async function planUndo(
  policy: WorkspaceFiles & SessionChanges,
  n: number,
): Promise<Result<UndoPlan>> {
  const standing = policy.changes.standing;
  if (standing.length === 0) return err("nothing to undo: this session changed no file");
  if (!Number.isInteger(n) || n < 1) return err("/undo takes a count of changes, 1 or more");
  if (n > standing.length) {
    return err(`this session has ${plural(standing.length, "change")} to undo, not ${n}`);
  }
  const records = standing.slice(-n).reverse();
  const hashes = new Map<string, string | null>();
  const kept = new Map<string, Result<Uint8Array | null | typeof FOLDER>>();
  for (const r of records) {
    for (const f of r.files) {
      if (f.rel === ".") continue;
      if (!hashes.has(f.rel)) {
        const where = await resolveInPlace(policy.workspace, f.rel);
        if (!where.ok) return err(`not undone: ${f.rel} ${where.error}; nothing was changed`);
        hashes.set(f.rel, await currentHash(policy, where.value.abs));
      }
      kept.set(`${r.seq}:${f.rel}`, await bytesOf(policy, f.before));
    }
  }
  const refusal = evaluateUndo({
    records,
    hashes,
    restorable: (file) => {
      const r = records.find((rec) => rec.files.includes(file))!;
      const k = kept.get(`${r.seq}:${file.rel}`);
      return k && !k.ok ? k.error.replace(/, so it cannot be undone$/, "") : null;
    },
  });
  if (refusal !== null) return err(`not undone: ${refusal}`);
  const steps = records.flatMap((record) =>
    record.files.map((file) => ({ rel: file.rel, record, file }))
  );
  // What each file ends as: the state before the oldest change taken back.
  const ends = new Map<string, Uint8Array | null | typeof FOLDER>();
  for (const s of steps) {
    const k = kept.get(`${s.record.seq}:${s.rel}`)!;
    if (k.ok) ends.set(s.rel, k.value);
  }
  const shown = [];
  for (const [rel, to] of ends) {
    const now = await currentBytes(policy, rel);
    if (now === ELSEWHERE) return err(`not undone: ${rel} ${LEADS_ELSEWHERE}; nothing was changed`);
    shown.push({ rel, ...changePreview(rel, now === "large" ? null : now, to) });
  }
  return ok({ records, steps, shown });
}

/**
 * Applies a plan the person accepted: each file restored to its bytes before (or removed when
 * the change created it), each through the worker only while it holds what the change left; the
 * trust map takes back the file's entry from before. Answers what was undone, for the person,
 * and the line the planner is told with the next message.
 */
export async function applyUndo(
  policy: ChangeRecords & FileLabels & Recording & WorkspaceFiles,
  plan: UndoPlan,
): Promise<Result<{ said: string[]; forPlanner: { text: string; label: Label } }>> {
  // Told before the trust map changes: a removed file's entry no longer says a run chose its name.
  const line = undoneLine(policy, plan);
  const said: string[] = [];
  for (const record of plan.records) {
    for (const file of record.files) {
      const before = await bytesOf(policy, file.before);
      if (!before.ok || (file.after === null && !file.removed)) {
        return err(`not undone: ${file.rel}: ${before.ok ? "unknown" : before.error}`);
      }
      // Resolved again just before the act, as a write is: a link set since the plan was shown
      // would carry it onto another file or into Brave Bot's state.
      const where = await resolveInPlace(policy.workspace, file.rel);
      if (!where.ok) {
        return err(
          `stopped: ${file.rel} ${where.error}; it is not undone` +
            (said.length ? `; undone before it: ${said.join(", ")}` : ""),
        );
      }
      const { abs, folder: within } = where.value;
      const mode = file.before.kind === "bytes" ? file.before.mode : undefined;
      const done = before.value === FOLDER
        ? await policy.worker.call({ op: "makeDir", path: abs, within })
        : before.value === null
        ? await policy.worker.call({ op: "remove", path: abs, expectSha256: file.after!, within })
        : await policy.worker.call({
          op: "write",
          path: abs,
          bytes: before.value,
          // A removed file is written back only where nothing has appeared since.
          expectSha256: file.removed ? null : file.after,
          makeParents: true,
          within,
          // The mode it had before the run (permission bits only; the worker masks them too).
          ...(mode === undefined ? {} : { mode: mode & 0o777 }),
        });
      if (!done.ok) {
        return err(
          `stopped: ${file.rel} ${
            done.error.name === "Changed"
              ? "changed since; it is not overwritten"
              : `could not be restored (${done.error.name})`
          }` +
            (said.length ? `; undone before it: ${said.join(", ")}` : ""),
        );
      }
      await policy.changeTrust((map) => map.restoreFile(file.rel, file.trustBefore));
      const restored = before.value;
      await recordDone(policy, {
        tool: "undo",
        routing: { path: file.rel },
        decision: restored === FOLDER
          ? "folder made"
          : restored === null
          ? "file removed"
          : "file restored",
        by: "person",
        ...(restored === null || restored === FOLDER ? {} : { sha256: sha256(restored) }),
      });
      said.push(`${restored === null ? "removed" : "restored"} ${file.rel}`);
    }
    await policy.changes.markUndone(record);
  }
  return ok({ said, forPlanner: { text: line, label: TRUSTED_PRIVATE } });
}

/**
 * What the planner is told of an undo, as the person's words: which changes were taken back, so
 * it does not make them again unasked. A name a run chose, or one the planner was never shown,
 * is counted, not named.
 */
export function undoneLine(policy: FileLabels, plan: UndoPlan): string {
  const parts = plan.records.map((r) => {
    const names = r.files.filter((f) => !f.nameChosen && pathNameShown(policy, f.rel));
    const hidden = r.files.length - names.length;
    const what = r.by === "run" ? "a run's files" : `your ${r.by}`;
    const listed = names.map((f) => f.rel).join(", ");
    const rest = hidden > 0 ? `${listed ? " and " : ""}${plural(hidden, "file")} not named` : "";
    return `${what} (${listed}${rest})`;
  });
  return `(I undid ${plural(plan.records.length, "change")}: ${parts.join("; ")}. ` +
    "The files are as they were before; do not make these changes again unless I ask.)";
}
