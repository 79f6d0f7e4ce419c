/**
 * Private bytes leaving the machine (docs/contract.md §3.4): `priv` content to a model endpoint not
 * marked `local` asks the person once per value; a local endpoint may receive it. Processors
 * (spawn_processor: the documents and the instruction) and the planner (a private tool result,
 * an error result too, when it is made and when a resumed conversation is sent again) all ask
 * here, so a value allowed or refused once is not asked about again in the session.
 */
import type { Asking, EgressMemory, Recording } from "./capabilities.ts";
import { formatLabel, type Label } from "../util/label.ts";
import type { EndpointSettings } from "../state/settings.ts";
import { sha256 } from "../util/hash.ts";
import type { Decider } from "./audit.ts";
import type { Answer, Question } from "../person/person.ts";
import {
  allowQuietly,
  type AuditLine,
  refuseQuietly,
  seatAt,
  settle,
  type Verdict,
} from "./verdict.ts";

export interface EgressValue {
  /** What it is, for the person: "ref:3 (src/.env)", "the result of read_file". */
  what: string;
  label: Label;
  sha256: string;
}

/** The facts egress is decided on: the value, where it would go, and what was said before. */
export interface EgressFacts {
  endpoint: { url: string; local: boolean };
  role: "processor" | "planner";
  tool: string;
  value: EgressValue;
  /** What the person said about these bytes earlier in the session; undefined: not asked yet. */
  before: boolean | undefined;
  asker: Decider;
}

/** Egress verdicts: the person's answer is remembered for the value's hash. */
interface EgressTerms {
  grants: void;
  refusal: void;
  question: Question;
  answer: Answer;
  keep: { sha256: string; allowed: boolean };
}

/**
 * Private bytes to a non-local endpoint ask, once per value (docs/contract.md §3.4): public bytes
 * and a local endpoint need no question, and a value asked about before has its answer.
 */
export function evaluateEgress(f: EgressFacts): Verdict<EgressTerms> {
  const { endpoint, role, value } = f;
  if (endpoint.local || value.label.confidentiality !== "priv") return allowQuietly(undefined);
  if (f.before !== undefined) {
    return f.before ? allowQuietly(undefined) : refuseQuietly(undefined);
  }
  const line = (allowed: boolean): AuditLine => ({
    tool: f.tool,
    routing: { endpoint: endpoint.url, role },
    labels: { content: value.label },
    decision: allowed
      ? "private content sent to a non-local endpoint"
      : "private content kept back",
    by: f.asker,
    sha256: value.sha256,
  });
  return {
    kind: "ask",
    question: {
      header: "Private content to a remote model",
      question:
        `${value.what}, labelled ${formatLabel(value.label)}, would be sent to the ${role} ` +
        `at ${endpoint.url}, which is not marked local. Send it?`,
      options: [{ label: "send" }, { label: "do not send" }],
    },
    answered: (answer) => {
      const allowed = answer.kind === "options" && answer.chosen.length === 1 &&
        answer.chosen[0] === "send";
      const keep = { sha256: value.sha256, allowed };
      return allowed
        ? { kind: "allow", grants: undefined, audit: line(true), keep }
        : { kind: "refuse", refusal: undefined, audit: line(false), keep };
    },
  };
}

/** Whether `value` may go to `endpoint`; asks the person the first time a private value would. */
export async function mayLeave(
  policy: Asking & Recording & EgressMemory,
  endpoint: EndpointSettings,
  role: "processor" | "planner",
  tool: string,
  value: EgressValue,
): Promise<boolean> {
  const remembered = policy.egressAnswers;
  const verdict = evaluateEgress({
    endpoint,
    role,
    tool,
    value,
    before: remembered.get(value.sha256),
    asker: policy.asker,
  });
  const settled = await settle(
    verdict,
    seatAt<EgressTerms>(
      policy,
      (question) => policy.person.ask(question),
      (kept) => void remembered.set(kept.sha256, kept.allowed),
    ),
  );
  return settled.kind === "allow";
}

/**
 * Whether a tool's result carries bytes from the machine. todo_write echoes the planner's own
 * list and ask_user the person's own answers: both are already the conversation's, so they are
 * never asked about.
 */
export function carriesMachineBytes(tool: string): boolean {
  return tool !== "todo_write" && tool !== "ask_user";
}

/**
 * Whether a tool result may go to the planner endpoint: the one question for a result just
 * made and for one restored from a transcript, error results included.
 */
export function resultMayLeave(
  policy: Asking & Recording & EgressMemory,
  endpoint: EndpointSettings,
  tool: string,
  content: string,
  label: Label,
  what = `The result of ${tool}`,
): Promise<boolean> {
  if (!carriesMachineBytes(tool)) return Promise.resolve(true);
  return mayLeave(policy, endpoint, "planner", tool, { what, label, sha256: sha256(content) });
}

/** What the planner is given in place of a private result the person kept back. */
export function withheldResult(tool: string): string {
  return `error: ${tool}: the result is private and the planner endpoint is not marked local; ` +
    "the person did not allow sending it, so nothing of it was sent";
}
