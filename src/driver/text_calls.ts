/**
 * Tool calls a small local model wrote into its text instead of the `tool_calls` field: the
 * whole reply as a JSON call, a fenced JSON block, or `<tool_call>` tags (the usual chat
 * templates). They are handled as calls; prose that merely mentions JSON is left alone.
 */

export interface TextCall {
  name: string;
  /** The arguments as a JSON string, as a proper tool call would carry them. */
  arguments: string;
}

export interface Found {
  calls: TextCall[];
  /** The text with the recognised calls taken out. */
  rest: string;
}

const TAGGED = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const FENCED = /```(?:json|tool_call|tool)?[ \t]*\n([\s\S]*?)\n?```/g;

/** Finds text-written tool calls; none when the text holds no call-shaped JSON. */
export function findTextCalls(text: string): Found {
  const trimmed = text.trim();
  if (trimmed === "") return { calls: [], rest: text };
  // The whole reply is one call (or a list of calls).
  const whole = callsIn(trimmed);
  if (whole) return { calls: whole, rest: "" };
  for (const pattern of [TAGGED, FENCED]) {
    const calls: TextCall[] = [];
    const rest = text.replace(pattern, (match, body: string) => {
      const found = callsIn(body.trim());
      if (!found) return match;
      calls.push(...found);
      return "";
    });
    if (calls.length) return { calls, rest: rest.trim() };
  }
  return { calls: [], rest: text };
}

function callsIn(body: string): TextCall[] | null {
  if (!body.startsWith("{") && !body.startsWith("[")) return null;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: TextCall[] = [];
  for (const item of items) {
    const call = asCall(item);
    if (!call) return null;
    calls.push(call);
  }
  return calls;
}

function asCall(item: unknown): TextCall | null {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return null;
  let obj = item as Record<string, unknown>;
  // `{"type": "function", "function": {...}}`, as in the API's own shape.
  if (typeof obj.function === "object" && obj.function !== null) {
    obj = obj.function as Record<string, unknown>;
  }
  const name = obj.name ?? obj.tool ?? obj.tool_name;
  if (typeof name !== "string" || name === "") return null;
  const args = obj.arguments ?? obj.parameters ?? obj.args ?? obj.input;
  const allowed = new Set([
    "name",
    "tool",
    "tool_name",
    "arguments",
    "parameters",
    "args",
    "input",
    "id",
    "type",
  ]);
  // Any other key means this is data that happens to have a name, not a call.
  if (Object.keys(obj).some((k) => !allowed.has(k))) return null;
  if (args === undefined) return { name, arguments: "{}" };
  if (typeof args === "string") return { name, arguments: args };
  if (typeof args === "object" && args !== null) return { name, arguments: JSON.stringify(args) };
  return null;
}
