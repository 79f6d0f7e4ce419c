/**
 * read_file's decision (design.md §6): what of a file the planner may be given. A trusted
 * file's bytes come back with their label; a file nobody trusts is not opened before the
 * quarantined-read prompt, and each answer is carried out here — keep gives a reference and
 * its size, "show as untrusted" gives the bytes at an untrusted label (the driver, placing the
 * result, taints the planner context), a vouch trusts these exact bytes. Each answer carries the
 * label of what the tool renders of it. The tool pages and renders what it is given.
 */
import type { Policy } from "./core.ts";
import {
  askQuarantinedRead,
  CHANGED,
  decodeText,
  labelOfBytes,
  readAtMost,
  tooBigMessage,
  vouchBytes,
} from "./reads.ts";
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

/** Decides a read_file call: routing, the label, the prompt and its answer, the audit entries. */
export async function decideReadFile(policy: Policy, target: ReadTarget): Promise<FileRead> {
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
    const read = got.value.bytes;
    if (read === null) return error(`${shownAs}: the file cannot be read (not a regular file)`);
    // The label was computed for the file resolved: it holds only for bytes read from it.
    if (!openedAsChecked(path, got.value.opened)) return error(changedWhileRead(shownAs));
    // The decision holds for the bytes actually read, not for whatever was hashed before.
    fileLabel = await labelOfBytes(policy, path.rel, read);
    if (fileLabel.integrity === "T") {
      await policy.record({
        tool: "read_file",
        routing: { path: path.rel, via_ref: viaRef !== null },
        labels: { file: fileLabel },
        decision: "shown (trusted)",
        by: "rule",
      });
      return given(read, shownAs, fileLabel, false);
    }
    return await quarantined(policy, {
      path,
      viaRef,
      shownAs,
      label: fileLabel,
      size: read.length,
    });
  }
  // Not trusted: nothing but a stat touches the file before the person answers.
  const stat = await policy.worker.call({ op: "stat", path: path.abs });
  if (!stat.ok) return error(`${shownAs} cannot be read (${stat.error.name})`);
  if (stat.value.size > READ_FILE_MAX_BYTES) return tooBig(stat.value.size);
  return await quarantined(policy, {
    path,
    viaRef,
    shownAs,
    label: fileLabel,
    size: stat.value.size,
  });
}

/** The quarantined-read prompt (design.md §6), and what its answer does. */
async function quarantined(policy: Policy, q: Quarantined): Promise<FileRead> {
  const { path, viaRef, shownAs, size } = q;
  const answer = await askQuarantinedRead(policy, {
    tool: "read_file",
    rel: path.rel,
    entry: path,
    size,
    label: q.label,
    viaRef: viaRef !== null,
  });
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
