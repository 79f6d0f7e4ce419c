/**
 * The model client: one OpenAI-compatible Chat Completions endpoint, reached with `fetch`. This
 * module owns everything a person notices: text streamed as it comes, retries (one bounded
 * policy), a timeout on the whole reply (a reply that never ends is stopped), and errors that
 * name the endpoint and keep its words apart from the kind (failure.ts). Nothing is sent until
 * `complete` is called; exactly the headers in `requestHeaders` are sent (docs/decisions.md:
 * why `fetch` and not the `openai` SDK).
 */
import { readHead } from "../util/body.ts";
import { readEventStream, ReplyBuilder, ReplyFormatError, StreamCutError } from "./reply.ts";
import {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  retryableStatus,
  type RetryPolicy,
} from "./retry.ts";
import { type CompleteRequest, type ModelClient, ModelError, type ModelReply } from "./types.ts";
import { type FailureFacts, serverHint } from "./failure.ts";

export interface ClientOptions {
  endpoint: string;
  model: string;
  /** The whole reply, from sending to the last byte. */
  timeoutMs: number;
  /** Sent as a bearer token when set (only from BRAVEBOT_API_KEY, docs/cli.md#environment). */
  apiKey?: string;
  retry?: RetryPolicy;
  /**
   * How long a server that says it is loading the model (HTTP 503, or a body saying "loading")
   * is waited for, asking again every couple of seconds; default 180 s (`timeouts.loadMs`).
   */
  loadMs?: number;
  /** Between two asks of a loading server (tests make it short). */
  loadPollMs?: number;
}

/** Between two asks of a server that is loading its model. */
const LOADING_POLL_MS = 2_000;
export const DEFAULT_LOAD_MS = 180_000;
/** An error body is read this far (it is shown as one bounded line anyway). */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * The environment variable that holds the token (docs/cli.md#environment); nothing else is read.
 */
export function apiKeyFromEnv(): string | undefined {
  try {
    const v = Deno.env.get("BRAVEBOT_API_KEY");
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * Every header Brave Bot sets on a request, and no other: an allow-list, so nothing about the
 * machine (OS, architecture, runtime, versions) is ever added by a library. The runtime adds
 * only Host, Content-Length, and fixed Accept-Encoding and Accept-Language values
 * (test/server_replay_test.ts shows the whole set a server receives).
 */
export function requestHeaders(apiKey: string | undefined): Headers {
  const headers = new Headers({
    "Content-Type": "application/json",
    "Accept": "text/event-stream, application/json",
    "User-Agent": "bravebot",
  });
  if (apiKey) headers.set("Authorization", `Bearer ${apiKey}`);
  return headers;
}

interface Failure {
  retry: boolean;
  /** What went wrong, for the person's retry note. */
  why: string;
  retryAfterMs: number | null;
  error: ModelError;
  /** The server said it is loading the model: its status and words, for the person. */
  loading?: { status: number; said: string };
  /** A retried failure as the final error will state it if the retries run out. */
  last?: { facts: FailureFacts; detail: string };
}

/** The endpoint answered with a status other than 2xx; `said` is its message, for the person. */
class HttpStatusError extends Error {
  constructor(readonly status: number, readonly headers: Headers, readonly said: string) {
    super(`HTTP ${status}`);
  }
}

/** `fetch` itself failed: no answer at all (nothing listening, DNS, TLS). */
class ConnectError extends Error {
  constructor(readonly reason: unknown) {
    super("cannot connect");
  }
}

export class OpenAIModelClient implements ModelClient {
  readonly endpoint: string;
  readonly model: string;
  readonly #headers: Headers;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #loadMs: number;
  readonly #loadPollMs: number;
  /** Set once the server refused `stream_options`: later requests leave it out. */
  #noStreamOptions = false;

  constructor(options: ClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.model = options.model;
    this.#timeoutMs = options.timeoutMs;
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.#loadMs = options.loadMs ?? DEFAULT_LOAD_MS;
    this.#loadPollMs = options.loadPollMs ?? LOADING_POLL_MS;
    this.#headers = requestHeaders(options.apiKey);
  }

  async complete(request: CompleteRequest): Promise<ModelReply> {
    const started = Date.now();
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#once(request);
      } catch (e) {
        if (e instanceof StreamOptionsRefused) {
          attempt--;
          continue;
        }
        const f = this.#classify(e, request.signal);
        if (!f.retry) throw f.error;
        if (f.loading !== undefined) {
          // A server loading its model is waited for, with its own bound, and said so.
          const waited = Date.now() - started;
          if (waited + this.#loadPollMs > this.#loadMs) {
            throw new ModelError(
              "loading",
              {
                status: f.loading.status,
                seconds: waited / 1000,
                limitSeconds: this.#loadMs / 1000,
              },
              this.endpoint,
              f.loading.said,
            );
          }
          request.onRetry?.(
            `the server is loading the model… ${Math.round(waited / 1000)} s`,
            this.#loadPollMs,
            attempt,
          );
          await sleep(this.#loadPollMs, request.signal);
          if (request.signal?.aborted) throw this.#aborted();
          continue;
        }
        const delay = backoffDelay(this.#retry, attempt, f.retryAfterMs);
        const outOfTime = Date.now() - started + delay > this.#retry.totalMs;
        if (attempt >= this.#retry.attempts || outOfTime) {
          // The last try's account: its status and words when the server answered, or that
          // nothing listened; the person reads them first (failure.ts, forPerson).
          throw new ModelError(
            "unreachable",
            {
              ...f.last?.facts,
              attempts: attempt,
              seconds: (Date.now() - started) / 1000,
            },
            this.endpoint,
            f.last?.detail ?? f.why,
          );
        }
        request.onRetry?.(f.why, delay, attempt);
        await sleep(delay, request.signal);
        if (request.signal?.aborted) throw this.#aborted();
      }
    }
  }

  async #once(request: CompleteRequest): Promise<ModelReply> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    const onAbort = () => controller.abort();
    request.signal?.addEventListener("abort", onAbort);
    if (request.signal?.aborted) controller.abort();
    const builder = new ReplyBuilder(request.onText);
    try {
      const body = {
        model: this.model,
        messages: request.messages,
        stream: true,
        // The server's own token count, in the last chunk (types.ts `usage`).
        ...(this.#noStreamOptions ? {} : { stream_options: { include_usage: true } }),
        ...(request.tools ? { tools: request.tools } : {}),
        ...(request.toolChoice ? { tool_choice: request.toolChoice } : {}),
      };
      let response: Response;
      try {
        response = await fetch(`${this.endpoint}/chat/completions`, {
          method: "POST",
          headers: this.#headers,
          body: JSON.stringify(body),
          signal: controller.signal,
          redirect: "error",
        });
      } catch (e) {
        if (timedOut || controller.signal.aborted) throw e;
        throw new ConnectError(e);
      }
      request.onAnswering?.();
      if (!response.ok) {
        const said = errorMessage((await readHead(response.body, ERROR_BODY_BYTES)).text);
        if (
          !this.#noStreamOptions && (response.status === 400 || response.status === 422) &&
          /stream_options|include_usage/i.test(said)
        ) {
          // An old server that refuses unknown fields: ask again without it, from now on.
          this.#noStreamOptions = true;
          throw new StreamOptionsRefused();
        }
        throw new HttpStatusError(response.status, response.headers, said);
      }
      const type = response.headers.get("content-type") ?? "";
      if (!response.body) throw new ReplyFormatError("malformed", "the reply has no body");
      if (type.includes("text/event-stream")) {
        await readEventStream(response.body, builder);
      } else {
        // A server that ignores `stream` answers with one JSON body.
        const text = await response.text();
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new ReplyFormatError("not_json", `the body began: ${text.slice(0, 200)}`);
        }
        builder.addWhole(parsed);
      }
      return builder.build();
    } catch (e) {
      if (timedOut) throw new TimedOut();
      throw e;
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
    }
  }

  #aborted(): ModelError {
    return new ModelError("aborted", {}, this.endpoint);
  }

  /**
   * Decides what a failure was. The endpoint's words (an error body, the bytes that were not
   * JSON) go into the error's `detail` only; its kind and facts are all the planner is told.
   */
  #classify(e: unknown, signal: AbortSignal | undefined): Failure {
    const final = (error: ModelError): Failure => ({
      retry: false,
      why: "",
      retryAfterMs: null,
      error,
    });
    const again = (
      why: string,
      retryAfterMs: number | null = null,
      last?: Failure["last"],
    ): Failure => ({
      retry: true,
      why,
      retryAfterMs,
      error: new ModelError("unreachable", { attempts: 1 }, this.endpoint, why),
      last,
    });
    if (signal?.aborted) return final(this.#aborted());
    if (e instanceof TimedOut) {
      return final(
        new ModelError("timeout", { limitSeconds: this.#timeoutMs / 1000 }, this.endpoint),
      );
    }
    if (e instanceof StreamCutError) return again("the reply was cut off mid-way");
    if (e instanceof ReplyFormatError) {
      return final(new ModelError(e.kind, {}, this.endpoint, e.detail));
    }
    if (e instanceof HttpStatusError) {
      const { status, said } = e;
      // The retry note leads with what the server said, as the final error would.
      const words = `HTTP ${status}${said ? `: ${said}` : ""}`;
      // llama-server answers 503 {"error":{"message":"Loading model"}} while it loads; others
      // say "loading" with another status. Waited for, not counted as failures. A 503 that says
      // the server is busy (Ollama's full queue) is an ordinary retry.
      if (
        /\bloading\b/i.test(said) ||
        (status === 503 && !/busy|maximum pending|overloaded/i.test(said))
      ) {
        return { ...again(`HTTP ${status}`), loading: { status, said } };
      }
      // A 5xx whose words name a cause retrying cannot fix (llama-server's 500 "tools param
      // requires --jinja flag") ends at once, with the fix for the person.
      if (retryableStatus(status) && serverHint(said, { status }) === null) {
        return again(words, parseRetryAfter(e.headers.get("retry-after")), {
          facts: { status },
          detail: said,
        });
      }
      return final(new ModelError("http", { status, model: this.model }, this.endpoint, said));
    }
    if (e instanceof ConnectError) {
      const detail = causeText(e.reason);
      // Nothing listening (a mistyped endpoint, a server not started): the short bound, said plainly.
      const refused = /connection refused|ECONNREFUSED/i.test(detail);
      if (refused) {
        return again(`nothing is listening at ${this.endpoint}`, null, {
          facts: { refused: true },
          detail: "connection refused",
        });
      }
      return again(`cannot connect: ${oneLine(detail)}`);
    }
    // A body read that failed part way (the connection dropped): ask again.
    if (e instanceof Error && /connection|reset|closed|terminated|body/i.test(e.message)) {
      return again(`the connection failed: ${oneLine(e.message)}`);
    }
    return final(
      new ModelError(
        "malformed",
        {},
        this.endpoint,
        e instanceof Error ? oneLine(e.message) : String(e),
      ),
    );
  }
}

class TimedOut extends Error {}

/** A cause's message and its causes' (Deno puts "Connection refused" two levels down). */
function causeText(e: unknown): string {
  const parts: string[] = [];
  for (let c = e, depth = 0; c !== undefined && c !== null && depth < 4; depth++) {
    parts.push(c instanceof Error ? c.message : String(c));
    c = c instanceof Error ? (c as { cause?: unknown }).cause : undefined;
  }
  return parts.join(": ");
}

/** The server refused `stream_options`: asked again at once without it. */
class StreamOptionsRefused extends Error {}

/**
 * The message in an error body, as the four servers shape it: `{"error":{"message":…}}`
 * (OpenAI, llama.cpp, Ollama, newer vLLM, LM Studio), `{"error":"…"}` (LM Studio, Ollama's own
 * API), `{"object":"error","message":…}` (older vLLM), `{"detail":…}` (a framework's own
 * refusal); else the body itself. For the person only.
 */
export function errorMessage(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return oneLine(body);
  }
  const o = typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : {};
  const e = o.error;
  if (typeof e === "string") return oneLine(e);
  if (typeof e === "object" && e !== null) {
    const m = (e as Record<string, unknown>).message;
    if (typeof m === "string") return oneLine(m);
  }
  if (typeof o.message === "string") return oneLine(o.message);
  if (typeof o.detail === "string") return oneLine(o.detail);
  if (o.detail !== undefined) return oneLine(JSON.stringify(o.detail));
  return oneLine(body);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 300);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done);
  });
}
