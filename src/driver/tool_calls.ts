/**
 * The planner's tool calls, from its reply to the handler's arguments: the calls a small model
 * wrote as text recovered, at most so many a reply, each id made unique, oversized and malformed
 * arguments refused, and each call checked against its tool's zod schema. Kept apart from the
 * loop because this is where whatever a planner sends meets the program: every way a call can be
 * wrong ends here as an error result the planner can read and fix, never as an exception.
 */
import { z } from "zod";
import type { ModelReply, ToolCall, ToolSpec } from "../model/types.ts";
import { failure, type ToolDef, type ToolOutput } from "../tools/tool.ts";
import { findTextCalls, type ParamType } from "./text_calls.ts";
import { stripReasoning } from "../util/reasoning.ts";
import { plural } from "../util/plural.ts";

/** Arguments larger than this are refused before parsing; a file that big is not written in one call. */
export const MAX_ARGUMENT_BYTES = 1024 * 1024;

/** A call as the driver handles it: `fromText` when the model wrote it in its text. */
export type PlannerCall = ToolCall & { fromText?: boolean };

/** The `tools` of a planner request, generated from the zod schemas. */
export function toolSpecs(tools: readonly ToolDef<unknown>[]): ToolSpec[] {
  return tools.map((t) => {
    const schema = z.toJSONSchema(t.schema, { unrepresentable: "any", io: "input" }) as Record<
      string,
      unknown
    >;
    delete schema.$schema;
    return {
      type: "function",
      function: { name: t.name, description: t.description, parameters: schema },
    };
  });
}

/** The JSON type each tool's schema gives a parameter, for calls written as raw text. */
export function paramTypes(specs: readonly ToolSpec[]): ParamType {
  return (tool, param) => {
    const spec = specs.find((s) => s.function.name === tool);
    const props = spec?.function.parameters.properties as
      | Record<string, { type?: unknown }>
      | undefined;
    const type = props && Object.hasOwn(props, param) ? props[param]?.type : undefined;
    return typeof type === "string" ? type : undefined;
  };
}

/**
 * The reply's text and calls, with calls a small model wrote as text recovered (their ids made
 * from `reply`, the session's count of replies). What the person should know is `notice`d.
 */
export function readReply(
  reply: ModelReply,
  paramType: ParamType,
  replyNumber: number,
  notice: (text: string) => void,
): { text: string; calls: PlannerCall[] } {
  if (reply.finishReason === "length") {
    notice("the planner's reply was cut off at the model's output limit");
  }
  for (const p of reply.problems) {
    if (p !== "the reply had no choices") notice(`the planner's reply: ${p}`);
  }
  // Reasoning left in the text (`<think>…</think>`) is neither the answer nor content to send
  // back, and a call inside it is not a call (src/util/reasoning.ts).
  if (reply.toolCalls.length > 0) {
    return { text: stripReasoning(reply.text).text, calls: reply.toolCalls };
  }
  const found = findTextCalls(reply.text, undefined, { paramType });
  if (found.calls.length === 0 && found.reasoning.length > 0 && found.rest.trim() === "") {
    notice("the planner's reply held only reasoning (<think>…), which is neither shown nor kept");
  }
  if (found.calls.length === 0) return { text: found.rest, calls: [] };
  notice(`the planner wrote ${plural(found.calls.length, "tool call")} as text; handled as calls`);
  return {
    text: found.rest,
    calls: found.calls.map((c, i) => ({
      id: `text_call_${replyNumber}_${i}`,
      type: "function" as const,
      function: { name: c.name, arguments: c.arguments },
      fromText: true,
    })),
  };
}

/** One call kept from a reply: as it goes into the conversation, and as the planner sent it. */
export interface KeptCall extends ToolCall {
  original: PlannerCall;
}

/**
 * The calls of one reply the driver handles: at most `cap`, each with an id of its own (a server
 * that repeats an id gets it made unique, since each result answers one call), a name, and
 * arguments that the conversation may keep (oversized ones are not; the result says why).
 */
export function keepCalls(
  calls: readonly PlannerCall[],
  cap: number,
): { kept: KeptCall[]; dropped: number } {
  const seen = new Set<string>();
  const kept = calls.slice(0, cap).map((c, i) => ({
    ...c,
    id: seen.has(c.id) ? `${c.id}_${i}` : (seen.add(c.id), c.id),
    function: {
      name: c.function.name === "" ? "(no name)" : c.function.name,
      arguments: c.function.arguments.length > MAX_ARGUMENT_BYTES ? "{}" : c.function.arguments,
    },
    original: c,
  }));
  return { kept, dropped: Math.max(0, calls.length - cap) };
}

/** What the person is told when a reply asked for more calls than are handled. */
export function droppedNotice(asked: number, cap: number): string {
  return `the planner asked for ${asked} tool calls in one reply; only the first ${cap} were handled`;
}

/** The last handled call's result, with what the planner is told about the calls dropped. */
export function withDroppedNote(output: ToolOutput, asked: number, cap: number): ToolOutput {
  return {
    ...output,
    content: `${output.content}\n[note: the reply asked for ${asked} tool calls; only the first ` +
      `${cap} were handled and the other ${
        asked - cap
      } were dropped. At most ${cap} calls a reply.]`,
  };
}

/** A call's arguments read: the value (parsed when it was JSON, else the raw string) or why not. */
export interface ReadArguments {
  value: unknown;
  error: string | null;
  /** What the person is shown of them: the parsed object, or the raw string's start. */
  shown: unknown;
}

/** Reads a call's arguments string, refusing one larger than a call may carry before parsing. */
export function readArguments(raw: string): ReadArguments {
  if (raw.length > MAX_ARGUMENT_BYTES) {
    return {
      value: raw,
      error:
        `the arguments are ${raw.length} bytes, more than the ${MAX_ARGUMENT_BYTES} bytes a call may carry; ` +
        "write large content in parts, or with contents_ref from a processor",
      shown: raw.slice(0, 2000),
    };
  }
  const parsed = parseArguments(raw);
  return parsed.ok
    ? { value: parsed.value, error: null, shown: parsed.value }
    : { value: raw, error: parsed.error, shown: raw.slice(0, 2000) };
}

/**
 * The tool a call names and its arguments as its schema parsed them, or the error result that
 * says what was wrong: no such tool (with the list), arguments that did not read, or a schema
 * failure naming the field.
 */
export function checkCall(
  name: string,
  args: ReadArguments,
  tools: readonly ToolDef<unknown>[],
): { ok: true; tool: ToolDef<unknown>; args: unknown } | { ok: false; error: ToolOutput } {
  // The last tool of the name, as a map of them by name gives it.
  const tool = tools.findLast((t) => t.name === name);
  if (!tool) {
    const list = tools.map((t) => t.name).join(", ");
    return {
      ok: false,
      error: failure(
        name === ""
          ? `the tool call has no name; the tools are: ${list}`
          : `there is no tool named '${name.slice(0, 80)}'; the tools are: ${list}`,
      ),
    };
  }
  if (args.error !== null) return { ok: false, error: failure(`${tool.name}: ${args.error}`) };
  const checked = tool.schema.safeParse(args.value);
  if (!checked.success) {
    return {
      ok: false,
      error: failure(`${tool.name}: ${describeSchemaError(checked.error, tool)}`),
    };
  }
  return { ok: true, tool, args: checked.data };
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** The arguments string of a call: a JSON object (an empty string means no arguments). */
export function parseArguments(raw: string): Parsed {
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return {
      ok: false,
      error: `the arguments are not valid JSON (${(e as Error).message.slice(0, 120)}); ` +
        `send one JSON object, e.g. {"path": "README.md"}`,
    };
  }
  // Some models encode the object twice.
  if (typeof value === "string") {
    try {
      const inner = JSON.parse(value);
      if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) value = inner;
    } catch { /* reported below */ }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: `the arguments must be a JSON object of named fields, not ${
        Array.isArray(value) ? "a list" : value === null ? "null" : typeof value
      }`,
    };
  }
  return { ok: true, value };
}

/** Names the field and what is accepted, the way the planner can fix its call. */
export function describeSchemaError(error: z.ZodError, tool: ToolDef<unknown>): string {
  const fields = [...Object.keys(tool.routing.shape), ...Object.keys(tool.content.shape)];
  const accepted = `the accepted fields are: ${fields.join(", ")}`;
  const issues = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.length ? issue.path.join(".") : "(arguments)";
    if (issue.code === "unrecognized_keys") {
      return `unknown field ${
        issue.keys.map((k) => `'${k.slice(0, 40)}'`).join(", ")
      }; ${accepted}`;
    }
    if (
      issue.code === "invalid_type" && issue.path.length && /received undefined/.test(issue.message)
    ) {
      return `${where}: required, ${issue.message.replace(/, received undefined/, "")}`;
    }
    return `${where}: ${issue.message}`;
  });
  const text = issues.join("; ");
  return /accepted fields/.test(text) ? text : `${text} (${accepted})`;
}
