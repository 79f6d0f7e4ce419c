/**
 * Write-side decisions (docs/contract.md §3.2, §5.3, §10, §12): where a write may land, which bytes
 * and label a `contents_ref` stands for (a processor answer only to the file it is bound to), the
 * approval of every write and edit (by the person, or in advance by the approval policy file's
 * `writes` globs), the diff the person is shown, and the atomic write itself, checked by hash so a
 * file that changed after approval is never overwritten unseen. write_file is decided here whole
 * ({@link writeFile}); edit_file's own rules are in edits.ts.
 */
import { countLines } from "./outputs.ts";
import { structuredPatch } from "diff";
import type {
  Asking,
  ChangeRecords,
  Deciding,
  FileLabels,
  Recording,
  References,
  WorkspaceFiles,
} from "./capabilities.ts";
import { describeKind } from "./core.ts";
import { type Label, TRUSTED_PRIVATE, TRUSTED_PUBLIC } from "../util/label.ts";
import { ownWordsLabel } from "./driver_labels.ts";
import { writeAllowed } from "./approvals_file.ts";
import { isGitPath } from "./git_dir.ts";
import { CHANGED, decodeText, readAtMost, readFileRef, tooBigMessage } from "./reads.ts";
import type { Decider } from "./audit.ts";
import type { RefRecord } from "./refs.ts";
import { type Routed, routeFile } from "./routing.ts";
import { changedWhileRead, type ResolvedPath, resolveInPlace, resolvePath } from "./paths.ts";
import { sha256 } from "../util/hash.ts";
import { recordFileChange } from "./change_log.ts";
import { err, ok, type Result } from "../util/result.ts";
import type { Approval, ShownWhole, WriteApprovalRequest, WritePreview } from "../person/person.ts";
import {
  type AuditLine,
  seatAt,
  settle,
  type Settled,
  type Terms,
  type Verdict,
} from "./verdict.ts";

export type WriteTool = "write_file" | "edit_file";

/** Past this size a diff is summarised rather than computed (it is for a person to read). */
const DIFF_MAX_BYTES = 512 * 1024;
/**
 * The most a write puts in a file, or reads of the file it replaces (docs/decisions.md): as
 * much as read_file pages through and run stdin takes, so a 256 MiB file is refused unread.
 */
export const MAX_WRITE_BYTES = 64 * 1024 * 1024;
const PREVIEW_MAX_LINES = 400;
const DIFF_MAX_EDITS = 5_000;
const DIFF_TIMEOUT_MS = 1_000;

/**
 * Whether a routed destination can receive a write. A reference must name a file (not a
 * directory), the place must not be a directory or a device, and nothing is written into
 * `.git` (hooks and config there would run unapproved code).
 */
export function checkDestination(routed: Routed, shownAs: string): Result<void> {
  const { path, viaRef } = routed;
  if (viaRef?.entryType === "directory" || path.kind === "directory") {
    return err(`${shownAs} is a directory; give a file`);
  }
  if (path.kind === "other") return err(`${shownAs} is not a regular file`);
  if (isGitPath(path.rel)) return err("nothing is written inside .git");
  return ok(undefined);
}

export interface WriteSource {
  bytes: Uint8Array;
  /** The label the written content carries, recorded on the file afterwards. */
  label: Label;
}

/**
 * The bytes behind a `contents_ref`, for the destination `dest`. A processor answer may be
 * written only to the file it is about; one about nothing goes nowhere. A reference to a file
 * is consumed now: its current bytes are copied.
 */
export async function contentFromRef(
  policy: FileLabels & WorkspaceFiles & References,
  ref: RefRecord,
  dest: string,
): Promise<Result<WriteSource>> {
  const name = `ref:${ref.id}`;
  switch (ref.kind) {
    case "processor_answer":
      if (ref.about === null || ref.about === undefined) {
        return err(
          `${name} is a processor answer that names no document, so it can be written nowhere`,
        );
      }
      if (ref.about !== dest) {
        return err(
          `${name} is a processor answer about another file; it may be written only to the file it is about`,
        );
      }
      return await storedBytes(policy, ref);
    case "file_content":
    case "command_output":
      return await storedBytes(policy, ref);
    case "file":
    case "file_name": {
      if (ref.entryType === "directory" || ref.path === undefined) {
        return err(`${name} is ${describeKind(ref)}; it has no content to write`);
      }
      const read = await readFileRef(policy, ref, MAX_WRITE_BYTES);
      return read.ok ? ok({ bytes: read.value.bytes, label: read.value.label }) : read;
    }
  }
}

async function storedBytes(policy: References, ref: RefRecord): Promise<Result<WriteSource>> {
  if (!ref.hasBytes) return err(`ref:${ref.id} holds no content`);
  if (ref.size !== undefined && ref.size > MAX_WRITE_BYTES) {
    return err(tooBigMessage(`ref:${ref.id}`, { size: ref.size, grew: false }, MAX_WRITE_BYTES));
  }
  try {
    return ok({ bytes: await policy.refs.bytes(ref), label: ref.label });
  } catch {
    return err(`the content of ref:${ref.id} is no longer stored; nothing was written`);
  }
}

function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

/**
 * What the person is shown of a change to an existing text file: the hunks of a diff, as data
 * (the person's screen escapes, numbers and colours them, so what the policy decides to show and
 * how it is drawn stay in one place each). A rewrite too large to diff quickly shows the new
 * contents instead.
 */
export function diffPreview(rel: string, before: string, after: string): WritePreview {
  const whole = () =>
    contentsPreview(rel, after, { kind: "too many changes", lines: lines(before).length });
  if (before.length > DIFF_MAX_BYTES || after.length > DIFF_MAX_BYTES) return whole();
  // Bounded, so a large rewrite cannot stall the approval (an unbounded diff can take minutes).
  const patch = structuredPatch(`a/${rel}`, `b/${rel}`, before, after, "", "", {
    context: 3,
    maxEditLength: DIFF_MAX_EDITS,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (patch === undefined) return whole();
  return {
    kind: "diff",
    oldName: `a/${rel}`,
    newName: `b/${rel}`,
    hunks: patch.hunks.map(({ oldStart, oldLines, newStart, newLines, lines }) => ({
      oldStart,
      oldLines,
      newStart,
      newLines,
      lines,
    })),
  };
}

/** New contents shown whole (a new file, or `instead` of a diff), long ones shortened visibly. */
export function contentsPreview(
  rel: string,
  text: string,
  instead: ShownWhole | null = null,
): WritePreview {
  const body = lines(text);
  return {
    kind: "contents",
    name: rel,
    lineCount: body.length,
    lines: body.slice(0, PREVIEW_MAX_LINES),
    instead,
  };
}

/** The preview of a write of `after` over `current` (null: no file yet). */
export function previewOf(rel: string, current: Uint8Array | null, after: string): WritePreview {
  if (current === null) return contentsPreview(rel, after);
  const before = decodeText(current);
  return before === null
    ? contentsPreview(rel, after, { kind: "binary", bytes: current.length })
    : diffPreview(rel, before, after);
}

export interface ApprovalAsk {
  tool: WriteTool;
  rel: string;
  viaRef: boolean;
  isNew: boolean;
  preview: WritePreview;
  label: Label;
}

export interface WriteDecision {
  approved: boolean;
  by: Decider;
  reason?: string;
}

/** The facts a write's approval is decided on: the write, and who could approve it. */
export interface WriteApprovalFacts extends ApprovalAsk {
  /** A `writes` glob of the approval policy file matches the real destination. */
  fileAllows: boolean;
  /** Whether anybody can be asked (docs/contract.md §12.2), and who answers when asked. */
  canAsk: boolean;
  asker: Decider;
}

/** A write approval's verdicts: who approved, or who refused and why; the person's answer. */
interface WriteTerms {
  grants: { by: Decider };
  refusal: { by: Decider; reason?: string };
  question: WriteApprovalRequest;
  answer: Approval;
  keep: never;
}

/**
 * Every write and edit is approved before it happens (docs/contract.md §12.1, §12.2): in advance by
 * a `writes` glob of the approval policy file, matched against the real destination (also for a
 * path_ref), else by whoever is asked. Either way the decision line names the real destination;
 * where nobody is at the screen, the person is told what was decided.
 */
export function evaluateWrite(f: WriteApprovalFacts): Verdict<WriteTerms> {
  const line = (decision: string, by: Decider, reason?: string): AuditLine => ({
    tool: f.tool,
    routing: { path: f.rel, via_ref: f.viaRef, new_file: f.isNew },
    labels: { content: f.label },
    decision,
    by,
    reason,
  });
  if (f.fileAllows) {
    return {
      kind: "allow",
      grants: { by: "policy-file" },
      audit: line("write approved", "policy-file"),
      notice: `${f.tool} ${f.rel}: approved by the approval policy file`,
    };
  }
  const told = (said: string) => f.canAsk ? {} : { notice: `${f.tool} ${f.rel}: ${said}` };
  return {
    kind: "ask",
    question: {
      tool: f.tool,
      path: f.rel,
      viaRef: f.viaRef,
      isNew: f.isNew,
      preview: f.preview,
      label: f.label,
    },
    answered: (answer): Settled<WriteTerms> =>
      answer.approved
        ? {
          kind: "allow",
          grants: { by: f.asker },
          audit: line("write approved", f.asker),
          ...told("approved"),
        }
        : {
          kind: "refuse",
          refusal: { by: f.asker, reason: answer.reason },
          audit: line("write refused", f.asker, answer.reason),
          ...told("declined"),
        },
  };
}

/** Approves a write: the policy file's globs and who can be asked, decided, asked and recorded. */
export async function approveWrite(
  policy: Asking & Recording,
  ask: ApprovalAsk,
): Promise<WriteDecision> {
  const verdict = evaluateWrite({
    ...ask,
    fileAllows: policy.approvals !== null && writeAllowed(policy.approvals, ask.rel),
    canAsk: policy.canAsk,
    asker: policy.asker,
  });
  const settled = await settle(
    verdict,
    seatAt<WriteTerms>(policy, (question) => policy.person.approveWrite(question)),
  );
  return settled.kind === "allow"
    ? { approved: true, by: settled.grants.by }
    : { approved: false, ...settled.refusal };
}

/** The audit line of a write made: the content's label, and the hash of the bytes written. */
export function writeMade(
  tool: WriteTool,
  rel: string,
  written: Label,
  made: { sha256: string; created: boolean },
): Settled<Terms> {
  return {
    kind: "allow",
    grants: undefined,
    audit: {
      tool,
      routing: { path: rel },
      labels: { content: written },
      decision: made.created ? "file created" : "file written",
      by: "rule",
      sha256: made.sha256,
    },
  };
}

export type WriteOutcome =
  | { status: "written"; sha256: string; created: boolean }
  | { status: "changed"; message: string }
  /** Its path no longer resolves to itself: nothing was written (paths.ts, resolveInPlace). */
  | { status: "moved"; message: string }
  | { status: "failed"; name: string; message: string };

/**
 * Writes atomically through the worker, only if the file still has the bytes `current` the
 * person approved a change to (null: it must still not exist). Records the written content's
 * label on the file in the trust map (§5), and the bytes replaced for `/undo` (undo.ts).
 */
export async function commitWrite(
  policy: ChangeRecords & Asking & Recording & WorkspaceFiles,
  tool: WriteTool,
  rel: string,
  bytes: Uint8Array,
  current: Uint8Array | null,
  written: Label,
): Promise<WriteOutcome> {
  // Resolved again: the person may have looked at the diff for minutes, and a folder on the
  // way may have become a link since.
  const where = await resolveInPlace(policy.workspace, rel);
  if (!where.ok) return { status: "moved", message: where.error };
  const result = await policy.worker.call({
    op: "write",
    path: where.value.abs,
    bytes,
    expectSha256: current === null ? null : sha256(current),
    makeParents: true,
    within: where.value.folder,
  });
  if (!result.ok) {
    if (result.error.name === "Changed") {
      return { status: "changed", message: result.error.message };
    }
    return { status: "failed", name: result.error.name, message: result.error.message };
  }
  const trustBefore = await policy.recordWrite(rel, written, result.value.sha256);
  await recordFileChange(policy.changes, tool, rel, current, result.value.sha256, trustBefore);
  await settle(writeMade(tool, rel, written, result.value), seatAt(policy));
  return { status: "written", sha256: result.value.sha256, created: result.value.created };
}

/** A write's destination, routed and checked, and how the planner may be told about it. */
export interface WriteTarget {
  routed: Routed;
  /** The planner's own spelling of the path, or `ref:N`: never where a link led. */
  shownAs: string;
}

/**
 * Routes exactly one of `path` and `path_ref`, then applies the rules for a destination
 * ({@link checkDestination}). Failures about a reference name the reference only.
 */
export async function routeWriteTarget(
  policy: WorkspaceFiles,
  path: string | undefined,
  pathRef: string | undefined,
): Promise<Result<WriteTarget>> {
  const target = await routeFile(policy, path, pathRef);
  if (!target.ok) return target;
  const dest = checkDestination(target.value.routed, target.value.shownAs);
  return dest.ok ? target : dest;
}

/** What a write or an edit came to, for the tool to render. */
export type WriteRefusal =
  /** The rule or the person said no; `reason` is theirs, and `label` what it carries. */
  | { status: "refused"; shownAs: string; reason?: string; label: Label }
  /** The write could not be made; `error` is for the planner as it stands. */
  | { status: "failed"; error: string };

export type WriteFileResult =
  | {
    status: "written";
    shownAs: string;
    created: boolean;
    bytes: number;
    lines: number;
    /** What saying so carries: Brave Bot's own words (the file's name as shown, counts). */
    label: Label;
  }
  | WriteRefusal;

/** What the planner asks write_file for: the schema's fields, exactly one of each pair given. */
export interface WriteFileRequest {
  path?: string;
  path_ref?: string;
  contents?: string;
  contents_ref?: string;
}

/**
 * write_file: routes the destination, resolves the content (a reference's bytes and label, or
 * the planner's text, which carries the planner context's label: docs/contract.md §3.2), and has it
 * approved and written.
 */
export async function writeFile(
  policy: Deciding & ChangeRecords,
  req: WriteFileRequest,
): Promise<WriteFileResult> {
  const target = await routeWriteTarget(policy, req.path, req.path_ref);
  if (!target.ok) return failed(target.error);
  const rel = target.value.routed.path.rel;
  let source: WriteSource;
  if (req.contents_ref !== undefined) {
    const found = policy.refs.lookup(req.contents_ref);
    if (!found.ok) return failed(found.error);
    const from = await contentFromRef(policy, found.value, rel);
    if (!from.ok) return failed(from.error);
    source = from.value;
  } else {
    source = { bytes: new TextEncoder().encode(req.contents!), label: policy.plannerWords };
  }
  const done = await approveAndWrite(policy, {
    tool: "write_file",
    target: target.value,
    produce: () => Promise.resolve(source),
  });
  if (done.status !== "written") return done;
  return {
    status: "written",
    shownAs: target.value.shownAs,
    created: done.created,
    bytes: source.bytes.length,
    lines: countLines(source.bytes),
    label: ownWordsLabel(),
  };
}

/** Lines as a person counts them: a final newline ends the last line rather than starting one. */
export function failed(error: string): WriteRefusal {
  return { status: "failed", error };
}

/** A refusal; the person's own reason is their words, so it carries `(T,priv)`. */
function refusal(shownAs: string, by: Decider, reason: string | undefined): WriteRefusal {
  return {
    status: "refused",
    shownAs,
    reason,
    label: by === "person" && reason ? TRUSTED_PRIVATE : TRUSTED_PUBLIC,
  };
}

export interface PlannedWrite<S extends WriteSource> {
  tool: WriteTool;
  target: WriteTarget;
  /** The new bytes, given the current ones (null: no file); a string refuses with it. */
  produce(current: Uint8Array | null): Promise<S | string>;
}

/**
 * Ask, then write, checked by hash: if the file changed between the approval and the write,
 * the person is asked once more about the new state; a second change refuses.
 */
export async function approveAndWrite<S extends WriteSource>(
  policy: ChangeRecords & Asking & Recording & WorkspaceFiles,
  plan: PlannedWrite<S>,
): Promise<{ status: "written"; created: boolean; produced: S } | WriteRefusal> {
  const { routed, shownAs } = plan.target;
  const { rel, abs } = routed.path;
  const viaRef = routed.viaRef !== null;
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = await policy.worker.call({ op: "lstat", path: abs });
    let current: Uint8Array | null = null;
    if (now.ok) {
      if (now.value.kind !== "file") return failed(`${shownAs} is not a regular file`);
      // The file being replaced is read for its diff and hash, and bounded like the new content,
      // from the file as resolved: the routing's entry, or, when that was missing or this asks
      // again after a change, the file at the same real place now. Its label is of those bytes.
      const entry = attempt === 0 && routed.path.id !== null ? routed.path : await resolveAgain(
        policy,
        routed.path,
      );
      const read = entry === null
        ? { ok: false as const, tooBig: false as const, error: CHANGED }
        : await readAtMost(policy, entry, MAX_WRITE_BYTES, now.value.size);
      if (!read.ok) {
        return failed(
          read.tooBig
            ? `${tooBigMessage(shownAs, read, MAX_WRITE_BYTES)}; nothing was written`
            : read.error === CHANGED
            ? `${changedWhileRead(shownAs)}; nothing was written`
            : `${shownAs} cannot be read (${read.error})`,
        );
      }
      current = read.bytes;
    } else if (now.error.name !== "NotFound") {
      return failed(`${shownAs} cannot be examined (${now.error.name})`);
    }
    const produced = await plan.produce(current);
    if (typeof produced === "string") return failed(produced);
    const after = decodeText(produced.bytes);
    if (after === null) return failed("the new contents are not UTF-8 text");
    const decision = await approveWrite(policy, {
      tool: plan.tool,
      rel,
      viaRef,
      isNew: current === null,
      preview: previewOf(rel, current, after),
      label: produced.label,
    });
    if (!decision.approved) return refusal(shownAs, decision.by, decision.reason);
    const outcome = await commitWrite(
      policy,
      plan.tool,
      rel,
      produced.bytes,
      current,
      produced.label,
    );
    if (outcome.status === "written") {
      return { status: "written", created: outcome.created, produced };
    }
    if (outcome.status === "moved") {
      return failed(`${shownAs} ${outcome.message}; nothing was written`);
    }
    if (outcome.status === "failed") {
      // Only the error's name: its message may hold the real path behind a path_ref.
      return failed(`${shownAs} could not be written (${outcome.name}); nothing changed`);
    }
    policy.person.notice(
      `${plan.tool} ${rel}: ${outcome.message}; ${attempt === 0 ? "asking again" : "refused"}`,
    );
  }
  return failed(`${shownAs} changed again after it was approved; nothing was written — try again`);
}

/** The file at `path`'s real place as it is now, or null when its path resolves elsewhere. */
async function resolveAgain(
  policy: WorkspaceFiles,
  path: ResolvedPath,
): Promise<ResolvedPath | null> {
  const again = await resolvePath(policy.workspace, path.rel);
  return again.ok && again.value.abs === path.abs && again.value.kind === "file"
    ? again.value
    : null;
}
