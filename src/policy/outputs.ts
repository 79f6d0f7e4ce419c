/**
 * What becomes of a command's output (tools.md, run and read_output; design.md §8, §9, §14):
 * it is kept as a `command_output` reference (up to the reference cap, cut beyond and said so),
 * and only a vouched command's output is shown to the planner, capped to head and tail.
 *
 * `read_output` is decided here too: it applies only to a command's output, shows the person
 * exactly the text the planner would get, and on their agreement hands it over as their
 * assertion about those bytes, recorded with the bytes' SHA-256.
 */
import type { Policy } from "./core.ts";
import { describeKind } from "./core.ts";
import { type Label, label, UNTRUSTED_PRIVATE } from "../util/label.ts";
import type { RefRecord } from "./refs.ts";
import type { Decider } from "./audit.ts";
import type { SpawnResult } from "../worker/protocol.ts";
import type { Settings } from "../state/settings.ts";
import { escapeForScreen } from "../util/escape.ts";
import { sha256 } from "../util/hash.ts";
import { plural } from "../util/plural.ts";

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
 * Piped input in one-shot mode (design.md §15): a reference `(U,priv)`, like a command's output
 * (read_output can show it to the planner with the person's agreement), named in the person's
 * message. With `--trust-stdin` it is the person's own words instead, and no reference is made.
 */
export async function keepPipedInput(policy: Policy, bytes: Uint8Array): Promise<RefRecord> {
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
  policy: Policy,
  settings: Settings,
  result: SpawnResult,
  outputLabel: Label,
  command: string,
  tool: "run" | "shell",
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

export type ReadOutputDecision =
  | {
    shown: true;
    ref: RefRecord;
    text: string;
    omitted: number;
    utf8: boolean;
    sha256: string;
    by: Decider;
    /** What the shown text places in the planner context. */
    label: Label;
  }
  | { shown: false; reason: string };

/**
 * read_output (tools.md): only a command's output; the person sees what the planner would get
 * and decides. Agreed, it is their assertion about these bytes: trusted, still private, and
 * recorded with the SHA-256 of the bytes.
 */
export async function decideReadOutput(
  policy: Policy,
  settings: Settings,
  refText: unknown,
): Promise<ReadOutputDecision> {
  const found = policy.refs.lookup(refText);
  if (!found.ok) return { shown: false, reason: found.error };
  const ref = found.value;
  const routing = { ref: `ref:${ref.id}`, kind: ref.kind };
  if (ref.kind !== "command_output") {
    const reason = ref.kind === "file"
      ? `ref:${ref.id} is a quarantined file, and read_output shows only what a run printed; ` +
        `a quarantined file is not readable this way (read_file with path_ref offers the person ` +
        `the choice, or pass it to spawn_processor)`
      : `ref:${ref.id} is ${describeKind(ref)}; read_output shows only what a run printed`;
    await policy.record({
      tool: "read_output",
      routing,
      labels: { ref: ref.label },
      decision: "refused",
      by: "rule",
      reason,
    });
    return { shown: false, reason };
  }
  const bytes = await policy.refs.bytes(ref);
  const digest = sha256(bytes);
  const decoded = decodeOutput(bytes);
  const capped = headTail(decoded.text, settings.limits.shownOutputChars);
  const shownLabel = label("T", ref.label.confidentiality);
  const agreed = async (by: Decider, decision: string): Promise<ReadOutputDecision> => {
    await policy.record({
      tool: "read_output",
      routing,
      labels: { ref: ref.label, shown: shownLabel },
      decision,
      by,
      sha256: digest,
    });
    return {
      shown: true,
      ref,
      text: capped.text,
      omitted: capped.omitted,
      utf8: decoded.utf8,
      sha256: digest,
      by,
      label: shownLabel,
    };
  };

  // A vouched command's output is trusted already: showing it again asks nobody.
  if (ref.label.integrity === "T") return await agreed("rule", "shown (already trusted)");
  if (policy.approvals?.readOutput === true) {
    return await agreed("policy-file", "shown (policy file readOutput)");
  }
  if (!policy.canAsk) {
    const reason = "not shown: nobody can be asked in a one-shot run" +
      (policy.approvals ? " and the approval policy file does not set readOutput" : "");
    await policy.record({
      tool: "read_output",
      routing,
      labels: { ref: ref.label },
      decision: "declined",
      by: policy.asker,
      reason,
      sha256: digest,
    });
    return { shown: false, reason };
  }
  const answer = await policy.person.approveReadOutput({
    ref: `ref:${ref.id}`,
    command: ref.command ?? "(a command)",
    text: escapeForScreen(capped.text, true),
    label: ref.label,
  });
  if (!answer.approved) {
    const reason = answer.reason?.trim()
      ? `the person declined to show it: ${answer.reason.trim()}`
      : "the person declined to show it";
    await policy.record({
      tool: "read_output",
      routing,
      labels: { ref: ref.label },
      decision: "refused",
      by: "person",
      reason,
      sha256: digest,
    });
    return { shown: false, reason };
  }
  return await agreed("person", "shown");
}
