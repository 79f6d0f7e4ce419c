/**
 * Compaction: when the conversation no longer fits the window even with old results shortened,
 * the planner is asked to summarise the oldest rounds, and the summary replaces them as one
 * message (issue: "no session dies of its length"). It is a planner request — it carries the
 * tools, as every planner request does (cli.md) — with `tool_choice: "none"` and an instruction
 * to answer in text. It is incremental: the previous summary (the first message, when there is
 * one) plus the oldest rounds that fit.
 *
 * What the summary may hold is what the planner already had: it never saw untrusted bytes it was
 * not shown, so none enter the summary; its label is the policy layer's to give
 * (`summaryLabel`, src/policy/driver_labels.ts: the planner context's), asked when it is made.
 * The person's own requests are kept verbatim, appended here rather than left to the model.
 * References stay valid: their bytes are in the session's state, not in the conversation.
 * Each request goes through `buildRequest` (conversation.ts): the summary request ends with a user
 * instruction, sent as one message with the person's last words when the chunk ends on them.
 *
 * The loop that asks for summaries ({@link compactConversation}) lives here, not in the driver:
 * it is a conversation of its own with the planner, with its own bound and its own notices.
 */
import type { ChatMessage } from "../util/chat.ts";
import type { ModelClient, ToolSpec } from "../model/types.ts";
import type { Label } from "../util/label.ts";
import type { Window } from "../util/window.ts";
import { type DriverEvent, type TurnFailure, turnFailure } from "./events.ts";
import { buildRequest } from "./conversation.ts";
import { stripReasoning } from "../util/reasoning.ts";
import { plural } from "../util/plural.ts";

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

/** How many summaries one compaction asks for at most before it gives up on fitting. */
const MAX_SUMMARIES = 6;

/** What one compaction needs of the driver. */
export interface CompactionRun {
  planner: ModelClient;
  system: ChatMessage;
  specs: ToolSpec[];
  window: Window;
  signal?: AbortSignal;
  /** `/compact`: summarise once, whether or not the conversation fits. */
  once: boolean;
  /** The number of the planner request (for the screen's `model_request`). */
  turn: number;
  /** The summary's label, asked of the policy layer when the summary is made. */
  summaryLabel(): Label;
  /** Keeps a summary: the conversation becomes `summary` followed by `kept`. */
  keep(summary: ChatMessage, kept: readonly ChatMessage[], label: Label): Promise<void>;
  emit(event: DriverEvent): void;
}

/**
 * Replaces the oldest rounds of `messages` with the planner's summary of them, as many times as
 * it takes (bounded) for the rest to fit — or once, asked for by `/compact`. Returns how many
 * messages were replaced, or the failure that ends the turn.
 */
export async function compactConversation(
  messages: readonly ChatMessage[],
  run: CompactionRun,
): Promise<number | TurnFailure> {
  const { system, specs } = run;
  const window = run.window.fit;
  const instruction: ChatMessage = { role: "user", content: COMPACT_INSTRUCTION };
  let current = messages;
  let replaced = 0;
  for (let attempt = 0; attempt < MAX_SUMMARIES; attempt++) {
    if (!run.once && buildRequest(system, current, specs, window).ok) break;
    const chunkFits = (j: number) =>
      buildRequest(system, [...current.slice(0, j), instruction], specs, window).ok;
    const j = cutPoint(current, chunkFits);
    if (j === null) break;
    const chunk = current.slice(0, j);
    const request = buildRequest(system, [...chunk, instruction], specs, window);
    if (!request.ok) break;
    run.emit({ type: "model_request", turn: run.turn });
    let summary: string;
    try {
      const reply = await run.planner.complete({
        messages: request.messages,
        tools: specs,
        toolChoice: "none",
        signal: run.signal,
      });
      summary = stripReasoning(reply.text).text.trim();
    } catch (e) {
      return turnFailure(e);
    }
    if (summary === "") break;
    const message = summaryMessage(summary, requestsIn(chunk));
    const kept = current.slice(j);
    await run.keep(message, kept, run.summaryLabel());
    current = [message, ...kept];
    replaced += chunk.length;
    run.emit({
      type: "notice",
      text:
        `the conversation was summarised to fit the context window (${run.window.tokens} tokens): ` +
        `${
          plural(chunk.length, "earlier message")
        } became one summary; the transcript keeps them all`,
    });
    if (run.once) break;
  }
  return replaced;
}
