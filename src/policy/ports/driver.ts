/**
 * What the driver asks of the policy layer: the planner context (the driver places everything it
 * sends, at the label this port gives it), the decisions recorded during a call, the egress gate
 * for results, and `{{ref:N}}` for the person's screen. The driver decides no rule and chooses no
 * label: each method here answers with the policy layer's own functions (`../egress.ts`,
 * `../driver_labels.ts`, `../show.ts`). It hands out no effect worker, audit writer or references.
 */
import type { Asking, Deciding, EgressMemory, Recording } from "../capabilities.ts";
import type { Label } from "../../util/label.ts";
import type { AuditRecord } from "../audit.ts";
import type { EndpointSettings } from "../../state/settings.ts";
import type { Result } from "../../util/result.ts";
import { resultMayLeave, withheldResult } from "../egress.ts";
import { type Shown, showToPerson } from "../show.ts";
import {
  personWordsLabel,
  storedResultLabel,
  summaryLabel,
  systemPromptLabel,
  withheldResultLabel,
} from "../driver_labels.ts";

/** A tool result about to go to the planner endpoint, as the egress gate is asked about it. */
export interface OutgoingResult {
  /** The tool whose call it answers. */
  tool: string;
  content: string;
  /** What it placed in the planner context; null when no label was recorded (a stored result). */
  label: Label | null;
  /** Restored from a transcript (made in an earlier session), rather than just made. */
  stored: boolean;
}

/** The gate's answer: the result goes as it is, or the withheld notice goes in its place. */
export type Egress =
  | { sent: true }
  | {
    sent: false;
    /** The result the planner is given instead, an error naming only the tool. */
    withheld: { content: string; isError: true; label: Label };
    /** Why nobody could be asked (for the person only), or null when the person said no. */
    problem: string | null;
  };

export interface DriverPolicy {
  readonly contextLabel: Label;
  /** Joins a label into the planner context: the driver calls it for whatever it sends. */
  placeInContext(l: Label): void;
  /** `/clear`: a new context at `(T,pub)`. */
  clearContext(): void;
  onContextChange(listener: (l: Label) => void): void;
  /** A state file found corrupt mid-session, for the person. */
  onStateProblem(listener: (problem: string) => void): void;
  /** Re-reads the trust map when another session changed it, before a decision. */
  refreshTrust(): Promise<void>;
  /** The decisions recorded so far (the driver reports those a tool call added). */
  readonly decisions: readonly AuditRecord[];
  /**
   * The egress gate for a tool result (docs/contract.md §3.4), asked for a result just made and for
   * one restored from a transcript before it is sent again: whether it may go to `endpoint`, and if
   * not, what goes instead. A failure to ask is a no.
   */
  gateResult(endpoint: EndpointSettings, result: OutgoingResult): Promise<Egress>;
  /**
   * A reference's content for the person's screen only (docs/contract.md §15.1), at most
   * `maxLines`.
   */
  showToPerson(ref: string, maxLines: number): Promise<Result<Shown>>;
  /** The label of the person's message, with what they hand over alongside it. */
  personWordsLabel(alongside?: readonly Label[]): Label;
  /** The label of the driver's own system prompt (no AGENTS.md in it). */
  systemPromptLabel(): Label;
  /** The label of a summary made now of the conversation so far. */
  summaryLabel(): Label;
}

export function driverPolicy(
  policy: Deciding & EgressMemory,
): DriverPolicy {
  return {
    get contextLabel() {
      return policy.contextLabel;
    },
    placeInContext: (l) => policy.placeInContext(l),
    clearContext: () => policy.clearContext(),
    onContextChange: (f) => policy.onContextChange(f),
    onStateProblem: (f) => policy.onStateProblem(f),
    refreshTrust: () => policy.refreshTrust(),
    get decisions() {
      return policy.audit.entries;
    },
    gateResult: (endpoint, result) => gateResult(policy, endpoint, result),
    showToPerson: (ref, maxLines) => showToPerson(policy, ref, maxLines),
    personWordsLabel: (alongside) => personWordsLabel(alongside),
    systemPromptLabel: () => systemPromptLabel(null),
    summaryLabel: () => summaryLabel(policy.contextLabel),
  };
}

/** Asks the egress rule about one result (`resultMayLeave`), and words the answer for the driver. */
async function gateResult(
  policy: Asking & Recording & EgressMemory,
  endpoint: EndpointSettings,
  result: OutgoingResult,
): Promise<Egress> {
  const label = storedResultLabel(result.label);
  const what = result.stored ? `A stored result of ${result.tool}` : undefined;
  let problem: string | null = null;
  try {
    if (await resultMayLeave(policy, endpoint, result.tool, result.content, label, what)) {
      return { sent: true };
    }
  } catch (e) {
    problem = `could not ask about a private result: ${String(e)}`;
  }
  return {
    sent: false,
    withheld: { content: withheldResult(result.tool), isError: true, label: withheldResultLabel() },
    problem,
  };
}
