/**
 * The shapes the model client and the driver share: Chat Completions messages as they go on
 * the wire, and one complete reply. Kept free of the SDK's types so the transcript, the driver
 * and the tests depend only on what an OpenAI-compatible endpoint actually exchanges.
 */

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

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
}

export interface CompleteRequest {
  messages: ChatMessage[];
  /** Present for planner requests only; processor requests carry no tools (cli.md). */
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** Called with each piece of text as it arrives, so the person sees it as it comes. */
  onText?: (delta: string) => void;
  /** Called when a request is retried: what went wrong and how long until the next try. */
  onRetry?: (why: string, delayMs: number, attempt: number) => void;
}

/** The driver's and spawn_processor's view of an endpoint. */
export interface ModelClient {
  /** The base URL, named in every error about it. */
  readonly endpoint: string;
  readonly model: string;
  complete(request: CompleteRequest): Promise<ModelReply>;
}

export type ModelErrorKind =
  | "unreachable" // connection errors, 429 or 5xx that outlasted the retries
  | "http" // a 4xx other than 429: retrying would not help
  | "timeout" // no complete reply within the request timeout
  | "malformed" // the endpoint's reply is not what the protocol says
  | "aborted"; // the person stopped it

/** Every failure of a model call: a message fit for the person, naming the endpoint. */
export class ModelError extends Error {
  override name = "ModelError";
  constructor(readonly kind: ModelErrorKind, message: string, readonly endpoint: string) {
    super(message);
  }
}
