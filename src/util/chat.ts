/**
 * Chat Completions messages as they go on the wire: what the model client sends, the driver
 * builds and the transcript keeps. Plain data, shared by the layers without tying one to another.
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
