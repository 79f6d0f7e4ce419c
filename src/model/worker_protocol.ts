/** Messages between the main thread and the model worker. */
import type { ClientOptions } from "./client.ts";
import type { FailureData } from "./failure.ts";
import type { ServedContext } from "./served_context.ts";
import type { ChatMessage, ModelReply, ToolSpec } from "./types.ts";

export type ToWorker =
  | {
    op: "complete";
    id: number;
    client: ClientOptions;
    messages: ChatMessage[];
    tools?: ToolSpec[];
    toolChoice?: "none";
    wantText: boolean;
    wantAnswering?: boolean;
  }
  | { op: "abort"; id: number }
  /** What context the server serves the client's model with (served_context.ts). */
  | { op: "served"; id: number; client: ClientOptions };

export type FromWorker =
  | { id: number; type: "text"; text: string }
  | { id: number; type: "retry"; why: string; delayMs: number; attempt: number }
  | { id: number; type: "answering" }
  | { id: number; type: "done"; reply: ModelReply }
  | { id: number; type: "served"; served: ServedContext }
  | { id: number; type: "error"; error: FailureData };
