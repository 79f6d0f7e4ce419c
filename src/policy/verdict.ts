/**
 * Decide, then do. A rule is a pure evaluator: plain facts in, a {@link Verdict} out — allow,
 * ask (with the question for the person and what each answer comes to) or refuse — with no
 * `Policy`, no worker and no person, so it can be tested by a table in milliseconds. One
 * {@link settle} step then asks where the verdict asks, keeps what the answer vouches for, and
 * records the decision; only after that does the caller act. The audit line is part of the
 * verdict, and {@link auditEntryOf} is the one place an entry is built from it.
 */
import type { Label } from "../util/label.ts";
import type { AuditEntry, Decider } from "./audit.ts";
import type { ScreenText } from "../util/escape.ts";

/**
 * A decision's audit line (docs/contract.md §12.3), less the planner context's label, which is
 * added as it is written. The keys keep the order the log has always had: who and where, what the
 * rule weighed, what was decided and by whom, why, and the facts about bytes.
 */
export interface AuditLine {
  tool: string;
  /** The routing arguments as resolved (the real path, the argv, the endpoint), never content. */
  routing: Record<string, unknown>;
  /** The content references decided about (`ref:N`), never their bytes. */
  inputs?: Record<string, unknown>;
  /** The labels the rule weighed (the file's, the content's, the output's). */
  labels?: Record<string, Label>;
  /** The line's words: "write approved", "asserted by shape version", "refused". */
  decision: string;
  by: Decider;
  reason?: string;
  /** The readOutput shape that asserted the bytes (docs/contract.md §16.3). */
  shape?: string;
  /** The SHA-256 of the bytes decided about. */
  sha256?: string;
  /** Labels of what the decision gave (the person's answer, a loaded skill), written after it. */
  gave?: Record<string, Label>;
}

/** What an entry holds before the context's label is added: what `Policy.record` takes. */
export type AuditDraft = Omit<AuditEntry, "labels"> & { labels?: Record<string, Label> };

/**
 * What one rule's verdicts carry, named once per rule: what an allow hands the caller to act on,
 * what a refusal hands it (usually the reason the planner is told), the question put to the
 * person and their answer, and the past decision an answer may leave to keep (a vouch, an
 * assertion, an answer remembered). A rule that never asks sets `question` and `answer` to
 * `never`; one that keeps nothing sets `keep` to `never`.
 */
export interface Terms {
  grants: unknown;
  refusal: unknown;
  question: unknown;
  answer: unknown;
  keep: unknown;
}

interface Decided<T extends Terms> {
  /**
   * The audit line; null where the decision leaves none: nothing needed deciding (public bytes
   * to a local endpoint), the log holds it already (an answer given earlier in the session), or
   * the request cannot be carried out as asked (an edit's passage not found).
   */
  audit: AuditLine | null;
  /** A line for the person as the decision is taken: an approval by the policy file, a decline. */
  notice?: string | ScreenText;
  /** A past decision to keep before the line is written. */
  keep?: T["keep"];
}

export interface Allow<T extends Terms> extends Decided<T> {
  kind: "allow";
  grants: T["grants"];
}

export interface Refuse<T extends Terms> extends Decided<T> {
  kind: "refuse";
  refusal: T["refusal"];
}

export interface Ask<T extends Terms> {
  kind: "ask";
  question: T["question"];
  /** What each answer comes to (pure, like the evaluator that made the question). */
  answered(answer: T["answer"]): Settled<T>;
  /** What it comes to when the question cannot be put; absent: the failure is the caller's. */
  unasked?(error: unknown): Settled<T>;
}

export type Settled<T extends Terms> = Allow<T> | Refuse<T>;
export type Verdict<T extends Terms> = Settled<T> | Ask<T>;

/**
 * What settling needs, and nothing more: a way to ask, to keep a past decision, to tell the
 * person and to write the audit log. `keep` answers the words the audit line gives as its reason
 * when what was kept is named there (a vouch: "v1  exactly  /usr/bin/printf x").
 */
export interface Seat<T extends Terms> {
  /** Absent where the rule never asks. */
  ask?(question: T["question"]): Promise<T["answer"]>;
  keep?(kept: T["keep"]): Promise<string | void> | string | void;
  notice(text: string | ScreenText): void;
  record(entry: AuditDraft): Promise<void>;
}

/**
 * The audit entry of a decision, or null when it leaves none. The rule's labels sit after the
 * routing; labels the decision gave come after who decided (where the log has always had them).
 */
export function auditEntryOf<T extends Terms>(verdict: Settled<T>): AuditDraft | null {
  const line = verdict.audit;
  if (line === null) return null;
  const labels = line.labels === undefined ? undefined : { ...line.labels, ...line.gave };
  return {
    tool: line.tool,
    routing: line.routing,
    ...(line.inputs === undefined ? {} : { inputs: line.inputs }),
    ...(labels === undefined ? {} : { labels }),
    decision: line.decision,
    by: line.by,
    ...(line.reason === undefined ? {} : { reason: line.reason }),
    ...(line.shape === undefined ? {} : { shape: line.shape }),
    ...(line.sha256 === undefined ? {} : { sha256: line.sha256 }),
    ...(labels === undefined && line.gave !== undefined ? { labels: line.gave } : {}),
  };
}

/**
 * Settles a verdict: puts its question to the person where it asks, then tells the person what
 * the decision says they should know, keeps what it leaves to keep (before the line is written,
 * so a decision in flight cannot be taken twice), and records it. Returns the decision, for the
 * caller to act on.
 */
export async function settle<T extends Terms>(
  verdict: Verdict<T>,
  seat: Seat<T>,
): Promise<Settled<T>> {
  let settled: Settled<T>;
  if (verdict.kind === "ask") {
    if (!seat.ask) throw new Error("a verdict asks and its seat cannot ask");
    let answer: T["answer"];
    try {
      answer = await seat.ask(verdict.question);
    } catch (e) {
      if (!verdict.unasked) throw e;
      return await settle(verdict.unasked(e), seat);
    }
    settled = verdict.answered(answer);
  } else settled = verdict;
  if (settled.notice !== undefined) seat.notice(settled.notice);
  if (settled.keep !== undefined) {
    if (!seat.keep) throw new Error("a verdict keeps a decision and its seat cannot keep one");
    const said = await seat.keep(settled.keep);
    if (typeof said === "string" && settled.audit) {
      settled = { ...settled, audit: { ...settled.audit, reason: said } };
    }
  }
  const entry = auditEntryOf(settled);
  if (entry !== null) await seat.record(entry);
  return settled;
}

/** What a seat is made from: the person's notices and the audit log (a `Policy` has both). */
export interface Desk {
  person: { notice(text: string | ScreenText): void };
  record(entry: AuditDraft): Promise<void>;
}

/** A seat that asks with `ask`, keeps with `keep`, and tells and records through `desk`. */
export function seatAt<T extends Terms>(
  desk: Desk,
  ask?: Seat<T>["ask"],
  keep?: Seat<T>["keep"],
): Seat<T> {
  return {
    ask,
    keep,
    notice: (text) => desk.person.notice(text),
    record: (entry) => desk.record(entry),
  };
}

/**
 * What a verdict comes to, given the answer it would get: itself when it does not ask. Pure: for
 * tables of facts and answers, where nobody is asked.
 */
export function answeredWith<T extends Terms>(
  verdict: Verdict<T>,
  answer?: T["answer"],
): Settled<T> {
  if (verdict.kind !== "ask") return verdict;
  if (answer === undefined) throw new Error("the verdict asks and no answer was given");
  return verdict.answered(answer);
}

/** An allow that leaves no audit line: the caller goes ahead with `grants`. */
export function allowQuietly<T extends Terms>(grants: T["grants"]): Allow<T> {
  return { kind: "allow", grants, audit: null };
}

/** A refusal that leaves no audit line: the request cannot be carried out as it stands. */
export function refuseQuietly<T extends Terms>(refusal: T["refusal"]): Refuse<T> {
  return { kind: "refuse", refusal, audit: null };
}

/**
 * The line of something done once a decision was acted on (a file vouched, the files a run
 * changed, a run that could not start): nothing to ask or keep, only the line to record.
 */
export function doneLine(audit: AuditLine): Settled<Terms> {
  return { kind: "allow", grants: undefined, audit };
}

/** What records a decision and does nothing else: the audit log's side of a {@link Desk}. */
export type Recorder = Pick<Desk, "record">;

/**
 * Records a decision that asks nobody, keeps nothing and tells the person nothing (a refusal
 * by rule, a line of something done), through {@link auditEntryOf} like every other; returns it.
 * One that would ask, keep or tell needs a whole seat: {@link settle} with {@link seatAt}.
 */
export async function recordDecision<T extends Terms>(
  recorder: Recorder,
  settled: Settled<T>,
): Promise<Settled<T>> {
  if (settled.notice !== undefined || settled.keep !== undefined) {
    throw new Error("a decision to tell or keep is settled at a seat, not only recorded");
  }
  const entry = auditEntryOf(settled);
  if (entry !== null) await recorder.record(entry);
  return settled;
}

/** Records the {@link doneLine} of something done once a decision was acted on. */
export async function recordDone(recorder: Recorder, audit: AuditLine): Promise<void> {
  await recordDecision(recorder, doneLine(audit));
}
