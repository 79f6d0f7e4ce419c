/**
 * The shapes the model client and the driver share: Chat Completions messages as they go on
 * the wire, and one complete reply. Kept free of the SDK's types so the transcript, the driver
 * and the tests depend only on what an OpenAI-compatible endpoint actually exchanges.
 */

export type { ChatMessage, ToolCall } from "../util/chat.ts";
import type { ChatMessage, ToolCall } from "../util/chat.ts";
import type { ServedContext } from "./served_context.ts";

/** One tool as the planner is offered it (`tools` in the request body). */
export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A complete reply, assembled from a stream or read whole. */
export interface ModelReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  /** Problems with the reply's shape that were repaired (a call with no id, …), for notices. */
  problems: string[];
  /**
   * The server's own count for this request (`usage`; in a stream, asked for with
   * `stream_options.include_usage`), when it sent one.
   */
  usage?: { promptTokens: number; completionTokens?: number };
}

export interface CompleteRequest {
  messages: ChatMessage[];
  /** Present for planner requests only; processor requests carry no tools (docs/cli.md#options). */
  tools?: ToolSpec[];
  /** `none`: a planner request that must be answered in text (the compaction summary). */
  toolChoice?: "none";
  signal?: AbortSignal;
  /** Called with each piece of text as it arrives, so the person sees it as it comes. */
  onText?: (delta: string) => void;
  /** Called when a request is retried: what went wrong and how long until the next try. */
  onRetry?: (why: string, delayMs: number, attempt: number) => void;
  /**
   * Called when the endpoint has begun to answer (its status line and headers came back): the
   * request has reached it, and what is left is the model's work. At most once a try.
   */
  onAnswering?: () => void;
}

/** The driver's and spawn_processor's view of an endpoint. */
export interface ModelClient {
  /** The base URL, named in every error about it. */
  readonly endpoint: string;
  readonly model: string;
  complete(request: CompleteRequest): Promise<ModelReply>;
  /**
   * Asks the server what context it serves this model with (served_context.ts); a client
   * that cannot ask has none. Called on the first request of a session, never at start-up.
   */
  servedContext?(): Promise<ServedContext>;
}

// A failure is a value with a planner-safe kind and the endpoint's words apart (failure.ts).
export { ModelError, type ModelFailureKind as ModelErrorKind } from "./failure.ts";
