/**
 * Compaction: when the conversation no longer fits the window even with old results shortened,
 * the planner is asked to summarise the oldest rounds, and the summary replaces them as one
 * message (issue: "no session dies of its length"). It is a planner request — it carries the
 * tools, as every planner request does (cli.md) — with `tool_choice: "none"` and an instruction
 * to answer in text. It is incremental: the previous summary (the first message, when there is
 * one) plus the oldest rounds that fit.
 *
 * What the summary may hold is what the planner already had: it never saw untrusted bytes it was
 * not shown, so none enter the summary; it carries the planner context's label. The person's own
 * requests are kept verbatim, appended by the driver rather than left to the model.
 * References stay valid: their bytes are in the session's state, not in the conversation.
 */
import type { ChatMessage } from "../util/chat.ts";

/** The first line of a summary message, so a later compaction (and a person) can tell it. */
export const SUMMARY_HEADER =
  "[summary of the earlier conversation, made to fit the context window]";

export const COMPACT_INSTRUCTION =
  "The conversation above no longer fits the model's context window. Summarise it for yourself, " +
  "in plain text, so that you can go on with the task: what the person asked for, the decisions " +
  "made, the files read, written or edited (by path), the commands run and what they showed, the " +
  "open references (ref:N) and what each holds, the todo list, and what is left to do. Do not call " +
  "any tool; answer with the summary only.";

export function isSummary(m: ChatMessage | undefined): boolean {
  return m?.role === "user" && m.content.startsWith(SUMMARY_HEADER);
}

/**
 * Where the oldest rounds may be cut: an index `j` such that `messages[0..j)` is whole rounds (no
 * call is parted from its results) and the newest round is not among them. Candidates are the
 * indexes of user and assistant messages after the first message, up to the newest assistant
 * message; the largest that `fits` is taken. Null when nothing can be summarised.
 */
export function cutPoint(
  messages: readonly ChatMessage[],
  fits: (j: number) => boolean,
): number | null {
  let newest = messages.length - 1;
  while (newest > 0 && messages[newest].role !== "assistant") newest--;
  let best: number | null = null;
  for (let j = 1; j <= newest; j++) {
    const m = messages[j];
    if (m.role !== "user" && m.role !== "assistant") continue;
    // A summary alone is nothing to summarise again.
    if (j === 1 && isSummary(messages[0])) continue;
    if (!fits(j)) break;
    best = j;
  }
  return best;
}

/** The person's own requests among `messages`, verbatim (summaries are not requests). */
export function requestsIn(messages: readonly ChatMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user") continue;
    if (isSummary(m)) {
      // A previous summary's requests carry on into the next one.
      const at = m.content.indexOf(REQUESTS_HEADER);
      if (at >= 0) out.push(...parseRequests(m.content.slice(at + REQUESTS_HEADER.length)));
      continue;
    }
    out.push(m.content);
  }
  return out;
}

const REQUESTS_HEADER = "\n\nThe person's requests so far, verbatim:\n";

function parseRequests(text: string): string[] {
  try {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((r): r is string => typeof r === "string") : [];
  } catch {
    return [];
  }
}

/** The message that replaces the summarised rounds. */
export function summaryMessage(summary: string, requests: readonly string[]): ChatMessage {
  return {
    role: "user",
    content: `${SUMMARY_HEADER}\n${summary.trim()}${REQUESTS_HEADER}${JSON.stringify(requests)}`,
  };
}
