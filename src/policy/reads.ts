/**
 * Read-side decisions (docs/contract.md §3.2, §6): the label of bytes as read, the label of a path
 * as a name, whether bytes are text, and the quarantined-read prompt with its three answers. The
 * tools (read_file, list_files, search) describe and act; what they may show is decided here.
 */
import { BINARY_SNIFF_BYTES, decodeText, hasNul } from "../util/text.ts";
import { plural } from "../util/plural.ts";
export { BINARY_SNIFF_BYTES, decodeText, hasNul };
import { staleFileRef } from "./core.ts";
import type {
  Asking,
  FileLabels,
  Recording,
  TrustChanges,
  WorkspaceFiles,
} from "./capabilities.ts";
import { joinLabels, type Label, label, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../util/label.ts";
import type { QuarantinedReadAnswer, QuarantinedReadRequest } from "../person/person.ts";
import type { Decider } from "./audit.ts";
import { doneLine, seatAt, settle, type Settled, type Verdict } from "./verdict.ts";
import { escapeForScreen } from "../util/escape.ts";
import { sha256 } from "../util/hash.ts";
import { changedWhileRead, type CheckedEntry, openedAsChecked, resolvePath } from "./paths.ts";
import type { RefRecord } from "./refs.ts";
import { err, ok, type Result } from "../util/result.ts";

/** How much of a quarantined file the person is shown at the prompt. */
export const PREVIEW_LINES = 10;
export const PREVIEW_BYTES = 4096;

/**
 * The label of these exact bytes of `rel`: a hash-bound trust entry (a vouch or a write) holds
 * only if the bytes still hash to it, so the label cannot drift from what was read.
 */
export function labelOfBytes(policy: FileLabels, rel: string, bytes: Uint8Array): Promise<Label> {
  return labelOf(policy, rel, () => sha256(bytes));
}

/**
 * {@link labelOfBytes} for bytes hashed where they were read (the effect worker's search, which
 * keeps a file's bytes to itself): `hash` must be the SHA-256 of exactly the bytes labeled, or
 * null when it was not computed because {@link labelNeedsHash} said no. A null matches no
 * entry, so an entry bound to a hash since then gives way to the rules: never more trust.
 */
export function labelOfHash(policy: FileLabels, rel: string, hash: string | null): Promise<Label> {
  return labelOf(policy, rel, () => hash);
}

/** Whether the label of `rel`'s bytes depends on their hash (a hash-bound trust entry). */
export function labelNeedsHash(policy: FileLabels, rel: string): boolean {
  return policy.trust.files.get(rel)?.sha256 !== undefined;
}

async function labelOf(policy: FileLabels, rel: string, hash: () => string | null): Promise<Label> {
  await policy.refreshTrust();
  const integrity = await policy.trust.fileIntegrity(rel, () => Promise.resolve(hash()));
  return label(integrity, policy.privatePaths.confidentialityOf(rel));
}

/**
 * Whether the person spelled this path in a trusting trust-map rule (the rule's directory or
 * one of its parents). A name the person wrote is their own words, so it may be shown whatever the
 * directory around it: trusting only `src/` still lets the planner see `src`.
 */
export function personNamed(policy: FileLabels, rel: string): boolean {
  for (const rule of policy.trust.rules) {
    if (!rule.trusted || rule.dir === "." || rule.dir.startsWith("**/")) continue;
    if (rule.dir === rel || rule.dir.startsWith(rel + "/")) return true;
  }
  return false;
}

/**
 * Whether the names inside the directory `dir` may be shown: `dir`'s own name may be
 * (`dirShown`), and the directory is trusted, since a file name carries the integrity of the
 * directory that contains it (§3).
 */
export function namesShownIn(policy: FileLabels, dir: string, dirShown: boolean): boolean {
  return dirShown && policy.nameLabel(dir).integrity === "T";
}

/**
 * Whether the name `rel` may be shown, one step below its directory: it lies in a directory
 * whose names may be shown ({@link namesShownIn}), or it is the person's own words
 * ({@link personNamed}) — unless a run chose it. The one rule for names: the walk applies it
 * entry by entry, and {@link pathNameShown} along a path.
 */
export function nameShown(policy: FileLabels, rel: string, inShownDirectory: boolean): boolean {
  if (policy.trust.nameChosenByRun(rel)) return false;
  return inShownDirectory || personNamed(policy, rel);
}

/**
 * Whether a path may be shown as text, counted from the directory `from` the planner named:
 * every name below `from`, as {@link nameShown} says.
 */
export function pathNameShown(policy: FileLabels, rel: string, from = "."): boolean {
  if (rel === from || rel === ".") return true;
  const segments = rel.split("/");
  let dir = from;
  let shown = true;
  for (let i = from === "." ? 0 : from.split("/").length; i < segments.length; i++) {
    const name = segments.slice(0, i + 1).join("/");
    shown = nameShown(policy, name, namesShownIn(policy, dir, shown));
    dir = name;
  }
  return shown;
}

/** The label of a path shown as text: see {@link pathNameShown}. Names are never private. */
export function pathNameLabel(policy: FileLabels, rel: string, from = "."): Label {
  return pathNameShown(policy, rel, from) ? TRUSTED_PUBLIC : UNTRUSTED_PUBLIC;
}

/** The first lines of a file, escaped so that control and invisible characters show. */
export function previewLines(head: Uint8Array, size: number): string[] {
  if (hasNul(head)) return [`(binary file, ${plural(size, "byte")})`];
  const text = new TextDecoder().decode(head);
  const lines = text.split("\n").slice(0, PREVIEW_LINES);
  if (head.length < size && lines.length === PREVIEW_LINES) lines.push("…");
  return lines.map((l) => escapeForScreen(l.replace(/\r$/, "")));
}

/** The quarantined-read question as decided; the first lines are read when it is put. */
export type QuarantinedQuestion = Omit<QuarantinedReadRequest, "preview">;

/** The facts the quarantined-read prompt is decided on: the file, and who could answer. */
export interface QuarantinedReadFacts {
  tool: string;
  rel: string;
  viaRef: boolean;
  size: number;
  label: Label;
  /** Whether anybody can be asked (docs/contract.md §4), and who answers when asked. */
  canAsk: boolean;
  asker: Decider;
  /** The approval policy file's `quarantinedRead`: the answer where nobody can be asked. */
  fileAnswer: QuarantinedReadAnswer | undefined;
}

/** The prompt's verdicts: one of its three answers, always; nothing is refused or kept. */
export interface QuarantinedReadTerms {
  grants: QuarantinedReadAnswer;
  refusal: never;
  question: QuarantinedQuestion;
  answer: QuarantinedReadAnswer;
  keep: never;
}

/**
 * The quarantined-read prompt (§6). The person is shown the path and the first lines; nobody
 * else sees them. When nobody can be asked the file is not opened at all: the approval policy
 * file answers, or the answer is keep. A "vouch" could only come from a person, never from the
 * policy file; an answer that is none of the three is keep.
 */
export function evaluateQuarantinedRead(f: QuarantinedReadFacts): Verdict<QuarantinedReadTerms> {
  const decided = (given: unknown, byPerson: boolean): Settled<QuarantinedReadTerms> => {
    let answer: QuarantinedReadAnswer = given === "untrusted" || given === "vouch" ? given : "keep";
    if (answer === "vouch" && !byPerson) answer = "keep";
    return {
      kind: "allow",
      grants: answer,
      audit: {
        tool: f.tool,
        routing: { path: f.rel, via_ref: f.viaRef },
        labels: { file: f.label },
        decision: `quarantined read: ${answer}`,
        by: f.asker,
      },
    };
  };
  if (!f.canAsk) return decided(f.fileAnswer ?? "keep", false);
  return {
    kind: "ask",
    question: { path: f.rel, size: f.size, label: f.label },
    answered: (answer) => decided(answer, true),
  };
}

/**
 * Puts the quarantined-read question to the person, with the first lines of the file as
 * resolved: read from `entry`, and only from it, and only when somebody is asked.
 */
export async function askQuarantinedRead(
  policy: Asking & WorkspaceFiles,
  entry: CheckedEntry,
  question: QuarantinedQuestion,
): Promise<QuarantinedReadAnswer> {
  const head = await policy.worker.call({
    op: "read",
    path: entry.abs,
    offset: 0,
    length: Math.min(PREVIEW_BYTES, question.size),
  });
  const same = head.ok && openedAsChecked(entry, head.value.opened);
  return await policy.person.quarantinedRead({
    path: question.path,
    preview: head.ok && same
      ? previewLines(head.value.bytes, question.size)
      : [head.ok ? "(the file changed while it was read)" : "(the file cannot be read)"],
    size: question.size,
    label: question.label,
  });
}

/** A vouch at the prompt: exactly these bytes are trusted, bound to their hash. */
export async function vouchBytes(
  policy: FileLabels & Asking & Recording & TrustChanges,
  tool: string,
  rel: string,
  bytes: Uint8Array,
): Promise<Label> {
  const hash = sha256(bytes);
  await policy.vouchFile(rel, hash);
  await settle(
    doneLine({
      tool,
      routing: { path: rel },
      labels: {},
      decision: "file vouched",
      by: policy.asker,
      sha256: hash,
    }),
    seatAt(policy),
  );
  return label("T", policy.privatePaths.confidentialityOf(rel));
}

/**
 * What {@link readAtMost} found: the bytes, a file too big (and whether by the stat), or an error
 * (by name; {@link CHANGED} for bytes of another file than the one checked).
 */
export type BoundedRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; tooBig: true; size: number; grew: boolean }
  | { ok: false; tooBig: false; error: string };

/** The error name of a read refused by `openedAsChecked` (paths.ts). */
export const CHANGED = "Changed";

/**
 * The bytes of the checked file `entry` when it holds at most `maxBytes` — the one way a file
 * becomes bytes on the main thread. Refused from a stat (`knownSize` when the caller has just
 * taken one) before anything is read; the worker's read is capped at `maxBytes + 1`, so a file
 * that grew after the stat is refused too (`grew`), never read whole; and bytes of any other
 * file than the entry checked (it became a link, or was replaced) are refused ({@link CHANGED}),
 * so a label computed for the entry is never given to them. Errors give only a name: a message may
 * hold the real path.
 */
export async function readAtMost(
  policy: WorkspaceFiles,
  entry: CheckedEntry,
  maxBytes: number,
  knownSize?: number,
): Promise<BoundedRead> {
  let size = knownSize;
  if (size === undefined) {
    const info = await policy.worker.call({ op: "stat", path: entry.abs });
    if (!info.ok) return { ok: false, tooBig: false, error: info.error.name };
    size = info.value.size;
  }
  if (size > maxBytes) return { ok: false, tooBig: true, size, grew: false };
  const read = await policy.worker.call({ op: "read", path: entry.abs, maxBytes });
  if (!read.ok) return { ok: false, tooBig: false, error: read.error.name };
  if (!openedAsChecked(entry, read.value.opened)) {
    return { ok: false, tooBig: false, error: CHANGED };
  }
  const bytes = read.value.bytes;
  if (bytes.length > maxBytes) return { ok: false, tooBig: true, size: bytes.length, grew: true };
  return { ok: true, bytes };
}

/** A too-big {@link BoundedRead} as the planner reads it, about `shownAs` (never a hidden path). */
export function tooBigMessage(shownAs: string, r: { size: number; grew: boolean }, max: number) {
  return r.grew
    ? `${shownAs} grew past ${max} bytes while it was being read, more than is accepted here; ` +
      `the read stopped there`
    : `${shownAs} is ${r.size} bytes, more than the ${max} accepted here; it was not read`;
}

/** The bytes behind a file reference, with the label they carry where they really are. */
export interface FileRefBytes {
  bytes: Uint8Array;
  label: Label;
  /** The real workspace-relative path the bytes were read from. */
  rel: string;
}

/**
 * Opens the file a `file` or `file_name` reference stands for — the one place that does. The
 * path is resolved again, since the file may have become a link since the reference was made;
 * the bytes carry the join of the reference's label and the labels of both the name and the
 * real place, never less. At most `maxBytes` are accepted, as {@link readAtMost} enforces:
 * every consumer has a limit, so none can be left out.
 */
export async function readFileRef(
  policy: FileLabels & WorkspaceFiles,
  ref: RefRecord,
  maxBytes: number,
): Promise<Result<FileRefBytes>> {
  const name = `ref:${ref.id}`;
  if ((ref.kind !== "file" && ref.kind !== "file_name") || ref.path === undefined) {
    return err(`${name} does not name a file`);
  }
  if (ref.entryType === "directory") return err(`${name} is a directory; it has no content`);
  const where = await resolvePath(policy.workspace, ref.path);
  if (!where.ok) return err(staleFileRef(ref));
  if (where.value.kind !== "file") return err(`${name} is no longer a file`);
  const read = await readAtMost(policy, where.value, maxBytes);
  if (!read.ok) {
    return err(
      read.tooBig
        ? tooBigMessage(name, read, maxBytes)
        : read.error === CHANGED
        ? changedWhileRead(name)
        : `${name} can no longer be read (${read.error})`,
    );
  }
  const bytes = read.bytes;
  const label = joinLabels(
    ref.label,
    await labelOfBytes(policy, ref.path, bytes),
    await labelOfBytes(policy, where.value.rel, bytes),
  );
  return ok({ bytes, label, rel: where.value.rel });
}
