/**
 * Keeping the conversation inside the model's context window. A server that receives more
 * than fits silently drops the start, which would lose the system prompt and the rules in it;
 * so before each request the driver estimates the size and, when it would not fit, drops the
 * bodies of the oldest tool results (keeping every message and call, so the structure stays
 * valid), and when even that is not enough, stops with a message.
 */
import type { ChatMessage, ToolSpec } from "../model/types.ts";

/** Characters per token, on the low side so the estimate errs towards "too big". */
const CHARS_PER_TOKEN = 3;
const PER_MESSAGE = 8;

export const COMPACTED_RESULT =
  "[result removed to fit the model's context window; repeat the call if it is still needed]";
export const COMPACTED_ARGUMENTS = '{"_compacted":"arguments removed to fit the context window"}';

export function estimateTokens(
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[] = [],
): number {
  let chars = 0;
  for (const m of messages) {
    chars += m.content?.length ?? 0;
    if (m.role === "assistant" && m.tool_calls) {
      for (const c of m.tool_calls) {
        chars += c.function.name.length + c.function.arguments.length + 20;
      }
    }
  }
  const toolChars = tools.length ? JSON.stringify(tools).length : 0;
  return Math.ceil((chars + toolChars) / CHARS_PER_TOKEN) + PER_MESSAGE * messages.length;
}

/** Tokens kept free for the reply. */
export function replyReserve(contextWindow: number): number {
  return Math.min(4096, Math.floor(contextWindow / 4));
}

export type Fit =
  | { ok: true; messages: ChatMessage[]; compacted: number; tokens: number }
  | { ok: false; tokens: number; message: string };

/**
 * Fits `system + messages + tools` into the window. The last round (the newest assistant
 * message and what follows) is never compacted: the planner needs what it just asked for.
 */
export function fitToWindow(
  system: ChatMessage,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
  contextWindow: number,
): Fit {
  const budget = contextWindow - replyReserve(contextWindow);
  const all = [system, ...messages];
  let tokens = estimateTokens(all, tools);
  if (tokens <= budget) return { ok: true, messages: all, compacted: 0, tokens };
  const out = all.map((m) => ({ ...m })) as ChatMessage[];
  let lastAssistant = out.length - 1;
  while (lastAssistant > 0 && out[lastAssistant].role !== "assistant") lastAssistant--;
  let compacted = 0;
  // Oldest first: tool result bodies, then long tool-call arguments.
  for (let i = 1; i < lastAssistant && tokens > budget; i++) {
    const m = out[i];
    if (m.role === "tool" && m.content.length > COMPACTED_RESULT.length) {
      out[i] = { ...m, content: COMPACTED_RESULT };
      compacted++;
      tokens = estimateTokens(out, tools);
    }
  }
  for (let i = 1; i < lastAssistant && tokens > budget; i++) {
    const m = out[i];
    if (m.role === "assistant" && m.tool_calls?.some((c) => c.function.arguments.length > 200)) {
      out[i] = {
        ...m,
        tool_calls: m.tool_calls.map((c) =>
          c.function.arguments.length > 200
            ? { ...c, function: { ...c.function, arguments: COMPACTED_ARGUMENTS } }
            : c
        ),
      };
      compacted++;
      tokens = estimateTokens(out, tools);
    }
  }
  if (tokens <= budget) return { ok: true, messages: out, compacted, tokens };
  return {
    ok: false,
    tokens,
    message: `the conversation no longer fits the model's context window (about ${tokens} tokens ` +
      `needed, ${budget} available of ${contextWindow}, even after removing old tool results); ` +
      `start a new session (or /clear), or raise "contextWindow" in the config if the model allows more`,
  };
}
