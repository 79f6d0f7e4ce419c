/**
 * Assembling one reply from what an endpoint sends: server-sent events (`data: {…}` chunks,
 * ending with `[DONE]`) or, from a server that ignores `stream`, one JSON body. The parser is
 * strict about what it cannot understand (an error the person can read) and lenient about
 * what small local servers commonly omit (a missing tool-call id or index).
 */
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
    if (obj.error !== undefined) {
      throw new ReplyFormatError("endpoint_error", errorText(obj.error));
    }
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

  /** A whole (non-streamed) `chat.completion` body. */
  addWhole(body: unknown): void {
    const obj = asObject(body, "the reply");
    if (obj.error !== undefined) {
      throw new ReplyFormatError("endpoint_error", errorText(obj.error));
    }
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
    return { text: this.#text, toolCalls, finishReason: this.#finish, problems };
  }
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
 * without it and without a finish reason was cut off.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  builder: ReplyBuilder,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  const dispatch = (): boolean => {
    const type = event;
    event = "";
    const lines = data;
    data = [];
    const payload = lines.join("\n");
    // An `error` event is the endpoint's report, whatever its data looks like (or none).
    if (type === "error") throw new ReplyFormatError("endpoint_error", payload.slice(0, 300));
    if (lines.length === 0) return false;
    if (payload.trim() === "[DONE]") return true;
    let chunk: unknown;
    try {
      chunk = JSON.parse(payload);
    } catch {
      throw new ReplyFormatError("not_json", `a streamed chunk: ${payload.slice(0, 200)}`);
    }
    builder.addChunk(chunk);
    return false;
  };
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      const scanFrom = buffer.length;
      buffer += value;
      if (buffer.length > MAX_REPLY_BYTES) {
        throw new ReplyFormatError(
          "malformed",
          `an event grew past ${MAX_REPLY_BYTES / 1024 / 1024} MiB`,
        );
      }
      // Only the new bytes are searched, so one very long line costs linear time.
      let nl = buffer.indexOf("\n", scanFrom);
      let start = 0;
      while (nl >= 0) {
        const line = buffer.slice(start, nl).replace(/\r$/, "");
        start = nl + 1;
        nl = buffer.indexOf("\n", start);
        if (line === "") {
          if (dispatch()) return;
        } else if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        } else if (line.startsWith("event:")) {
          event = line.slice(6).trim();
        }
        // Comments (`:`), `id:` and `retry:` lines carry nothing we use.
      }
      buffer = buffer.slice(start);
    }
    if (buffer.startsWith("data:")) data.push(buffer.slice(5).replace(/^ /, ""));
    if (dispatch()) return;
  } finally {
    reader.cancel().catch(() => {});
  }
  if (!builder.finished) {
    throw new StreamCutError("the reply stream ended before the server finished it");
  }
}
