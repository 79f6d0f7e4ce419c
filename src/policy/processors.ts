/**
 * Processor decisions (docs/contract.md §10): which bytes a processor may be given, what the answer
 * is bound to, whether private bytes may go to the processor endpoint, and what the answer's
 * label is, and the call itself: the processor is handed in as a port, so the model layer is
 * not imported. The tool (spawn_processor) validates and renders; every rule is decided here.
 */
import type {
  Asking,
  Deciding,
  EgressMemory,
  FileLabels,
  PlannerContext,
  Recording,
  References,
  WorkspaceFiles,
} from "./capabilities.ts";
import { describeKind } from "./core.ts";
import { joinLabels, type Label, label } from "../util/label.ts";
import { mayLeave } from "./egress.ts";
import { ownWordsLabel } from "./driver_labels.ts";
import { refName, type RefRecord } from "./refs.ts";
import { decodeText, readFileRef } from "./reads.ts";
import type { EndpointSettings, Settings } from "../state/settings.ts";
import { effectiveWindow } from "../util/window.ts";
import { sha256 } from "../util/hash.ts";
import {
  countLineBreaks,
  splitProcessorReply,
  trailingLineBreaks,
} from "../util/processor_reply.ts";
import { err, ok, type Result } from "../util/result.ts";
import { plural } from "../util/plural.ts";
import { recordDone } from "./verdict.ts";

/**
 * Sends a processor request (spawn_processor): a model call the driver hands the tool, which
 * passes it on to the tools' port (`OtherPort.spawnProcessor`, ports/other.ts), so the policy
 * layer calls it without importing the model layer. A failure should word itself for the planner
 * and the person (`forPlanner`/`forPerson`, as the model layer's errors do).
 */
export interface ProcessorPort {
  complete(
    instruction: string,
    documents: { name: string; text: string }[],
    signal?: AbortSignal,
  ): Promise<string>;
  /**
   * The tokens the processor's server serves its model with (issue 14), or null when it did not
   * say; the documents are sized to the smaller of this and the config's window.
   */
  servedTokens?(signal?: AbortSignal): Promise<number | null>;
}

/** What a processor is given: the documents, their joined label, and what the answer is about. */
export interface ProcessorInputs {
  documents: { ref: RefRecord; name: string; text: string; label: Label; sha256: string }[];
  /** The join of the inputs' labels. */
  label: Label;
  /** The real workspace-relative file the answer is bound to, or null: it belongs nowhere. */
  about: string | null;
  /** How the planner may be told what the answer is about (a ref it holds, never a path). */
  aboutShown: string | null;
  /** Which of `documents` the answer is bound to (`about`'s, or the single read's), if any. */
  aboutDocument: number | null;
}

/** The file a reference stands for, if any (a processor answer stands for the file it is about). */
function fileOf(ref: RefRecord): string | null {
  if ((ref.kind === "file" || ref.kind === "file_name") && ref.entryType !== "directory") {
    return ref.path ?? null;
  }
  if (ref.kind === "processor_answer") return ref.about ?? null;
  return null;
}

function overWindow(maxBytes: number): string {
  return `the documents come to more than ${maxBytes} bytes, more than the processor's context ` +
    "window holds; give fewer or smaller references per call";
}

/**
 * Resolves `reads` to bytes (a file reference is consumed now, through the worker) and decides
 * what the answer is about: `about` when given, the single read's file, or nothing.
 */
export async function processorInputs(
  policy: FileLabels & WorkspaceFiles & References,
  reads: readonly string[],
  about: string | null | undefined,
  maxBytes: number,
): Promise<Result<ProcessorInputs>> {
  const refs: RefRecord[] = [];
  for (const r of reads) {
    const found = policy.refs.lookup(r);
    if (!found.ok) return found;
    if (refs.some((x) => x.id === found.value.id)) {
      return err(`${refName(found.value)} is named twice in reads`);
    }
    refs.push(found.value);
  }
  let aboutFile: string | null = null;
  let aboutShown: string | null = null;
  let aboutRef: RefRecord | null = null;
  if (about !== undefined && about !== null) {
    const found = policy.refs.lookup(about);
    if (!found.ok) return err(`about: ${found.error}`);
    if (!refs.some((x) => x.id === found.value.id)) {
      return err(
        `about: ${
          refName(found.value)
        } is not one of reads; about names one of the references in reads`,
      );
    }
    aboutFile = fileOf(found.value);
    if (aboutFile === null) {
      return err(
        `about: ${refName(found.value)} is ${describeKind(found.value)}, which names no file; ` +
          "about must be a quarantined file, a listing entry, or a processor answer bound to a file " +
          "(or leave about out: the answer then belongs nowhere)",
      );
    }
    aboutShown = refName(found.value);
    aboutRef = found.value;
  } else if (about === undefined && refs.length === 1) {
    aboutFile = fileOf(refs[0]);
    if (aboutFile !== null) {
      aboutShown = refName(refs[0]);
      aboutRef = refs[0];
    }
  }

  const documents: ProcessorInputs["documents"] = [];
  let total = 0;
  for (const ref of refs) {
    let bytes: Uint8Array;
    let l = ref.label;
    let name = refName(ref);
    if (ref.kind === "file_name" && ref.entryType === "directory") {
      // A directory entry's content is its name (docs/contract.md §3.2: a file name is content).
      bytes = new TextEncoder().encode(ref.path ?? "");
      name = `${refName(ref)} (a directory name)`;
    } else if (ref.kind === "file" || ref.kind === "file_name") {
      // What is left of the window: a file over it is refused from a stat, never read whole.
      const read = await readFileRef(policy, ref, Math.max(0, maxBytes - total));
      if (!read.ok) return err(`${read.error}; give fewer or smaller references per call`);
      bytes = read.value.bytes;
      l = read.value.label;
    } else {
      if (!ref.hasBytes) return err(`${refName(ref)} holds no content`);
      if (ref.size !== undefined && total + ref.size > maxBytes) return err(overWindow(maxBytes));
      bytes = await policy.refs.bytes(ref);
    }
    total += bytes.length;
    if (total > maxBytes) return err(overWindow(maxBytes));
    const text = decodeText(bytes);
    if (text === null) {
      return err(`${refName(ref)} is not text (binary, ${plural(bytes.length, "byte")})`);
    }
    documents.push({ ref, name, text, label: l, sha256: sha256(bytes) });
  }
  return ok({
    documents,
    label: joinLabels(...documents.map((d) => d.label)),
    about: aboutFile,
    aboutShown,
    aboutDocument: aboutRef === null ? null : documents.findIndex((d) => d.ref.id === aboutRef.id),
  });
}

/**
 * `priv` inputs to a processor endpoint not marked local ask the person once per value
 * (egress.ts); an error names the first input that may not go. The instruction is one of them:
 * the planner wrote it, so it carries the planner context's label (docs/contract.md §3.2).
 */
export async function approvePrivateEgress(
  policy: PlannerContext & Asking & Recording & EgressMemory,
  endpoint: EndpointSettings,
  documents: ProcessorInputs["documents"],
  instruction: string,
): Promise<Result<void>> {
  for (const d of documents) {
    const allowed = await mayLeave(policy, endpoint, "processor", "spawn_processor", {
      what: `${refName(d.ref)}${d.ref.path ? ` (${d.ref.path})` : ""}`,
      label: d.label,
      sha256: d.sha256,
    });
    if (!allowed) {
      return err(
        `${refName(d.ref)} is private and the processor endpoint is not marked local; ` +
          `the person did not allow sending it`,
      );
    }
  }
  const allowed = await mayLeave(policy, endpoint, "processor", "spawn_processor", {
    what: "The instruction for the processor (written by the planner)",
    label: policy.plannerWords,
    sha256: sha256(instruction),
  });
  if (!allowed) {
    return err(
      "the instruction carries the planner context's private label and the processor endpoint " +
        "is not marked local; the person did not allow sending it, so nothing was sent",
    );
  }
  return ok(undefined);
}

/** The label of a processor's answer: `U`, with the join of its inputs' confidentiality. */
export function answerLabel(inputs: Label): Label {
  return label("U", inputs.confidentiality);
}

/**
 * An answer bound to a document ends as that document ends: its final line breaks (how many, and
 * `\n` or `\r\n`) are the document's own (issue 26, docs/decisions.md). A rewrite almost never
 * means to change them, and models and servers often do — one drops the reply's last newline,
 * another adds one — where the person would miss a one-byte change in the diff. An empty answer
 * (nothing but line breaks) is left as it is. `note` says what was changed, for the person only.
 */
export function keepDocumentEnding(
  answer: string,
  document: string,
): { text: string; note: string | null } {
  const own = trailingLineBreaks(document);
  const given = trailingLineBreaks(answer);
  if (given === own || given.length === answer.length) return { text: answer, note: null };
  const counted = (breaks: string) =>
    `${plural(countLineBreaks(breaks), "line break")}${breaks.includes("\r") ? " (CRLF)" : ""}`;
  return {
    text: answer.slice(0, answer.length - given.length) + own,
    note: `the processor's answer ended with ${counted(given)}, its document with ` +
      `${counted(own)}: the stored answer ends as the document does`,
  };
}

/** Stores the document as a new reference bound to `about` (or to nothing). */
export async function storeAnswer(
  policy: Recording & References,
  document: string,
  inputs: ProcessorInputs,
  endpoint: string,
): Promise<RefRecord> {
  const bytes = new TextEncoder().encode(document);
  const lines = document === ""
    ? 0
    : document.split("\n").length - (document.endsWith("\n") ? 1 : 0);
  const ref = await policy.refs.add({
    kind: "processor_answer",
    label: answerLabel(inputs.label),
    about: inputs.about,
    size: bytes.length,
    lines,
    sha256: sha256(bytes),
    tool: "spawn_processor",
  }, bytes);
  await recordDone(policy, {
    tool: "spawn_processor",
    routing: { about: inputs.about, endpoint },
    inputs: { reads: inputs.documents.map((d) => refName(d.ref)) },
    labels: { input: inputs.label, output: ref.label },
    decision: `answer stored as ${refName(ref)}`,
    by: "rule",
  });
  return ref;
}

/** What spawn_processor asks for: the references to give, what the answer is about, and why. */
export interface ProcessorRequest {
  reads: readonly string[];
  about?: string | null;
  instruction: string;
}

/** What came of a processor call, for the tool to render; a remark is for the person only. */
export type ProcessorOutcome =
  /** Nothing was sent: a reference, the window or the person's egress answer refused it. */
  | { kind: "refused"; error: string }
  /** The call failed: the kind of failure for the planner, the endpoint's words for the person. */
  | { kind: "failed"; forPlanner: string; forPerson: string }
  /** The reply had no document line: nothing was stored. */
  | { kind: "no_document"; remark: string }
  | {
    kind: "stored";
    remark: string;
    /** For the person only: how the answer's ending was made the document's, if it was. */
    endingNote: string | null;
    /** The new reference's name (`ref:N`), its size, and the ref the answer is bound through. */
    ref: string;
    lines: number;
    size: number;
    aboutShown: string | null;
    /** What the planner's notice of it carries: Brave Bot's words about a reference. */
    label: Label;
  };

/** A failure the model layer words itself, as its `ModelError` does (docs/contract.md §3.5). */
interface WordedFailure {
  forPlanner(role: "processor"): string;
  forPerson(role: "processor"): string;
}

function isWorded(e: unknown): e is WordedFailure {
  const f = e as Partial<WordedFailure> | null;
  return typeof f?.forPlanner === "function" && typeof f.forPerson === "function";
}

/**
 * The words for a failure: the endpoint's words may quote the documents, so the person reads
 * them and the planner is told only the kind of failure. Anything the model layer did not word
 * is a failure inside Brave Bot, worded as the model layer words its own.
 */
function failureWords(e: unknown, endpoint: string): { forPlanner: string; forPerson: string } {
  if (isWorded(e)) {
    return { forPlanner: e.forPlanner("processor"), forPerson: e.forPerson("processor") };
  }
  const detail = String(e);
  const said = detail === ""
    ? ""
    : ` [not shown to the planner: ${detail.replace(/\s+/g, " ").trim().slice(0, 500)}]`;
  return {
    forPlanner: "the call to the processor endpoint failed inside Brave Bot",
    forPerson: `the call to the processor endpoint${
      endpoint ? ` ${endpoint}` : ""
    } failed inside Brave Bot${said}`,
  };
}

/**
 * spawn_processor's decision: resolves the reads (within roughly what fits the processor's
 * window, leaving room for the instruction and the reply), asks about private egress, calls the
 * processor, and stores the document of its reply as a new reference ({@link storeAnswer}).
 */
export async function runProcessor(
  policy: Deciding & EgressMemory,
  request: ProcessorRequest,
  processor: ProcessorPort,
  settings: Pick<Settings, "processor" | "contextWindow">,
  signal?: AbortSignal,
): Promise<ProcessorOutcome> {
  const served = processor.servedTokens ? await processor.servedTokens(signal) : null;
  const window = effectiveWindow(settings.contextWindow, served).tokens;
  const maxBytes = Math.floor(window * 3 * 0.6);
  const inputs = await processorInputs(policy, request.reads, request.about, maxBytes);
  if (!inputs.ok) return { kind: "refused", error: inputs.error };
  const egress = await approvePrivateEgress(
    policy,
    settings.processor,
    inputs.value.documents,
    request.instruction,
  );
  if (!egress.ok) return { kind: "refused", error: egress.error };
  let reply: string;
  try {
    reply = await processor.complete(
      request.instruction,
      inputs.value.documents.map((d) => ({ name: d.name, text: d.text })),
      signal,
    );
  } catch (e) {
    return { kind: "failed", ...failureWords(e, settings.processor.url) };
  }
  const { remark, document } = splitProcessorReply(reply);
  if (document === null) return { kind: "no_document", remark };
  const bound = inputs.value.aboutDocument;
  const { text, note } = bound === null
    ? { text: document, note: null }
    : keepDocumentEnding(document, inputs.value.documents[bound].text);
  const ref = await storeAnswer(policy, text, inputs.value, settings.processor.url);
  return {
    kind: "stored",
    remark,
    endingNote: note,
    ref: refName(ref),
    lines: ref.lines ?? 0,
    size: ref.size ?? 0,
    aboutShown: inputs.value.aboutShown,
    label: ownWordsLabel(),
  };
}
