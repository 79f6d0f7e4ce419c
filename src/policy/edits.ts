/**
 * edit_file's decisions (docs/tools.md#edit_file): an exact passage, matched byte for byte,
 * replaced in a trusted file. Locating a passage is a comparison, and a comparison is a decision,
 * so a file nobody vouched for is refused before its bytes are compared with anything. The edit
 * refuses rather than guesses: zero or several occurrences (without replace_all) say which. The
 * approval and the hash-checked write are write_file's (writes.ts).
 */
import { Buffer } from "node:buffer";
import type {
  Asking,
  ChangeRecords,
  FileLabels,
  PlannerContext,
  Recording,
  WorkspaceFiles,
} from "./capabilities.ts";
import { joinLabels, type Label } from "../util/label.ts";
import { decodeText, labelOfBytes } from "./reads.ts";
import { ownWordsLabel } from "./driver_labels.ts";
import {
  approveAndWrite,
  failed,
  routeWriteTarget,
  type WriteRefusal,
  type WriteSource,
  type WriteTarget,
} from "./writes.ts";
import { allowQuietly, refuseQuietly, seatAt, settle, type Verdict } from "./verdict.ts";

/** What the planner asks edit_file for: the schema's fields. */
export interface EditFileRequest {
  path?: string;
  path_ref?: string;
  old_text: string;
  new_text: string;
  replace_all?: boolean;
}

export type EditFileResult =
  /** `label`: what saying so carries, Brave Bot's own words (the file's name as shown, a count). */
  | { status: "edited"; shownAs: string; replaced: number; label: Label }
  | WriteRefusal;

/** edit_file: routes the file, decides the edit on its current bytes, has it approved and written. */
export async function editFile(
  policy: ChangeRecords & FileLabels & PlannerContext & Asking & Recording & WorkspaceFiles,
  req: EditFileRequest,
): Promise<EditFileResult> {
  const target = await routeWriteTarget(policy, req.path, req.path_ref);
  if (!target.ok) return failed(target.error);
  const { shownAs } = target.value;
  if (!target.value.routed.path.exists) {
    return failed(
      `${shownAs} does not exist; edit_file changes an existing file (write_file creates one)`,
    );
  }
  const done = await approveAndWrite(policy, {
    tool: "edit_file",
    target: target.value,
    produce: (current) => decideEdit(policy, target.value, current, req),
  });
  if (done.status !== "written") return done;
  return { status: "edited", shownAs, replaced: done.produced.replaced, label: ownWordsLabel() };
}

/** The facts an edit is decided on: the file as it is now, and the label of the planner's words. */
export interface EditFacts {
  shownAs: string;
  rel: string;
  viaRef: boolean;
  /** The file's current bytes and their label; null: it no longer exists. */
  file: { bytes: Uint8Array; label: Label } | null;
  plannerWords: Label;
  edit: Pick<EditFileRequest, "old_text" | "new_text" | "replace_all">;
}

/** An edit's verdicts: the bytes it makes, or the refusal the planner is told. */
interface EditTerms {
  grants: WriteSource & { replaced: number };
  refusal: string;
  question: never;
  answer: never;
  keep: never;
}

/**
 * Whether `edit` may be made to the file, and the bytes it makes: only in a trusted text file
 * (the refusal of an untrusted one is audited, and comes before any comparison), where old_text
 * occurs once, or at all with replace_all. The unchanged bytes keep the file's label; new_text
 * carries the planner context's.
 */
export function evaluateEdit(f: EditFacts): Verdict<EditTerms> {
  if (f.file === null) return refuseQuietly(`${f.shownAs} no longer exists`);
  if (f.file.label.integrity !== "T") {
    return {
      kind: "refuse",
      refusal: `edit_file requires a trusted file and ${f.shownAs} is not trusted; to change a ` +
        "file you may not read, use spawn_processor and then write_file with contents_ref",
      audit: {
        tool: "edit_file",
        routing: { path: f.rel, via_ref: f.viaRef },
        labels: { file: f.file.label },
        decision: "refused: file not trusted",
        by: "rule",
      },
    };
  }
  if (decodeText(f.file.bytes) === null) {
    return refuseQuietly(`${f.shownAs} is not UTF-8 text; it cannot be edited`);
  }
  const replaced = replacePassage(
    f.file.bytes,
    new TextEncoder().encode(f.edit.old_text),
    new TextEncoder().encode(f.edit.new_text),
    f.edit.replace_all ?? false,
  );
  if (replaced.found === 0) {
    return refuseQuietly(
      `old_text does not occur in ${f.shownAs} (matched byte for byte: check whitespace and indentation); nothing was changed`,
    );
  }
  if (replaced.bytes === null) {
    return refuseQuietly(
      `old_text occurs ${replaced.found} times in ${f.shownAs}; include more surrounding text to make it unique, or set replace_all; nothing was changed`,
    );
  }
  return allowQuietly({
    bytes: replaced.bytes,
    label: joinLabels(f.file.label, f.plannerWords),
    replaced: replaced.found,
  });
}

/**
 * Decides `edit` on the file's `current` bytes (null: no file): their label is looked up, the
 * edit evaluated, a refusal recorded. Answers the bytes to write, or the refusal as a string.
 */
export async function decideEdit(
  policy: FileLabels & PlannerContext & Asking & Recording,
  target: WriteTarget,
  current: Uint8Array | null,
  edit: EditFacts["edit"],
): Promise<(WriteSource & { replaced: number }) | string> {
  const { routed, shownAs } = target;
  const rel = routed.path.rel;
  const file = current === null
    ? null
    : { bytes: current, label: await labelOfBytes(policy, rel, current) };
  const verdict = evaluateEdit({
    shownAs,
    rel,
    viaRef: routed.viaRef !== null,
    file,
    plannerWords: policy.plannerWords,
    edit,
  });
  const settled = await settle(verdict, seatAt(policy));
  return settled.kind === "allow" ? settled.grants : settled.refusal;
}

/**
 * Replaces `oldBytes` in `hay` by `newBytes`: the one occurrence, or every one with `all`.
 * `bytes` is null when nothing is replaced (none found, or several without `all`).
 */
export function replacePassage(
  hay: Uint8Array,
  oldBytes: Uint8Array,
  newBytes: Uint8Array,
  all: boolean,
): { found: number; bytes: Uint8Array | null } {
  const at = occurrences(hay, oldBytes);
  if (at.length === 0 || (at.length > 1 && !all)) return { found: at.length, bytes: null };
  return { found: at.length, bytes: splice(hay, at, oldBytes.length, newBytes) };
}

/** Offsets of every occurrence of `needle`, non-overlapping, left to right. */
export function occurrences(hay: Uint8Array, needle: Uint8Array): number[] {
  const buf = Buffer.from(hay.buffer, hay.byteOffset, hay.byteLength);
  const out: number[] = [];
  for (let at = buf.indexOf(needle); at !== -1; at = buf.indexOf(needle, at + needle.length)) {
    out.push(at);
  }
  return out;
}

function splice(hay: Uint8Array, at: number[], oldLen: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(hay.length + at.length * (insert.length - oldLen));
  let from = 0;
  let to = 0;
  for (const a of at) {
    out.set(hay.subarray(from, a), to);
    to += a - from;
    out.set(insert, to);
    to += insert.length;
    from = a + oldLen;
  }
  out.set(hay.subarray(from), to);
  return out;
}
