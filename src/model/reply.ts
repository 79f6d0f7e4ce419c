/**
 * Assembling one reply from what an endpoint sends: server-sent events (`data: {…}` chunks,
 * ending with `[DONE]`) or, from a server that ignores `stream`, one JSON body. The parser is
 * strict about what it cannot understand (an error the person can read) and lenient about
 * what small local servers commonly omit (a missing tool-call id or index). The event-stream
 * framing itself (lines, CR/LF, fields, comments) is `eventsource-parser`'s.
 */
import { createParser } from "eventsource-parser";
import type { ModelReply, ToolCall } from "./types.ts";

/** Far beyond any sensible reply; a server that keeps sending is stopped here, not by memory. */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;

/**
 * A reply Brave Bot cannot use. `detail` may quote the endpoint (its error text, the bytes that
 * were not JSON) and is for the person only; the kind is what the planner may be told.
 */
export class ReplyFormatError extends Error {
  override name = "ReplyFormatError";
  constructor(
    readonly kind: "not_json" | "endpoint_error" | "malformed",
    readonly detail: string,
  ) {
    super(`the reply cannot be used (${kind})`);
  }
}

/** The stream ended before the server said it was done: worth asking again. */
export class StreamCutError extends Error {
  override name = "StreamCutError";
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** Accumulates chunks into a reply. */
export class ReplyBuilder {
  #text = "";
  #calls: PartialCall[] = [];
  #byIndex = new Map<number, PartialCall>();
  #finish: string | null = null;
  #usage: ModelReply["usage"];
  #sawChoice = false;
  #size = 0;
  readonly problems: string[] = [];

  constructor(private readonly onText?: (delta: string) => void) {}

  get finished(): boolean {
    return this.#finish !== null;
  }

  #grow(n: number): void {
    this.#size += n;
    if (this.#size > MAX_REPLY_BYTES) {
      throw new ReplyFormatError(
        "malformed",
        `the reply grew past ${MAX_REPLY_BYTES / 1024 / 1024} MiB`,
      );
    }
  }

  /** One streamed chunk (`chat.completion.chunk`). */
  addChunk(chunk: unknown): void {
    const obj = asObject(chunk, "a streamed chunk");
    if (obj.error !== undefined && obj.error !== null) {
      throw new ReplyFormatError("endpoint_error", errorText(obj.error));
    }
    this.#addUsage(obj.usage);
    const choices = obj.choices;
    if (choices === undefined || choices === null) return; // usage-only chunks
    if (!Array.isArray(choices)) throw new ReplyFormatError("malformed", "'choices' is not a list");
    for (const c of choices) {
      const choice = asObject(c, "a choice");
      if (choice.index !== undefined && choice.index !== 0) continue; // only the first choice
      this.#sawChoice = true;
      const delta = choice.delta === undefined || choice.delta === null
        ? {}
        : asObject(choice.delta, "a delta");
      if (typeof delta.content === "string" && delta.content !== "") {
        this.#grow(delta.content.length);
        this.#text += delta.content;
        this.onText?.(delta.content);
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const t of delta.tool_calls) this.#addCallDelta(asObject(t, "a tool call"));
      }
      if (typeof choice.finish_reason === "string") this.#finish = choice.finish_reason;
    }
  }

  #addCallDelta(t: Record<string, unknown>): void {
    const fn = t.function === undefined || t.function === null
      ? {}
      : asObject(t.function, "a tool call's function");
    const index = typeof t.index === "number" ? t.index : undefined;
    let call = index !== undefined ? this.#byIndex.get(index) : undefined;
    // A server that omits the index: a new id (or a name) starts a new call.
    if (!call && index === undefined && this.#calls.length > 0) {
      const last = this.#calls[this.#calls.length - 1];
      const startsNew = (typeof t.id === "string" && t.id !== "" && t.id !== last.id) ||
        (typeof fn.name === "string" && fn.name !== "" && last.name !== "");
      if (!startsNew) call = last;
    }
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      this.#calls.push(call);
      if (index !== undefined) this.#byIndex.set(index, call);
    }
    if (typeof t.id === "string" && t.id !== "") call.id = t.id;
    if (typeof fn.name === "string") call.name += fn.name;
    if (typeof fn.arguments === "string") {
      this.#grow(fn.arguments.length);
      call.arguments += fn.arguments;
    } else if (fn.arguments !== undefined && fn.arguments !== null) {
      // Some servers send the arguments as an object rather than a JSON string.
      const s = JSON.stringify(fn.arguments);
      this.#grow(s.length);
      call.arguments += s;
    }
  }

  /**
   * `usage` of a chunk or a whole body: with `stream_options.include_usage` the last chunk
   * before `[DONE]` (its `choices` empty); some servers put it on every chunk (`null` until the
   * end) or on the one with the finish reason. The last well-formed one counts; a malformed one
   * is left out, not an error: usage is advice, the reply is what matters.
   */
  #addUsage(u: unknown): void {
    if (typeof u !== "object" || u === null || Array.isArray(u)) return;
    const { prompt_tokens: p, completion_tokens: c } = u as Record<string, unknown>;
    if (!isCount(p)) return;
    this.#usage = isCount(c) ? { promptTokens: p, completionTokens: c } : { promptTokens: p };
  }

  /** A whole (non-streamed) `chat.completion` body. */
  addWhole(body: unknown): void {
    const obj = asObject(body, "the reply");
    if (obj.error !== undefined && obj.error !== null) {
      throw new ReplyFormatError("endpoint_error", errorText(obj.error));
    }
    this.#addUsage(obj.usage);
    if (!Array.isArray(obj.choices)) {
      throw new ReplyFormatError("malformed", "the reply has no 'choices' list");
    }
    const first = obj.choices[0];
    if (first === undefined) return;
    this.#sawChoice = true;
    const choice = asObject(first, "a choice");
    const message = choice.message === undefined || choice.message === null
      ? {}
      : asObject(choice.message, "a message");
    if (typeof message.content === "string") {
      this.#grow(message.content.length);
      this.#text += message.content;
      if (message.content !== "") this.onText?.(message.content);
    }
    if (Array.isArray(message.tool_calls)) {
      for (const t of message.tool_calls) {
        const o = asObject(t, "a tool call");
        this.#addCallDelta({ ...o, index: this.#calls.length });
      }
    }
    this.#finish = typeof choice.finish_reason === "string" ? choice.finish_reason : "stop";
  }

  build(): ModelReply {
    const problems = [...this.problems];
    if (!this.#sawChoice) problems.push("the reply had no choices");
    const toolCalls: ToolCall[] = this.#calls.map((c, i) => {
      let id = c.id;
      if (id === "") {
        id = `call_${i}`;
        problems.push(`tool call ${i + 1} had no id; it was given '${id}'`);
      }
      return { id, type: "function", function: { name: c.name, arguments: c.arguments } };
    });
    return {
      text: this.#text,
      toolCalls,
      finishReason: this.#finish,
      problems,
      ...(this.#usage ? { usage: this.#usage } : {}),
    };
  }
}

function isCount(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ReplyFormatError("malformed", `${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

function errorText(e: unknown): string {
  if (typeof e === "string") return e.slice(0, 300);
  if (
    typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string"
  ) {
    return (e as { message: string }).message.slice(0, 300);
  }
  return JSON.stringify(e).slice(0, 300);
}

/**
 * Reads server-sent events from a body into the builder. Ends at `[DONE]`; a body that ends
 * without it and without a finish reason was cut off. An event (one line or many) is bounded by
 * the parser's buffer, so one endless line costs memory up to the limit, then an error.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  builder: ReplyBuilder,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let done = false;
  let failed: Error | null = null;
  const parser = createParser({
    maxBufferSize: MAX_REPLY_BYTES,
    onEvent(message) {
      if (done || failed) return;
      try {
        done = dispatch(message.event, message.data, builder);
      } catch (e) {
        failed = e instanceof Error ? e : new Error(String(e));
      }
    },
    onError(error) {
      if (error.type === "max-buffer-size-exceeded") {
        failed ??= new ReplyFormatError(
          "malformed",
          `an event grew past ${MAX_REPLY_BYTES / 1024 / 1024} MiB`,
        );
      }
      // An unknown field or a bad `retry:` carries nothing we use.
    },
  });
  try {
    while (!done && !failed) {
      const { value, done: ended } = await reader.read();
      if (ended) {
        // A last event without its blank line still counts.
        parser.feed("\n\n");
        break;
      }
      parser.feed(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  if (failed) throw failed;
  if (!done && !builder.finished) {
    throw new StreamCutError("the reply stream ended before the server finished it");
  }
}

/** One event; true at `[DONE]`. */
function dispatch(type: string | undefined, payload: string, builder: ReplyBuilder): boolean {
  // An `error` event is the endpoint's report, whatever its data looks like.
  if (type === "error") throw new ReplyFormatError("endpoint_error", payload.slice(0, 300));
  if (payload.trim() === "[DONE]") return true;
  let chunk: unknown;
  try {
    chunk = JSON.parse(payload);
  } catch {
    throw new ReplyFormatError("not_json", `a streamed chunk: ${payload.slice(0, 200)}`);
  }
  builder.addChunk(chunk);
  return false;
}
