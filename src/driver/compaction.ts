/**
 * Compaction: when the conversation no longer fits the window even with old results shortened,
 * the planner is asked to summarise the oldest rounds, and the summary replaces them as one
 * message (issue: "no session dies of its length"). It is a planner request — it carries the
 * tools, as every planner request does (docs/cli.md#options) — with `tool_choice: "none"` and an
 * instruction to answer in text. It is incremental: the previous summary (the first message, when
 * there is one) plus the oldest rounds that fit.
 *
 * What the summary may hold is what the planner already had: it never saw untrusted bytes it was
 * not shown, so none enter the summary; its label is the policy layer's to give
 * (`summaryLabel`, src/policy/driver_labels.ts: the planner context's), asked when it is made.
 * The person's own requests are kept verbatim beside the summary, as data ({@link Summary}): the
 * model's text may quote or garble anything, so nothing is read back from it. They are carried
 * from one summary to the next, newest first within a budget ({@link keptWithin}), the number
 * left out said. References stay valid: their bytes are in the session's state, not in the
 * conversation. Each request goes through `buildRequest` (conversation.ts): the summary request
 * ends with a user instruction, which is sent as one message with the person's last words when
 * the chunk ends on them.
 *
 * The loop that asks for summaries ({@link compactConversation}) lives here, not in the driver:
 * it is a conversation of its own with the planner, with its own bound and its own notices.
 */
import type { ChatMessage } from "../util/chat.ts";
import type { ModelClient, ToolSpec } from "../model/types.ts";
import type { Label } from "../util/label.ts";
import type { Window } from "../util/window.ts";
import { type DriverEvent, type TurnFailure, turnFailure } from "./events.ts";
import { estimateTokens } from "./context_window.ts";
import { buildRequest } from "./conversation.ts";
import type { KeptRequests } from "../state/transcript.ts";
import { stripReasoning } from "../util/reasoning.ts";
import { plural } from "../util/plural.ts";

/**
 * The first line of a summary message, for the planner and a person reading the transcript. The
 * driver knows its summary by the data it keeps beside it, never by this text.
 */
export const SUMMARY_HEADER =
  "[summary of the earlier conversation, made to fit the context window]";

export const COMPACT_INSTRUCTION =
  "The conversation above no longer fits the model's context window. Summarise it for yourself, " +
  "in plain text, so that you can go on with the task: what the person asked for, the decisions " +
  "made, the files read, written or edited (by path), the commands run and what they showed, the " +
  "open references (ref:N) and what each holds, the todo list, and what is left to do. Do not call " +
  "any tool; answer with the summary only.";

/** A summary as the driver keeps it: its message, and the person's requests as data beside it. */
export interface Summary {
  message: ChatMessage;
  requests: KeptRequests;
}

/**
 * Where the oldest rounds may be cut: an index `j` such that `messages[0..j)` is whole rounds (no
 * call is parted from its results) and the newest round is not among them. Candidates are the
 * indexes of user and assistant messages after the first message, up to the newest assistant
 * message; the largest that `fits` is taken. Null when nothing can be summarised. `summary` is the
 * message of the summary the conversation opens with, if any: alone, it is not summarised again.
 */
export function cutPoint(
  messages: readonly ChatMessage[],
  fits: (j: number) => boolean,
  summary: ChatMessage | null = null,
): number | null {
  let newest = messages.length - 1;
  while (newest > 0 && messages[newest].role !== "assistant") newest--;
  let best: number | null = null;
  for (let j = 1; j <= newest; j++) {
    const m = messages[j];
    if (m.role !== "user" && m.role !== "assistant") continue;
    if (j === 1 && summary !== null && messages[0] === summary) continue;
    if (!fits(j)) break;
    best = j;
  }
  return best;
}

/**
 * The person's requests in `chunk`, oldest first, verbatim: those kept beside `previous` when the
 * chunk holds it (read from its data, never from its text, which is the model's and may quote
 * anything — a summary before it, whose requests it then seemed to hold), then each of the
 * person's own messages. `leftOut`: those `previous` had already left out.
 */
export function requestsIn(
  chunk: readonly ChatMessage[],
  previous: Summary | null,
): { requests: string[]; leftOut: number } {
  const requests: string[] = [];
  let leftOut = 0;
  for (const m of chunk) {
    if (previous !== null && m === previous.message) {
      requests.push(...previous.requests.kept);
      leftOut += previous.requests.leftOut;
    } else if (m.role === "user") requests.push(m.content);
  }
  return { requests, leftOut };
}

/**
 * How many tokens the person's requests may take beside a summary: an eighth of the window, at
 * most 20,000 (the bound Codex keeps the person's messages to when it compacts).
 */
export function requestsBudget(window: number): number {
  return Math.min(20_000, Math.floor(window / 8));
}

/** What ends a request cut to the budget (the newest alone is larger than all of it). */
export const CUT_REQUEST = "\n[cut here to fit beside the summary; the transcript keeps it whole]";

/**
 * The requests kept within `budget` tokens, newest first: each whole while it fits; the newest is
 * cut to fit when it alone does not, and the older ones from the first that does not fit on are
 * left out, counted (with the `leftOut` before) so the summary can say so. Kept oldest first.
 */
export function keptWithin(
  requests: readonly string[],
  leftOut: number,
  budget: number,
): KeptRequests {
  const kept: string[] = [];
  let used = 0;
  for (let i = requests.length - 1; i >= 0; i--) {
    const tokens = textTokens(requests[i]);
    if (used + tokens <= budget) {
      kept.unshift(requests[i]);
      used += tokens;
      continue;
    }
    if (kept.length === 0) {
      const cut = cutToTokens(requests[i], budget);
      if (cut !== null) {
        kept.unshift(cut);
        i--;
      }
    }
    return { kept, leftOut: leftOut + i + 1 };
  }
  return { kept, leftOut };
}

function textTokens(text: string): number {
  return estimateTokens([{ role: "user", content: text }]);
}

/** `text` cut (with {@link CUT_REQUEST}) to at most `budget` tokens, or null when no start fits. */
function cutToTokens(text: string, budget: number): string | null {
  let length = text.length;
  for (let tries = 0; tries < 8 && length > 0; tries++) {
    const cut = text.slice(0, length) + CUT_REQUEST;
    const tokens = textTokens(cut);
    if (tokens <= budget) return cut;
    length = Math.floor(length * Math.min(0.9, budget / tokens));
  }
  return null;
}

/** What closes a summary message, so that words after it (sent with it as one) stand apart. */
export const SUMMARY_END = "[end of the summary]";

/**
 * The message that replaces the summarised rounds: the header, the model's summary, then the
 * person's requests, each a JSON string on a line of its own, and how many were left out. Written
 * for the planner to read; nothing reads it back (the requests are data beside it).
 */
export function summaryMessage(summary: string, requests: KeptRequests): ChatMessage {
  const parts = [`${SUMMARY_HEADER}\n${summary.trim()}`];
  if (requests.kept.length > 0 || requests.leftOut > 0) {
    const left = requests.leftOut > 0
      ? ` (the ${plural(requests.leftOut, "oldest request")} left out for room; the ` +
        "transcript keeps them)"
      : "";
    const list = requests.kept.map((r) => JSON.stringify(r)).join("\n");
    parts.push(`The person's requests so far, verbatim, oldest first${left}:\n${list}`.trimEnd());
  }
  parts.push(SUMMARY_END);
  return { role: "user", content: parts.join("\n\n") };
}

/** How a summary written before the requests were kept as data put them after its text. */
const LEGACY_REQUESTS = "\n\nThe person's requests so far, verbatim:\n";

/**
 * The requests of a summary from a transcript written before they were kept as data. They were
 * written last, as one JSON line after the model's text, so their header's last occurrence is
 * theirs — whatever the model's text quoted before it. Nothing when it does not read.
 */
export function legacyRequests(content: string): KeptRequests {
  const at = content.lastIndexOf(LEGACY_REQUESTS);
  if (at < 0) return { kept: [], leftOut: 0 };
  try {
    const parsed = JSON.parse(content.slice(at + LEGACY_REQUESTS.length));
    const kept = Array.isArray(parsed)
      ? parsed.filter((r): r is string => typeof r === "string")
      : [];
    return { kept, leftOut: 0 };
  } catch {
    return { kept: [], leftOut: 0 };
  }
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
  /** The summary the conversation opens with, if any (its requests carry on into the next). */
  summary: Summary | null;
  /** The summary's label, asked of the policy layer when the summary is made. */
  summaryLabel(): Label;
  /** Keeps a summary: the conversation becomes `summary.message` followed by `kept`. */
  keep(summary: Summary, kept: readonly ChatMessage[], label: Label): Promise<void>;
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
  let previous = run.summary;
  let replaced = 0;
  for (let attempt = 0; attempt < MAX_SUMMARIES; attempt++) {
    if (!run.once && buildRequest(system, current, specs, window).ok) break;
    const chunkFits = (j: number) =>
      buildRequest(system, [...current.slice(0, j), instruction], specs, window).ok;
    const j = cutPoint(current, chunkFits, previous?.message ?? null);
    if (j === null) break;
    const chunk = current.slice(0, j);
    const request = buildRequest(system, [...chunk, instruction], specs, window);
    if (!request.ok) break;
    run.emit({ type: "model_request", turn: run.turn });
    let text: string;
    try {
      const reply = await run.planner.complete({
        messages: request.messages,
        tools: specs,
        toolChoice: "none",
        signal: run.signal,
      });
      text = stripReasoning(reply.text).text.trim();
    } catch (e) {
      return turnFailure(e);
    }
    if (text === "") break;
    const found = requestsIn(chunk, previous);
    const requests = keptWithin(found.requests, found.leftOut, requestsBudget(window));
    const summary: Summary = { message: summaryMessage(text, requests), requests };
    const kept = current.slice(j);
    await run.keep(summary, kept, run.summaryLabel());
    current = [summary.message, ...kept];
    replaced += chunk.length;
    const left = requests.leftOut - found.leftOut;
    run.emit({
      type: "notice",
      text: (run.once
        ? "the conversation was summarised, as you asked (/compact): "
        : `the conversation was summarised to fit the context window (${run.window.tokens} tokens): `) +
        `${plural(chunk.length, "earlier message")} became one summary${
          left > 0
            ? ` (your ${plural(left, "oldest request")} no longer fit beside it and ${
              left === 1 ? "was" : "were"
            } left out)`
            : ""
        }; the transcript keeps them all`,
    });
    previous = summary;
    if (run.once) break;
  }
  return replaced;
}
