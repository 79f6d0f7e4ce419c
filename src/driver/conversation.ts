/**
 * The shape of the conversation (issue 25): strict chat templates refuse a request with two user
 * messages in a row ("roles must alternate"), and a turn that got no reply — the endpoint failed,
 * or the person pressed Esc before the planner answered — leaves the person's message without
 * one. Two rules keep every request well-formed:
 *
 * - the person's next message takes the place of the one that got no reply ({@link resent}): the
 *   conversation never holds two of the person's messages in a row;
 * - every request is built in one place ({@link buildRequest}), which sends adjacent user messages
 *   as one ({@link alternating}). A compaction's summary is a user message that may be followed by
 *   the person's (a cut may fall on one), and the summary request ends with a user instruction
 *   that may follow the person's last message: each pair goes as one message, in order.
 */
import type { ChatMessage, ToolSpec } from "../model/types.ts";
import { byteBoundTokens, type Fit, fitToWindow, replyReserve } from "./context_window.ts";

/** What stands between the words that got no reply and the person's next ones, when both go. */
export const RESENT_NOTE =
  "[the message above got no reply (the turn failed or was stopped); the person then wrote:]";

/**
 * The message that takes the place of the person's `unanswered` one when they write `next`: `next`
 * alone when it holds the earlier words (sent again, or recalled and added to), else both, the
 * earlier first with {@link RESENT_NOTE} between, so that nothing the person wrote is dropped
 * unseen and the planner can tell which came last. Applied to its own result it gives that result
 * again, so a resumed transcript, which holds both lines, comes to the same message.
 */
export function resent(unanswered: string, next: string): string {
  const earlier = unanswered.trim();
  if (earlier === "" || next.includes(earlier)) return next;
  return `${unanswered.trimEnd()}\n\n${RESENT_NOTE}\n\n${next}`;
}

/**
 * A resumed conversation with each of the person's messages that follows one of theirs (a
 * transcript written before resends took the place of the unanswered message) folded into one by
 * {@link resent}; `summary` says that `messages[0]` is a compaction's, which is not the person's.
 * `join` gives the folded message's label from the two recorded (the policy layer's to decide).
 */
export function foldResends<L>(
  messages: readonly ChatMessage[],
  labels: readonly (L | null)[],
  summary: boolean,
  join: (earlier: L | null, later: L | null) => L | null,
): { messages: ChatMessage[]; labels: (L | null)[] } {
  const out: ChatMessage[] = [];
  const outLabels: (L | null)[] = [];
  messages.forEach((m, i) => {
    const last = out.at(-1);
    const person = last?.role === "user" && !(summary && out.length === 1);
    if (m.role === "user" && person && last.role === "user") {
      out[out.length - 1] = { role: "user", content: resent(last.content, m.content) };
      outLabels[out.length - 1] = join(outLabels[out.length - 1], labels[i] ?? null);
      return;
    }
    out.push(m);
    outLabels.push(labels[i] ?? null);
  });
  return { messages: out, labels: outLabels };
}

/** What joins two adjacent user messages sent as one. */
export const JOINED = "\n\n";

/**
 * The messages as sent: each run of adjacent user messages made one, their texts in order with a
 * blank line between. Nothing else changes; the conversation itself keeps them apart (each has
 * its own label and its own line in the transcript).
 */
export function alternating(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (m.role === "user" && last?.role === "user") {
      out[out.length - 1] = { role: "user", content: `${last.content}${JOINED}${m.content}` };
    } else out.push(m);
  }
  return out;
}

/**
 * The one place a planner request's messages are made — each turn's request, the check whether
 * the conversation still fits, the summary request and its chunk: the system prompt and the
 * conversation, adjacent user messages as one, fitted to `window` tokens.
 */
export function buildRequest(
  system: ChatMessage,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
  window: number,
): Fit {
  return fitToWindow(system, alternating(messages), tools, window);
}

/**
 * The request {@link buildRequest} makes, made before the tokenizer has loaded: the same messages,
 * when their upper bound (`byteBoundTokens`) is within the budget, so they fit uncut by any count
 * the tokenizer could give; else null, and only the tokenizer's count can say what fits. Its
 * `tokens` is the bound, not an estimate.
 */
export function buildBoundRequest(
  system: ChatMessage,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
  window: number,
): Fit | null {
  const all = [system, ...alternating(messages)];
  const tokens = byteBoundTokens(all, tools);
  return tokens <= window - replyReserve(window)
    ? { ok: true, messages: all, compacted: 0, tokens }
    : null;
}
