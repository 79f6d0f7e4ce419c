/**
 * What becomes of a command's output (docs/tools.md#run, docs/tools.md#read_output;
 * docs/contract.md §8.2, §9, §14): it is kept as a `command_output` reference (up to the reference
 * cap, cut beyond and said so), and only a vouched command's output is shown to the planner, capped
 * to head and tail.
 *
 * `read_output` is decided here too (docs/contract.md §16.2, §16.3): it applies only to a command's
 * output; an output the approval policy file asserts by shape is shown in the shape's canonical
 * form; else the person is shown exactly the text the planner would get and what fed the run, and
 * on their agreement it is handed over as their assertion about those bytes. An assertion relabels
 * nothing: the reference stays untrusted, the text shown is `T` with its confidentiality kept.
 */
import type { Asking, Recording, References } from "./capabilities.ts";
import { describeKind } from "./core.ts";
import { type Label, label, UNTRUSTED_PRIVATE } from "../util/label.ts";
import { type Assertion, type RefRecord, sourceOf } from "./refs.ts";
import type { Decider } from "./audit.ts";
import type { SpawnResult } from "../worker/protocol.ts";
import type { Settings } from "../state/settings.ts";
import { escapeForScreen } from "../util/escape.ts";
import { matchShape, MAX_SHAPE_ASSERTIONS, type Shape } from "./shapes.ts";
import { readOutputShapes } from "./approvals_file.ts";
import { sha256 } from "../util/hash.ts";
import { plural } from "../util/plural.ts";
import type { Approval, ReadOutputRequest } from "../person/person.ts";
import { seatAt, settle, type Settled, type Verdict } from "./verdict.ts";

/** Separates stderr from stdout in the one reference a run leaves, when stderr is not empty. */
export const STDERR_MARKER = "[stderr]\n";

const encoder = new TextEncoder();

/**
 * The bytes a run leaves: stdout, then (when there is any) a marker line and stderr, cut at
 * `cap` bytes. Stdout comes first whole, so a pipeline producing a file's new content is not
 * interleaved with warnings.
 */
export function combineOutput(
  stdout: Uint8Array,
  stderr: Uint8Array,
  cap: number,
): { bytes: Uint8Array; cut: boolean } {
  const parts: Uint8Array[] = [stdout];
  if (stderr.length > 0) {
    if (stdout.length > 0 && stdout[stdout.length - 1] !== 0x0a) parts.push(encoder.encode("\n"));
    parts.push(encoder.encode(STDERR_MARKER), stderr);
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(Math.min(total, cap));
  let at = 0;
  for (const p of parts) {
    if (at >= out.length) break;
    const take = p.subarray(0, out.length - at);
    out.set(take, at);
    at += take.length;
  }
  return { bytes: out, cut: total > cap };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Output as text: invalid UTF-8 becomes U+FFFD, and that is reported rather than hidden. */
export function decodeOutput(bytes: Uint8Array): { text: string; utf8: boolean } {
  try {
    return { text: strictUtf8.decode(bytes), utf8: true };
  } catch {
    return { text: lenientUtf8.decode(bytes), utf8: false };
  }
}

/** At most `max` characters: the head and the tail, with a marker saying how much was left out. */
export function headTail(text: string, max: number): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  const head = Math.ceil(max / 2);
  const tail = max - head;
  const omitted = text.length - max;
  return {
    text: `${text.slice(0, head)}\n[… ${omitted} characters left out here …]\n${
      tail > 0 ? text.slice(text.length - tail) : ""
    }`,
    omitted,
  };
}

export function countLines(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0x0a) n++;
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) n++;
  return n;
}

export interface KeptOutput {
  ref: RefRecord;
  /** The reference's bytes were cut at the cap (or the run stopped at it). */
  cut: boolean;
  utf8: boolean;
  /** For a trusted output: the capped text the planner is shown. */
  shown: { text: string; omitted: number } | null;
}

/**
 * Keeps a run's (or a shell line's) output as a `command_output` reference with the label the
 * decision gave it; a trusted label also yields the capped text the planner may be shown.
 */
/**
 * Piped input in one-shot mode (docs/contract.md §15.4): a reference `(U,priv)`, like a command's
 * output (read_output can show it to the planner with the person's agreement), named in the
 * person's message. With `--trust-stdin` it is the person's own words instead, and no reference is
 * made.
 */
export async function keepPipedInput(policy: References, bytes: Uint8Array): Promise<RefRecord> {
  return await policy.refs.add({
    kind: "command_output",
    label: UNTRUSTED_PRIVATE,
    size: bytes.length,
    lines: countLines(bytes),
    sha256: sha256(bytes),
    command: "the input piped to bravebot",
    tool: "stdin",
  }, bytes);
}

export async function keepOutput(
  policy: References,
  settings: Settings,
  result: SpawnResult,
  outputLabel: Label,
  command: string,
  tool: "run" | "shell",
  /** The reference fed to the run as stdin: the read_output question says what fed it. */
  stdin: RefRecord | null = null,
): Promise<KeptOutput> {
  const cap = settings.limits.refOutputBytes;
  const combined = combineOutput(result.stdout, result.stderr, cap);
  const ref = await policy.refs.add({
    kind: "command_output",
    label: outputLabel,
    size: combined.bytes.length,
    lines: countLines(combined.bytes),
    sha256: sha256(combined.bytes),
    command,
    ...(stdin ? { stdin: stdin.id } : {}),
    tool,
  }, combined.bytes);
  const decoded = decodeOutput(combined.bytes);
  return {
    ref,
    cut: combined.cut || result.truncated,
    utf8: decoded.utf8,
    shown: outputLabel.integrity === "T"
      ? headTail(decoded.text, settings.limits.shownOutputChars)
      : null,
  };
}

/**
 * What a stop by the person did, in our words (the command's own say nothing here): the signals
 * the worker sent before every stage had ended, SIGINT then SIGTERM then SIGKILL. Null when
 * nobody stopped the run.
 */
export function stopLine(signals: readonly string[]): string | null {
  if (signals.length === 0) return null;
  const last = signals[signals.length - 1];
  const before = signals.slice(0, -1);
  const ignored = before.length ? ` after it ignored ${before.join(" and ")}` : "";
  return last === "SIGKILL"
    ? `stopped by the person: killed with SIGKILL${ignored}`
    : `stopped by the person: ended on ${last}${ignored}`;
}

/** Exit status, signal, duration and byte counts: metadata the planner is always shown. */
export function statusLines(
  result: SpawnResult,
  timeoutMs: number,
  refCap: number,
  kept: { cut: boolean; utf8: boolean },
): string[] {
  const lines: string[] = [];
  const stageCodes = result.stages.map((s) => s.signal ?? String(s.code));
  const last = result.signal ? `killed by ${result.signal}` : `exit status ${result.code}`;
  lines.push(
    `${last}${result.stages.length > 1 ? ` (stages: ${stageCodes.join(", ")})` : ""}, ${
      (result.durationMs / 1000).toFixed(2)
    } s`,
  );
  // Next to the exit status, so a screen that shows a result's first words shows it too.
  const stopped = stopLine(result.stopSignals);
  if (stopped) lines.push(stopped);
  lines.push(
    `stdout ${plural(result.stdoutBytes, "byte")}, stderr ${plural(result.stderrBytes, "byte")}`,
  );
  if (result.timedOut) {
    lines.push(
      `timed out after ${timeoutMs / 1000} s: every stage and the processes it started were killed`,
    );
  }
  if (kept.cut) {
    lines.push(
      `output beyond ${refCap} bytes was cut: the run was stopped there and the reference holds the first ${refCap} bytes`,
    );
  }
  if (!kept.utf8) lines.push("the output is not valid UTF-8 (invalid bytes read as U+FFFD)");
  return lines;
}

// ---- read_output ----

/** How shown bytes came to be shown: trusted already (a vouched command), or asserted. */
export type ShownAs =
  | { kind: "trusted" }
  | {
    kind: "asserted";
    by: "person" | "policy-file";
    /** The shape matched; null for the person, or the policy file's `readOutput: true`. */
    shape: Shape | null;
    /** Asserted before this call (earlier in the session, or before it was resumed). */
    earlier: boolean;
  };

export type ReadOutputDecision =
  | {
    shown: true;
    ref: RefRecord;
    /** What the planner is shown: the capped text, or a shape's canonical form. */
    text: string;
    omitted: number;
    utf8: boolean;
    as: ShownAs;
    /** What the shown text places in the planner context: `T`, the output's confidentiality. */
    label: Label;
  }
  | { shown: false; reason: string };

/** Why an output the policy file's shapes did not assert is not shown, where nobody can be asked. */
const NO_SHAPE = "not shown: the output matched no readOutput shape of the approval policy file, " +
  "and nobody can be asked in a one-shot run";
const SHAPE_LIMIT = `not shown: ${MAX_SHAPE_ASSERTIONS} outputs were asserted by shape in this ` +
  "run, the most one run may, and nobody can be asked in a one-shot run";

/**
 * The output shown to the person at the read_output question: each line escaped on its own, so
 * a tab, a carriage return or any invisible character is a marker, not layout.
 */
function questionLines(text: string): { lines: string[]; finalNewline: boolean } {
  const finalNewline = text.endsWith("\n");
  const body = finalNewline ? text.slice(0, -1) : text;
  return {
    lines: body === "" ? [] : body.split("\n").map((l) => escapeForScreen(l)),
    finalNewline,
  };
}

/** What fed the run, in words for the question ("processor answer about …"), or null. */
function fedBy(policy: References, ref: RefRecord): string | null {
  if (ref.tool !== "run") return null;
  if (ref.stdin === undefined) return "none (what the command read is named by its arguments)";
  const fed = policy.refs.lookup(`ref:${ref.stdin}`);
  return fed.ok ? `${sourceOf(fed.value)} (ref:${ref.stdin})` : `ref:${ref.stdin}`;
}

/** The facts read_output is decided on: the reference, its bytes, and who may assert them. */
export interface ReadOutputFacts {
  ref: RefRecord;
  /** The reference's bytes; null for a reference that is not a command's output. */
  bytes: Uint8Array | null;
  /** What the session holds asserted about this reference (a past decision), if anything. */
  past: Omit<Assertion, "thisRun"> | undefined;
  /** What fed the run, in words for the question (see {@link fedBy}). */
  fedBy: string | null;
  /** The approval policy file: whether there is one, `readOutput: true`, and its shapes. */
  file: { present: boolean; readOutputAll: boolean; shapes: readonly Shape[] };
  /** How many outputs this run asserted by a shape. */
  assertedByShape: number;
  /** The most characters the planner is shown of an output. */
  shownOutputChars: number;
  canAsk: boolean;
  asker: Decider;
}

/** read_output's verdicts: what the planner is shown and how; an assertion to keep. */
interface ReadOutputTerms {
  grants: { as: ShownAs; text: { text: string; omitted: number; utf8: boolean }; label: Label };
  refusal: string;
  question: ReadOutputRequest;
  answer: Approval;
  keep: Omit<Assertion, "thisRun">;
}

/**
 * read_output (docs/tools.md#read_output, docs/contract.md §16): only a command's output. A vouched
 * command's output is trusted already; an output asserted earlier stays asserted (a past decision);
 * the approval policy file asserts by `readOutput: true` or by a shape (at most
 * {@link MAX_SHAPE_ASSERTIONS} a run); anything else asks the person, who sees the exact text and what fed
 * the run — and where nobody can be asked it is declined, with nothing of it in the reason.
 */
export function evaluateReadOutput(f: ReadOutputFacts): Verdict<ReadOutputTerms> {
  const { ref } = f;
  const routing = { ref: `ref:${ref.id}`, kind: ref.kind };
  const refused = (
    by: Decider,
    decision: string,
    reason: string,
    digest?: string,
  ): Settled<ReadOutputTerms> => ({
    kind: "refuse",
    refusal: reason,
    audit: {
      tool: "read_output",
      routing,
      labels: { ref: ref.label },
      decision,
      by,
      reason,
      sha256: digest,
    },
  });
  if (ref.kind !== "command_output" || f.bytes === null) {
    return refused(
      "rule",
      "refused",
      ref.kind === "file"
        ? `ref:${ref.id} is a quarantined file, and read_output shows only what a run printed; ` +
          `a quarantined file is not readable this way (read_file with path_ref offers the ` +
          `person the choice, or pass it to spawn_processor)`
        : `ref:${ref.id} is ${describeKind(ref)}; read_output shows only what a run printed`,
    );
  }
  const bytes = f.bytes;
  const digest = sha256(bytes);
  const decoded = decodeOutput(bytes);
  const capped = headTail(decoded.text, f.shownOutputChars);
  const shownLabel = label("T", ref.label.confidentiality);
  const shown = (
    as: ShownAs,
    decision: string,
    by: Decider,
    text: { text: string; omitted: number; utf8: boolean } = { ...capped, utf8: decoded.utf8 },
  ): Settled<ReadOutputTerms> => ({
    kind: "allow",
    grants: { as, text, label: shownLabel },
    audit: {
      tool: "read_output",
      routing,
      labels: { ref: ref.label, shown: shownLabel },
      decision,
      by,
      shape: as.kind === "asserted" && as.shape ? as.shape : undefined,
      sha256: digest,
    },
    // Asserted now: kept (and counted) before the line is written.
    ...(as.kind === "asserted" && !as.earlier
      ? { keep: { ref: ref.id, by: as.by, shape: as.shape, sha256: digest } }
      : {}),
  });
  const declined = (by: Decider, decision: string, reason: string) =>
    refused(by, decision, reason, digest);
  const asserted = (by: "person" | "policy-file", shape: Shape | null) => ({
    kind: "asserted" as const,
    by,
    shape,
    earlier: false,
  });

  // A vouched command's output is trusted already: showing it again asks nobody.
  if (ref.label.integrity === "T") {
    return shown({ kind: "trusted" }, "shown (already trusted)", "rule");
  }
  const past = f.past;
  if (past && past.sha256 === digest) {
    const again = past.shape ? matchShape(bytes, [past.shape]) : null;
    if (!again || again.matched) {
      const as = { kind: "asserted" as const, by: past.by, shape: past.shape, earlier: true };
      const text = again?.matched ? { text: again.canonical, omitted: 0, utf8: true } : undefined;
      return shown(as, `shown (asserted earlier by ${past.by})`, "rule", text);
    }
  }
  if (f.file.readOutputAll) {
    return shown(
      asserted("policy-file", null),
      "asserted (policy file readOutput: true)",
      "policy-file",
    );
  }
  let unasserted: string | null = null;
  if (f.file.shapes.length > 0) {
    // The limit is checked before the match, so a refusal past it says nothing of the bytes.
    if (f.assertedByShape >= MAX_SHAPE_ASSERTIONS) unasserted = SHAPE_LIMIT;
    else {
      const match = matchShape(bytes, f.file.shapes);
      if (match.matched) {
        return shown(
          asserted("policy-file", match.shape),
          `asserted by shape ${match.shape}`,
          "policy-file",
          { text: match.canonical, omitted: 0, utf8: true },
        );
      }
      unasserted = NO_SHAPE;
    }
  }
  if (!f.canAsk) {
    const reason = unasserted ?? "not shown: nobody can be asked in a one-shot run" +
        (f.file.present ? " and the approval policy file does not set readOutput" : "");
    return declined(f.asker, "declined", reason);
  }
  const { lines, finalNewline } = questionLines(capped.text);
  return {
    kind: "ask",
    question: {
      ref: `ref:${ref.id}`,
      command: ref.command ?? "(a command)",
      stdin: f.fedBy,
      lines,
      finalNewline,
      size: bytes.length,
      omitted: capped.omitted,
      utf8: decoded.utf8,
      label: ref.label,
    },
    answered: (answer) => {
      if (answer.approved) {
        return shown(asserted("person", null), "asserted by the person", "person");
      }
      const reason = answer.reason?.trim()
        ? `the person declined to show it: ${answer.reason.trim()}`
        : "the person declined to show it";
      return declined("person", "refused", reason);
    },
  };
}

/**
 * read_output's decision, carried out: the facts gathered (the bytes, a past assertion, the
 * policy file, how many shapes asserted this run), evaluated, asked and recorded; an assertion
 * is kept before its line is written.
 */
export async function decideReadOutput(
  policy: Asking & Recording & References,
  settings: Settings,
  refText: unknown,
): Promise<ReadOutputDecision> {
  const found = policy.refs.lookup(refText);
  if (!found.ok) return { shown: false, reason: found.error };
  const ref = found.value;
  const output = ref.kind === "command_output";
  const bytes = output ? await policy.refs.bytes(ref) : null;
  // Nothing is awaited from here to the assertion's keeping: the count read is the count kept.
  const verdict = evaluateReadOutput({
    ref,
    bytes,
    past: policy.refs.assertion(ref),
    fedBy: output ? fedBy(policy, ref) : null,
    file: {
      present: policy.approvals !== null,
      readOutputAll: policy.approvals?.readOutput === true,
      shapes: readOutputShapes(policy.approvals),
    },
    assertedByShape: policy.refs.assertedByShapeThisRun(),
    shownOutputChars: settings.limits.shownOutputChars,
    canAsk: policy.canAsk,
    asker: policy.asker,
  });
  const settled = await settle(
    verdict,
    seatAt<ReadOutputTerms>(
      policy,
      (question) => policy.person.approveReadOutput(question),
      (assertion) => policy.refs.recordAssertion(assertion),
    ),
  );
  if (settled.kind === "refuse") return { shown: false, reason: settled.refusal };
  const { as, text, label } = settled.grants;
  return { shown: true, ref, ...text, as, label };
}
