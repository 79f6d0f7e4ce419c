/**
 * Keeping the conversation inside the model's context window. A server that receives more
 * than fits silently drops the start, which would lose the system prompt and the rules in it;
 * so before each request the driver estimates the size and, when it would not fit, drops the
 * bodies of the oldest tool results (keeping every message and call, so the structure stays
 * valid), and when even that is not enough, stops with a message.
 */
import type { ChatMessage, ToolSpec } from "../model/types.ts";
import type { Settings } from "../state/settings.ts";

/**
 * Characters per token when no tokenizer is loaded, on the low side so the estimate errs towards
 * "too big"; and what a result's share in characters is converted with (code and prose run at
 * about 4 characters a token, docs/benchmarks.md).
 */
const CHARS_PER_TOKEN = 3;
const PER_MESSAGE = 8;
/**
 * A real tokenizer's count (gpt-tokenizer's default encoding) times this: the models served
 * locally (Qwen, Llama, Mistral) use other vocabularies, which count a little differently.
 */
const TOKENIZER_MARGIN = 1.15;

/** A tokenizer's count of one text. */
export type Counter = (text: string) => number;
let counter: Counter | null = null;

/**
 * Loads the tokenizer the estimate uses (once; 250–310 ms of CPU, since gpt-tokenizer builds its
 * table when imported): the driver starts it once its first request is on its way, so neither
 * start-up nor that request waits for it (issue 24). Until then, characters are counted, and a
 * request is fitted by {@link byteBoundTokens}.
 */
export async function loadTokenizer(): Promise<void> {
  if (counter) return;
  const { countTokens } = await import("gpt-tokenizer");
  // A special token's name (`<|endoftext|>`, in a file about tokenizers) is counted as the text
  // it is: by default the tokenizer throws on it, which would end the turn.
  const asText = { disallowedSpecial: new Set<string>() };
  useTokenCounter((text) => countTokens(text, asText));
}

/** Whether the estimate counts with a tokenizer (loaded, or handed in), not characters. */
export function tokenizerLoaded(): boolean {
  return counter !== null;
}

/**
 * Makes the estimate count with `count` (null: characters again), forgetting what was counted
 * before. The tests and the benchmark hand in a counter that records what it is given.
 */
export function useTokenCounter(count: Counter | null): void {
  counter = count;
  counted.clear();
}

/** Counts per text, so fitting a conversation does not count the same message again and again. */
const counted = new Map<string, number>();
const MAX_COUNTED = 20_000;

function tokensOf(text: string): number {
  if (text.length === 0) return 0;
  if (!counter) return Math.ceil(text.length / CHARS_PER_TOKEN);
  let n = counted.get(text);
  if (n === undefined) {
    const { tokens, bytesBeyond } = countBounded(text, counter);
    n = Math.ceil(tokens * TOKENIZER_MARGIN) + bytesBeyond;
    if (counted.size >= MAX_COUNTED) counted.clear();
    counted.set(text, n);
  }
  return n;
}

/**
 * The most UTF-8 bytes handed to the tokenizer at once. Its work grows faster than the length of
 * one piece it cannot split (a long word, a run of CJK, base64): a 60,000-character word took
 * seconds, on the main thread, where Ctrl-C cannot stop it. A kilobyte costs about a millisecond.
 */
export const TOKEN_CHUNK_BYTES = 1024;
/**
 * The UTF-8 bytes of one text counted exactly (in chunks): past them, each remaining byte counts
 * as a token. No vocabulary the served models use has a token shorter than a byte, so this
 * overcounts — three to four times for prose and code, about right for CJK — on the safe side: a
 * text that big is compacted or refused a little early rather than overflowing the window. The
 * bound is above what a result may take of a 128k window, so ordinary results are counted
 * exactly; at most about 100–300 ms of counting for any one text.
 */
export const EXACT_TOKEN_BYTES = 128 * 1024;

/** How {@link countBounded} cuts and stops; the defaults above, smaller in tests. */
export interface CountBounds {
  chunkBytes: number;
  exactBytes: number;
}

/**
 * `text` counted by `count` in chunks of at most `chunkBytes` UTF-8 bytes (one code point longer
 * than that is one chunk), until `exactBytes` were counted: `tokens` is the sum of the chunks'
 * counts, `bytesBeyond` the UTF-8 bytes of the rest, which were not counted.
 */
export function countBounded(
  text: string,
  count: Counter,
  bounds: CountBounds = { chunkBytes: TOKEN_CHUNK_BYTES, exactBytes: EXACT_TOKEN_BYTES },
): { tokens: number; bytesBeyond: number } {
  let start = 0;
  let handed = 0;
  let tokens = 0;
  while (start < text.length && handed < bounds.exactBytes) {
    const end = chunkEnd(text, start, bounds.chunkBytes);
    tokens += count(text.slice(start, end));
    handed += utf8Length(text, start, end);
    start = end;
  }
  return { tokens, bytesBeyond: utf8Length(text, start, text.length) };
}

/**
 * Where the chunk that starts at `start` ends (exclusive): within `maxBytes`, best just before a
 * space that follows a non-space, where the tokenizer's own pre-split already cuts (a word takes
 * the space before it, never the one after), so the chunks' counts add up to the whole text's;
 * else before any other whitespace that follows a non-space; else at the byte bound, never inside
 * a surrogate pair. Such a cut inside a word may count a token or two more or less than whole.
 */
export function chunkEnd(text: string, start: number, maxBytes: number): number {
  let end = start;
  let bytes = 0;
  while (end < text.length) {
    const [size, units] = codePointAt(text, end);
    if (bytes + size > maxBytes && end > start) break;
    bytes += size;
    end += units;
  }
  if (end >= text.length) return text.length;
  for (let p = end; p > start; p--) {
    if (text.charCodeAt(p) === 0x20 && !isSpace(text.charCodeAt(p - 1))) return p;
  }
  for (let p = end; p > start; p--) {
    if (isSpace(text.charCodeAt(p)) && !isSpace(text.charCodeAt(p - 1))) return p;
  }
  return end;
}

/** UTF-8 bytes and UTF-16 units of the code point at `i`; a lone surrogate is U+FFFD, 3 bytes. */
function codePointAt(text: string, i: number): [number, number] {
  const c = text.charCodeAt(i);
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return [4, 2];
  }
  return [3, 1];
}

/**
 * The UTF-8 length of `text[from, to)`, without encoding it: {@link codePointAt}'s sizes, summed
 * without a pair made per character (the first request's bound counts the whole request with it,
 * on the way to sending it: issue 24).
 */
export function utf8Length(text: string, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

const WHITESPACE = /\s/;
/** Whitespace as the tokenizer's pattern (`\s`, with the u flag) sees it. */
function isSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return WHITESPACE.test(String.fromCharCode(c));
}

export const COMPACTED_RESULT =
  "[result removed to fit the model's context window; repeat the call if it is still needed]";
export const COMPACTED_ARGUMENTS = '{"_compacted":"arguments removed to fit the context window"}';

/** The tools' schemas as sent, counted once per list. */
const toolTokens = new WeakMap<readonly ToolSpec[], number>();

/**
 * The tokens a request of these messages and tools takes, estimated: a real tokenizer's count
 * with a margin once {@link loadTokenizer} ran, else characters over 3.
 */
export function estimateTokens(
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[] = [],
): number {
  let tokens = messageTokens(messages, tokensOf);
  if (tools.length) {
    let t = toolTokens.get(tools);
    if (t === undefined) toolTokens.set(tools, t = tokensOf(JSON.stringify(tools)));
    tokens += t;
  }
  return tokens;
}

/**
 * What {@link estimateTokens} can come to once the tokenizer is loaded, at most, counted without
 * it: each text's UTF-8 bytes in place of its tokens, with the same margin and overheads. A
 * byte-level vocabulary's tokens each cover at least one byte, so a text never has more tokens
 * than bytes (test: context_window_test.ts, over multi-byte text and emoji), and a chunk's count,
 * the margin's rounding and the bytes past the exact bound only add up to this or less. What fits
 * by it fits by the estimate, untouched; it is only for fitting (three to four times the estimate
 * for prose), never for the fill shown or for holding the estimate to a server's count.
 */
export function byteBoundTokens(
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[] = [],
): number {
  const bound = (text: string) => Math.ceil(utf8Length(text, 0, text.length) * TOKENIZER_MARGIN);
  return messageTokens(messages, bound) + (tools.length ? bound(JSON.stringify(tools)) : 0);
}

/** The messages' tokens, each text counted by `count`, with each message's and call's overhead. */
function messageTokens(messages: readonly ChatMessage[], count: Counter): number {
  let tokens = PER_MESSAGE * messages.length;
  for (const m of messages) {
    tokens += count(m.content ?? "");
    if (m.role === "assistant" && m.tool_calls) {
      for (const c of m.tool_calls) {
        tokens += count(c.function.name) + count(c.function.arguments) + 7;
      }
    }
  }
  return tokens;
}

/**
 * Tokens kept free for the reply: an eighth of the window, at most 4,096. A small window gets a
 * small reserve, since a reply there is mostly a tool call, and its conversation needs the room.
 */
export function replyReserve(contextWindow: number): number {
  return Math.min(4096, Math.floor(contextWindow / 8));
}

/** What stands for a result of the newest round when not even part of it fits. */
export const NO_ROOM_RESULT = "[result removed: no room left in the context window; ask for less]";

/**
 * The most one tool result may take, in characters (docs/contract.md §14: "never more than a set
 * share of the context window that is left"): a quarter of what the window holds once the reply's
 * reserve, the system prompt and the tool schemas are taken out, at the estimate's characters per
 * token; never below a small floor, so an error or a short page still fits.
 */
export function resultShareChars(
  system: ChatMessage,
  tools: readonly ToolSpec[],
  contextWindow: number,
): number {
  const left = contextWindow - replyReserve(contextWindow) - estimateTokens([system], tools);
  return Math.max(1_000, Math.floor(Math.max(0, left) / 4) * CHARS_PER_TOKEN);
}

/**
 * A result cut to `maxChars` at a line boundary, with a note saying so; the same text when it
 * fits. What a tool could not narrow itself (a listing, search lines) is cut here, so that no
 * result fills the conversation.
 */
export function cutToShare(content: string, maxChars: number): { content: string; cut: boolean } {
  if (content.length <= maxChars) return { content, cut: false };
  const lines = content.split("\n");
  const kept: string[] = [];
  let size = 0;
  const room = Math.max(0, maxChars - 200);
  for (const line of lines) {
    if (size + line.length + 1 > room) break;
    kept.push(line);
    size += line.length + 1;
  }
  if (kept.length === 0) kept.push(content.slice(0, room));
  const shown = kept.length < lines.length
    ? `the first ${kept.length} of ${lines.length} lines`
    : "part";
  return {
    content:
      `${kept.join("\n")}\n[result cut to fit the model's context window: ${shown} are shown; ` +
      "narrow the call (a directory, a pattern, an offset and limit) to see the rest]",
    cut: true,
  };
}

/**
 * The settings a tool call runs with: the limits that size a result shown to the planner (a
 * read_file page, a vouched command's shown output) narrowed to the window's share, so the tool
 * itself returns less and says where to go on, rather than being cut afterwards.
 */
export function withinShare(settings: Settings, share: number): Settings {
  const limits = settings.limits;
  if (limits.readBytes <= share && limits.shownOutputChars <= share) return settings;
  return {
    ...settings,
    limits: {
      ...limits,
      readBytes: Math.min(limits.readBytes, share),
      shownOutputChars: Math.min(limits.shownOutputChars, share),
    },
  };
}

export type Fit =
  | { ok: true; messages: ChatMessage[]; compacted: number; tokens: number }
  | { ok: false; tokens: number; message: string };

/**
 * Fits `system + messages + tools` into the window: first the oldest tool results and long
 * call arguments give way; the last round (the newest assistant message and what follows) is
 * shortened only when that is not enough, with a note, so a result the planner just asked for
 * never ends the session.
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
  // Still too big: the newest round's results are shortened to fit, largest first, each with a
  // note, rather than ending the session (the planner can ask again for less).
  const newest = out.map((m, i) => ({ m, i })).filter(({ m, i }) =>
    i > lastAssistant && m.role === "tool"
  ).sort((a, b) => b.m.content!.length - a.m.content!.length);
  for (const { m, i } of newest) {
    if (tokens <= budget) break;
    const over = (tokens - budget) * CHARS_PER_TOKEN;
    const keep = Math.max(0, (m.content?.length ?? 0) - over - 400);
    const content = keep < 400 ? NO_ROOM_RESULT : cutToShare(m.content ?? "", keep).content;
    out[i] = { ...m, content } as ChatMessage;
    compacted++;
    tokens = estimateTokens(out, tools);
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

/**
 * Whether `next` only adds messages to `previous` (both as sent, the system prompt first): then
 * a server's prompt count can only grow, and a smaller one means it dropped something. Anything
 * compacted, cleared or shortened in between makes a message differ, and the answer no.
 */
export function onlyAdded(previous: readonly ChatMessage[], next: readonly ChatMessage[]): boolean {
  if (next.length <= previous.length) return false;
  for (let i = 0; i < previous.length; i++) {
    const a = previous[i];
    const b = next[i];
    if (a === b) continue;
    if (a.role !== b.role || a.content !== b.content) return false;
    if (a.role === "tool" && b.role === "tool" && a.tool_call_id !== b.tool_call_id) return false;
    const ca = a.role === "assistant" ? a.tool_calls : undefined;
    const cb = b.role === "assistant" ? b.tool_calls : undefined;
    if (JSON.stringify(ca ?? null) !== JSON.stringify(cb ?? null)) return false;
  }
  return true;
}
