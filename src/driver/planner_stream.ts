/**
 * One planner request as the person's screen follows it: the text streamed as it comes, with
 * leading reasoning (`<think>…`) held back, since it is neither the answer nor shown; and each
 * retry of the endpoint said, with its wait. Kept apart from the loop, which only needs the reply.
 */
import type { ChatMessage, ModelClient, ModelReply, ToolSpec } from "../model/types.ts";
import type { DriverEvent } from "./events.ts";
import { ReasoningFilter } from "../util/reasoning.ts";

/** Sends one request and returns the reply; a failure throws, as `complete` does. */
export async function streamReply(
  planner: ModelClient,
  request: {
    messages: ChatMessage[];
    tools: ToolSpec[];
    signal: AbortSignal | undefined;
    onAnswering?: () => void;
  },
  emit: (event: DriverEvent) => void,
): Promise<ModelReply> {
  const thoughts = new ReasoningFilter();
  const reply = await planner.complete({
    ...request,
    onText: (text) => {
      const shown = thoughts.push(text);
      if (shown !== "") emit({ type: "text_delta", text: shown });
    },
    onRetry: (why, delay, attempt) =>
      emit({
        type: "notice",
        text: `the model endpoint ${planner.endpoint}: ${why}; trying again in ${
          (delay / 1000).toFixed(1)
        } s (try ${attempt + 1})`,
        progress: `retry ${planner.endpoint}`,
      }),
  });
  // A partial opener held back at the end was text after all.
  const held = thoughts.end();
  if (held !== "") emit({ type: "text_delta", text: held });
  return reply;
}
