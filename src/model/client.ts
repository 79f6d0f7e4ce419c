/**
 * The model client: one OpenAI-compatible Chat Completions endpoint, reached with the `openai`
 * SDK. The SDK builds the request; this module owns everything a person notices: text streamed
 * as it comes, retries (the SDK's own are switched off so there is one bounded policy), a
 * timeout on the whole reply (a reply that never ends is stopped), and errors that name the
 * endpoint. Nothing is sent until `complete` is called.
 */
import OpenAI from "openai";
import { readEventStream, ReplyBuilder, ReplyFormatError, StreamCutError } from "./reply.ts";
import {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  retryableStatus,
  type RetryPolicy,
} from "./retry.ts";
import { type CompleteRequest, type ModelClient, ModelError, type ModelReply } from "./types.ts";

export interface ClientOptions {
  endpoint: string;
  model: string;
  /** The whole reply, from sending to the last byte. */
  timeoutMs: number;
  /** Sent as a bearer token when set (cli.md: only from BRAVEBOT_API_KEY). */
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

/** The environment variable cli.md names for the token; nothing else is read. */
export function apiKeyFromEnv(): string | undefined {
  try {
    const v = Deno.env.get("BRAVEBOT_API_KEY");
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * The SDK describes the machine in every request (OS, architecture, runtime and versions).
 * Brave Bot sends the endpoint the conversation and nothing about the machine it runs on.
 */
const QUIET_HEADERS: Record<string, string | null> = {
  "User-Agent": "bravebot",
  "X-Stainless-Arch": null,
  "X-Stainless-Lang": null,
  "X-Stainless-OS": null,
  "X-Stainless-Package-Version": null,
  "X-Stainless-Retry-Count": null,
  "X-Stainless-Runtime": null,
  "X-Stainless-Runtime-Version": null,
  "X-Stainless-Timeout": null,
};

interface Failure {
  retry: boolean;
  why: string;
  retryAfterMs: number | null;
  error: ModelError;
  /** The server said it is loading the model: what it said, for the person. */
  loading?: string;
}

export class OpenAIModelClient implements ModelClient {
  readonly endpoint: string;
  readonly model: string;
  readonly #sdk: OpenAI;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #loadMs: number;
  readonly #loadPollMs: number;

  constructor(options: ClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.model = options.model;
    this.#timeoutMs = options.timeoutMs;
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.#loadMs = options.loadMs ?? DEFAULT_LOAD_MS;
    this.#loadPollMs = options.loadPollMs ?? LOADING_POLL_MS;
    this.#sdk = new OpenAI({
      baseURL: this.endpoint,
      // The SDK insists on a key; without one, no Authorization header is sent at all.
      apiKey: options.apiKey ?? "unused",
      defaultHeaders: {
        ...QUIET_HEADERS,
        ...(options.apiKey ? {} : { Authorization: null }),
      },
      maxRetries: 0,
      timeout: options.timeoutMs,
      organization: null,
      project: null,
    });
  }

  async complete(request: CompleteRequest): Promise<ModelReply> {
    const started = Date.now();
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#once(request);
      } catch (e) {
        const f = this.#classify(e, request.signal);
        if (!f.retry) throw f.error;
        if (f.loading !== undefined) {
          // A server loading its model is waited for, with its own bound, and said so.
          const waited = Date.now() - started;
          if (waited + this.#loadPollMs > this.#loadMs) {
            throw new ModelError(
              "loading",
              { seconds: waited / 1000, limitSeconds: this.#loadMs / 1000 },
              this.endpoint,
              f.loading,
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
          throw new ModelError(
            "unreachable",
            { attempts: attempt, seconds: (Date.now() - started) / 1000 },
            this.endpoint,
            `last: ${f.why}`,
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
        stream: true as const,
        ...(request.tools ? { tools: request.tools } : {}),
        ...(request.toolChoice ? { tool_choice: request.toolChoice } : {}),
      };
      // deno-lint-ignore no-explicit-any
      const response = await this.#sdk.chat.completions.create(body as any, {
        signal: controller.signal,
        timeout: this.#timeoutMs,
        maxRetries: 0,
      }).asResponse();
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
    const again = (why: string, retryAfterMs: number | null = null): Failure => ({
      retry: true,
      why,
      retryAfterMs,
      error: new ModelError("unreachable", { attempts: 1 }, this.endpoint, why),
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
    if (e instanceof OpenAI.APIError && typeof e.status === "number") {
      const status = e.status;
      const said = httpDetail(e);
      // llama-server answers 503 {"error":{"message":"Loading model"}} while it loads; others
      // say "loading" with another status. Waited for, not counted as failures.
      if (status === 503 || /\bloading\b/i.test(said)) {
        return { ...again(`HTTP ${status}`), loading: `HTTP ${status}: ${said}` };
      }
      if (retryableStatus(status)) {
        const headers = e.headers as Headers | undefined;
        return again(`HTTP ${status}`, parseRetryAfter(headers?.get?.("retry-after")));
      }
      return final(
        new ModelError("http", { status, model: this.model }, this.endpoint, httpDetail(e)),
      );
    }
    if (e instanceof OpenAI.APIError || e instanceof TypeError || isNetworkError(e)) {
      const cause = (e as { cause?: unknown }).cause;
      const detail = cause instanceof Error ? cause.message : (e as Error).message;
      // Nothing listening (a mistyped endpoint, a server not started): the short bound, said plainly.
      const deeper = (cause as { cause?: unknown })?.cause;
      const refused = [detail, deeper instanceof Error ? deeper.message : ""]
        .some((m) => /connection refused|ECONNREFUSED/i.test(m));
      return again(
        refused ? `nothing is listening at ${this.endpoint}` : `cannot connect: ${oneLine(detail)}`,
      );
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

/** What the endpoint said with a refusal: its error body's message, for the person only. */
function httpDetail(e: InstanceType<typeof OpenAI.APIError>): string {
  return oneLine(
    typeof (e.error as { message?: unknown })?.message === "string"
      ? (e.error as { message: string }).message
      : e.message,
  );
}

class TimedOut extends Error {}

function isNetworkError(e: unknown): boolean {
  return e instanceof Error &&
    (e.name === "ConnectionRefused" || e.name === "ConnectionReset" || e.name === "Interrupted" ||
      e.name === "BrokenPipe" || e.name === "UnexpectedEof");
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
