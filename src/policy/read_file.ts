/**
 * read_file's decision (docs/contract.md §6): what of a file the planner may be given. A trusted
 * file's bytes come back with their label; a file nobody trusts is not opened before the
 * quarantined-read prompt, and each answer is carried out here — keep gives a reference and
 * its size, "show as untrusted" gives the bytes at an untrusted label (the driver, placing the
 * result, taints the planner context), a vouch trusts these exact bytes. Each answer carries the
 * label of what the tool renders of it. The tool pages and renders what it is given.
 */
import type {
  Asking,
  FileLabels,
  Recording,
  References,
  TrustChanges,
  WorkspaceFiles,
} from "./capabilities.ts";
import {
  askQuarantinedRead,
  CHANGED,
  decodeText,
  evaluateQuarantinedRead,
  labelOfBytes,
  type QuarantinedQuestion,
  type QuarantinedReadFacts,
  readAtMost,
  tooBigMessage,
  vouchBytes,
} from "./reads.ts";
import type { QuarantinedReadAnswer } from "../person/person.ts";
import { seatAt, settle, type Verdict } from "./verdict.ts";
import { changedWhileRead, openedAsChecked, type ResolvedPath } from "./paths.ts";
import type { RefRecord } from "./refs.ts";
import { routeFile } from "./routing.ts";
import { type Label, label, sameLabel } from "../util/label.ts";
import { ownWordsLabel } from "./driver_labels.ts";

/** Larger files are not paged through read_file (search, or a processor, can handle them). */
export const READ_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** What read_file asks about: exactly one of the two. */
export interface ReadTarget {
  path?: string;
  path_ref?: string;
}

/** What the planner may be given of a file; `shownAs` is how it may be told about the file. */
export type FileRead =
  /** UTF-8 text, with the label the shown lines carry. */
  | {
    kind: "text";
    text: string;
    label: Label;
    shownAs: string;
    /** The person chose "show as untrusted": the planner is to treat it as data. */
    asUntrusted: boolean;
  }
  /**
   * Not UTF-8 text: only its size may be said, in Brave Bot's own words — or, shown as untrusted
   * at the person's choice, at the untrusted label the text would have had.
   */
  | { kind: "binary"; size: number; shownAs: string; label: Label }
  /** Kept quarantined: the planner holds `ref:<ref>` and the size (Brave Bot's own words). */
  | { kind: "kept"; ref: number; size: number; shownAs: string; label: Label }
  | { kind: "error"; message: string };

interface Quarantined {
  path: ResolvedPath;
  viaRef: RefRecord | null;
  shownAs: string;
  label: Label;
  size: number;
}

/** The facts read_file is decided on: the file, the label of what was read of it, who answers. */
export type ReadFileFacts = Omit<QuarantinedReadFacts, "tool">;

/** How the file goes to the planner: trusted as read, or as the quarantined-read prompt says. */
interface ReadFileTerms {
  grants: "trusted" | QuarantinedReadAnswer;
  refusal: never;
  question: QuarantinedQuestion;
  answer: QuarantinedReadAnswer;
  keep: never;
}

/**
 * read_file (docs/contract.md §6): a file whose bytes as read are trusted is shown; any other goes
 * to the quarantined-read prompt, unopened where its label was already untrusted.
 */
export function evaluateReadFile(f: ReadFileFacts): Verdict<ReadFileTerms> {
  if (f.label.integrity !== "T") return evaluateQuarantinedRead({ tool: "read_file", ...f });
  return {
    kind: "allow",
    grants: "trusted",
    audit: {
      tool: "read_file",
      routing: { path: f.rel, via_ref: f.viaRef },
      labels: { file: f.label },
      decision: "shown (trusted)",
      by: "rule",
    },
  };
}

/** Decides a read_file call: routing, the label, the prompt and its answer, the audit entries. */
export async function decideReadFile(
  policy: FileLabels & Asking & Recording & WorkspaceFiles & References & TrustChanges,
  target: ReadTarget,
): Promise<FileRead> {
  const routedFile = await routeFile(policy, target.path, target.path_ref);
  if (!routedFile.ok) return error(routedFile.error);
  const { routed, shownAs } = routedFile.value;
  const { path, viaRef } = routed;
  if (viaRef?.entryType === "directory" || path.kind === "directory") {
    return error(`${shownAs} is a directory; use list_files for a directory`);
  }
  if (path.kind === "missing") return error(`${shownAs} does not exist`);
  if (path.kind !== "file") return error(`${shownAs} is not a regular file`);
  const tooBig = (size: number) =>
    error(
      `${shownAs} is ${size} bytes, more than read_file pages through (${READ_FILE_MAX_BYTES}); use search to find the lines you need`,
    );

  let fileLabel = await policy.fileLabel(path.rel, path);
  // A trusted file's bytes, read before the decision; nothing else is opened before the prompt.
  let read: Uint8Array | null = null;
  let size: number;
  if (fileLabel.integrity === "T") {
    // One round trip: the stat, and the bytes unless the file is too big.
    const got = await policy.worker.call({
      op: "read",
      path: path.abs,
      withStat: true,
      maxBytes: READ_FILE_MAX_BYTES,
    });
    if (!got.ok) return error(`${shownAs} cannot be read (${got.error.name})`);
    if (got.value.stat.size > READ_FILE_MAX_BYTES) return tooBig(got.value.stat.size);
    read = got.value.bytes;
    if (read === null) return error(`${shownAs}: the file cannot be read (not a regular file)`);
    // The label was computed for the file resolved: it holds only for bytes read from it.
    if (!openedAsChecked(path, got.value.opened)) return error(changedWhileRead(shownAs));
    // The decision holds for the bytes actually read, not for whatever was hashed before.
    fileLabel = await labelOfBytes(policy, path.rel, read);
    size = read.length;
  } else {
    // Not trusted: nothing but a stat touches the file before the person answers.
    const stat = await policy.worker.call({ op: "stat", path: path.abs });
    if (!stat.ok) return error(`${shownAs} cannot be read (${stat.error.name})`);
    if (stat.value.size > READ_FILE_MAX_BYTES) return tooBig(stat.value.size);
    size = stat.value.size;
  }
  const settled = await settle(
    evaluateReadFile({
      rel: path.rel,
      viaRef: viaRef !== null,
      size,
      label: fileLabel,
      canAsk: policy.canAsk,
      asker: policy.asker,
      fileAnswer: policy.approvals?.quarantinedRead,
    }),
    seatAt<ReadFileTerms>(policy, (question) => askQuarantinedRead(policy, path, question)),
  );
  const as = settled.kind === "allow" ? settled.grants : settled.refusal;
  if (as === "trusted") return given(read!, shownAs, fileLabel, false);
  return await quarantined(policy, { path, viaRef, shownAs, label: fileLabel, size }, as);
}

/** What the quarantined-read prompt's answer does (docs/contract.md §6). */
async function quarantined(
  policy: FileLabels & Asking & Recording & WorkspaceFiles & References & TrustChanges,
  q: Quarantined,
  answer: QuarantinedReadAnswer,
): Promise<FileRead> {
  const { path, viaRef, shownAs, size } = q;
  if (answer === "keep") {
    // Reading a kept file again through its own reference hands back the same reference.
    const ref = viaRef?.kind === "file" && viaRef.path === path.rel &&
        sameLabel(viaRef.label, q.label)
      ? viaRef
      : await policy.refs.add({
        kind: "file",
        label: q.label,
        path: path.rel,
        size,
        tool: "read_file",
      });
    return { kind: "kept", ref: ref.id, size, shownAs, label: ownWordsLabel() };
  }
  // The answer was given for the file as it is now: read it once and use those bytes.
  const read = await readAtMost(policy, path, READ_FILE_MAX_BYTES);
  if (!read.ok) {
    return error(
      read.tooBig
        ? tooBigMessage(shownAs, read, READ_FILE_MAX_BYTES)
        : read.error === CHANGED
        ? changedWhileRead(shownAs)
        : `${shownAs}: the file cannot be read (${read.error})`,
    );
  }
  if (answer === "vouch") {
    const vouched = await vouchBytes(policy, "read_file", path.rel, read.bytes);
    return given(read.bytes, shownAs, vouched, false);
  }
  const current = await labelOfBytes(policy, path.rel, read.bytes);
  // The result carries the untrusted label; the driver, placing it, taints the context.
  const untrusted = label("U", current.confidentiality);
  return given(read.bytes, shownAs, untrusted, true);
}

/** The bytes as the planner is given them: text with its label, or a binary file's size. */
function given(bytes: Uint8Array, shownAs: string, l: Label, asUntrusted: boolean): FileRead {
  const text = decodeText(bytes);
  if (text === null) {
    return {
      kind: "binary",
      size: bytes.length,
      shownAs,
      label: asUntrusted ? l : ownWordsLabel(),
    };
  }
  return { kind: "text", text, label: l, shownAs, asUntrusted };
}

function error(message: string): FileRead {
  return { kind: "error", message };
}
