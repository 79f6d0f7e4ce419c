/**
 * What a tool is: a name, a short description for the planner, a zod schema split into routing
 * (where the effect lands) and content (what is merely carried), and a handler that asks the
 * policy layer and acts only through the effect worker (tools.md, "Before adding a tool").
 */
import { z } from "zod";
import type { Label } from "../util/label.ts";
import type { Policy } from "../policy/core.ts";
import type { ProcessorPort, ToolPolicy } from "../policy/api.ts";
import type { Settings } from "../state/settings.ts";
import type { SessionState } from "../state/session_state.ts";

export const TOOL_NAMES = [
  "read_file",
  "list_files",
  "search",
  "write_file",
  "edit_file",
  "run",
  "read_output",
  "spawn_processor",
  "load_skill",
  "ask_user",
  "todo_write",
] as const;

export type ToolName = typeof TOOL_NAMES[number];

/** What the planner is shown, with the label of what that places in its context. */
export interface ToolOutput {
  content: string;
  isError: boolean;
  /** The label the shown content carries; references and metadata are `(T,pub)`. */
  label: Label;
}

/** Sends a processor request (spawn_processor); lives in model/, handed in by the driver. */
export type { ProcessorPort };

export interface ToolContext {
  /**
   * The policy layer itself. Going: each tool moves to `decide`, and once none uses this it is
   * removed, so that a tool can reach the policy layer only through its decision port.
   */
  policy: Policy;
  /** The tools' decision port (`policy/api.ts`): decisions to render, nothing else. */
  decide: ToolPolicy;
  settings: Settings;
  session: SessionState;
  processor: ProcessorPort;
  signal?: AbortSignal;
  /** Something the person should see as it happens (stream-json `remark`, screen lines). */
  emit(event: { type: "remark" | "notice"; text: string }): void;
}

export interface ToolDef<Args = unknown> {
  readonly name: ToolName;
  /** For the planner: short, since it counts against a small local model's context. */
  readonly description: string;
  readonly routing: z.ZodObject;
  readonly content: z.ZodObject;
  /** routing ∪ content, strict, with cross-field rules ("contents or a reference, never both"). */
  readonly schema: z.ZodType;
  handler(args: Args, ctx: ToolContext): Promise<ToolOutput>;
}

/** Builds the full strict schema from the two halves, plus optional cross-field checks. */
export function toolSchema<R extends z.ZodRawShape, C extends z.ZodRawShape>(
  routing: z.ZodObject<R>,
  content: z.ZodObject<C>,
) {
  return z.strictObject({ ...routing.shape, ...content.shape });
}

/** A result the planner may see in full: trusted text. */
export function shown(content: string, label: Label): ToolOutput {
  return { content, isError: false, label };
}

/** An error result: names what was wrong and what would be accepted. */
export function failure(message: string): ToolOutput {
  return {
    content: `error: ${message}`,
    isError: true,
    label: { integrity: "T", confidentiality: "pub" },
  };
}

/** Defines a tool with its types inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: {
  name: ToolName;
  description: string;
  routing: z.ZodObject;
  content: z.ZodObject;
  schema: S;
  handler(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}): ToolDef<z.infer<S>> {
  return tool as ToolDef<z.infer<S>>;
}
