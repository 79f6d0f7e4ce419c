/**
 * Private bytes leaving the machine (design.md §3): `priv` content to a model endpoint not
 * marked `local` asks the person once per value; a local endpoint may receive it. Processors
 * (spawn_processor: the documents and the instruction) and the planner (a private tool result,
 * an error result too, when it is made and when a resumed conversation is sent again) all ask
 * here, so a value allowed or refused once is not asked about again in the session.
 */
import type { Policy } from "./core.ts";
import { formatLabel, type Label } from "../util/label.ts";
import type { EndpointSettings } from "../state/settings.ts";
import { sha256 } from "../util/hash.ts";

/** Per policy (one session): the SHA-256 of a value → whether it may be sent. */
const answers = new WeakMap<Policy, Map<string, boolean>>();

export interface EgressValue {
  /** What it is, for the person: "ref:3 (src/.env)", "the result of read_file". */
  what: string;
  label: Label;
  sha256: string;
}

/** Whether `value` may go to `endpoint`; asks the person the first time a private value would. */
export async function mayLeave(
  policy: Policy,
  endpoint: EndpointSettings,
  role: "processor" | "planner",
  tool: string,
  value: EgressValue,
): Promise<boolean> {
  if (endpoint.local || value.label.confidentiality !== "priv") return true;
  let known = answers.get(policy);
  if (!known) answers.set(policy, known = new Map());
  const before = known.get(value.sha256);
  if (before !== undefined) return before;
  const answer = await policy.person.ask({
    header: "Private content to a remote model",
    question: `${value.what}, labelled ${formatLabel(value.label)}, would be sent to the ${role} ` +
      `at ${endpoint.url}, which is not marked local. Send it?`,
    options: [{ label: "send" }, { label: "do not send" }],
  });
  const allowed = answer.kind === "options" && answer.chosen.length === 1 &&
    answer.chosen[0] === "send";
  known.set(value.sha256, allowed);
  await policy.record({
    tool,
    routing: { endpoint: endpoint.url, role },
    labels: { content: value.label },
    decision: allowed
      ? "private content sent to a non-local endpoint"
      : "private content kept back",
    by: policy.asker,
    sha256: value.sha256,
  });
  return allowed;
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
  policy: Policy,
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
