/**
 * The driver's side of the egress gate (docs/contract.md §3.4): what each message placed in the
 * planner context, which tool results were let go to the planner endpoint, and the sweep before
 * each request that puts every other result to the gate. The gate itself — the label a result
 * without one is taken at, asking the person, a failure to ask, what stands in for a result kept
 * back — is the policy layer's (`DriverPolicy.gateResult`); nothing here decides, it only keeps
 * track, so that a result is asked about once and a restored one is asked about before it leaves
 * again.
 */
import type { DriverPolicy, OutgoingResult } from "../policy/api.ts";
import type { EndpointSettings } from "../state/settings.ts";
import type { Label } from "../util/label.ts";
import type { ChatMessage } from "../model/types.ts";

/** A result as the planner is given it in place of one kept back. */
export interface Withheld {
  content: string;
  isError: true;
  label: Label;
}

export class Outgoing {
  /** What each message placed in the planner context (tool results and the person's words). */
  readonly #placed = new WeakMap<ChatMessage, Label>();
  /** Tool results the egress gate let go to the planner endpoint in this session. */
  readonly #cleared = new WeakSet<ChatMessage>();

  /**
   * `endpoint`: where the planner's requests go now (it changes with `/model`'s settings);
   * `notice`: what the person is told when nobody could be asked.
   */
  constructor(
    readonly policy: DriverPolicy,
    readonly endpoint: () => EndpointSettings,
    readonly notice: (text: string) => void,
  ) {}

  /** Records what `message` placed in the planner context. */
  place(message: ChatMessage, label: Label): void {
    this.#placed.set(message, label);
  }

  /** What `message` placed in the planner context, when that was recorded. */
  labelOf(message: ChatMessage): Label | null {
    return this.#placed.get(message) ?? null;
  }

  /** A result the gate was asked about when it was made: not asked again when it is sent. */
  cleared(message: ChatMessage): void {
    this.#cleared.add(message);
  }

  /** Asks the gate about a result: null when it may go, else the result to send instead. */
  async gate(result: OutgoingResult): Promise<Withheld | null> {
    const egress = await this.policy.gateResult(this.endpoint(), result);
    if (egress.sent) return null;
    if (egress.problem !== null) this.notice(egress.problem);
    return egress.withheld;
  }

  /**
   * Before the conversation is sent: a tool result not yet let go to this planner endpoint — one
   * restored from a transcript, made in a session whose endpoint may have been local — is put to
   * the gate now, and what the gate gives in its place replaces it in `messages`.
   */
  async sweep(messages: ChatMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m.role !== "tool" || this.#cleared.has(m)) continue;
      const tool = toolOf(messages, m.tool_call_id, i);
      const label = this.#placed.get(m) ?? null;
      const withheld = await this.gate({ tool, content: m.content, label, stored: true });
      if (!withheld) {
        this.#cleared.add(m);
        continue;
      }
      const kept: ChatMessage = {
        role: "tool",
        tool_call_id: m.tool_call_id,
        content: withheld.content,
      };
      this.#placed.set(kept, withheld.label);
      this.#cleared.add(kept);
      messages[i] = kept;
    }
  }
}

/** The tool whose call a result answers (the nearest assistant message before it). */
function toolOf(messages: readonly ChatMessage[], callId: string, at: number): string {
  for (let j = at - 1; j >= 0; j--) {
    const m = messages[j];
    if (m.role !== "assistant") continue;
    const call = m.tool_calls?.find((c) => c.id === callId);
    if (call) return call.function.name.slice(0, 80);
  }
  return "a tool";
}
