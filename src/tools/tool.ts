/**
 * What a tool is: a name, a short description for the planner, its arguments in three parts —
 * routing (where the effect lands), content (what is merely carried) and modifiers (how much or
 * how long: `offset`, `limit`, `replace_all`, `timeout_seconds`) — from which its one strict
 * schema is built, and a handler that validates, asks the policy layer through its port and
 * renders (docs/tools.md#the-eleven-tools: a new tool first says what its routing is).
 *
 * Labels and the audit log treat the parts differently: routing is what the person approves and
 * what an audit entry names (resolved: the real path, the argv); content and modifiers are the
 * planner's words and carry the planner context's label. A modifier shapes an effect without
 * choosing where it lands, so it never appears in an entry's routing.
 */
import { z } from "zod";
import type { Label } from "../util/label.ts";
import {
  ownWordsLabel,
  type ProcessorPort,
  type SessionState,
  type Settings,
  type ToolPolicy,
} from "../policy/api.ts";

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
  /**
   * The label the shown content carries, as the policy layer gave it: with a port's result, or
   * for an error worded by the tool or the driver, Brave Bot's own words ({@link failure}).
   */
  label: Label;
  /**
   * For a run's output shown as an assertion (read_output, docs/contract.md §16.5): the reference
   * and who asserted it, so the transcript marks the result asserted.
   */
  asserted?: { ref: string; by: "person" | "policy-file"; shape: string | null };
  /**
   * What happened, for the person: one short line in plain words, built from the port's result
   * (never from `content`), ready for the screen (names and argv escaped). It says nothing the
   * planner was not shown or did not write itself; without it a screen shows `content`, cut.
   */
  summary?: string;
}

/** Sends a processor request (spawn_processor); lives in model/, handed in by the driver. */
export type { ProcessorPort };

export interface ToolContext {
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
  readonly modifiers: z.ZodObject;
  /**
   * routing ∪ content ∪ modifiers, strict, with the tool's cross-field rules ("contents or a
   * reference, never both"): built by {@link defineTool}, never written by hand.
   */
  readonly schema: z.ZodType;
  handler(args: Args, ctx: ToolContext): Promise<ToolOutput>;
}

/** A result the planner may see in full: trusted text, with the person's summary of it. */
export function shown(content: string, label: Label, summary?: string): ToolOutput {
  return { content, isError: false, label, ...(summary !== undefined ? { summary } : {}) };
}

/**
 * An error result: names what was wrong and what would be accepted, in Brave Bot's own words,
 * labelled as the policy layer labels them (`ownWordsLabel`).
 */
export function failure(message: string): ToolOutput {
  return { content: `error: ${message}`, isError: true, label: ownWordsLabel() };
}

// deno-lint-ignore ban-types
type NoFields = {};

/** The parsed arguments of a tool with these three parts. */
export type ToolArgs<R extends z.ZodRawShape, C extends z.ZodRawShape, M extends z.ZodRawShape> =
  z.output<z.ZodObject<R & C & M>>;

/**
 * Defines a tool from its parts: the schema is their union, strict (an unknown field is an error
 * the planner is told), then the tool's cross-field rules. A name may stand in one part only.
 */
export function defineTool<
  R extends z.ZodRawShape,
  C extends z.ZodRawShape,
  M extends z.ZodRawShape = NoFields,
>(tool: {
  name: ToolName;
  description: string;
  routing: z.ZodObject<R>;
  content: z.ZodObject<C>;
  modifiers?: z.ZodObject<M>;
  refine?: (value: ToolArgs<R, C, M>, ctx: z.RefinementCtx) => void;
  handler(args: ToolArgs<R, C, M>, ctx: ToolContext): Promise<ToolOutput>;
}): ToolDef<ToolArgs<R, C, M>> {
  const modifiers = tool.modifiers ?? z.strictObject({});
  const parts = [tool.routing.shape, tool.content.shape, modifiers.shape].map(Object.keys);
  const names = parts.flat();
  if (new Set(names).size !== names.length) {
    throw new Error(`${tool.name}: an argument stands in more than one part`);
  }
  const whole = z.strictObject({
    ...tool.routing.shape,
    ...tool.content.shape,
    ...modifiers.shape,
  });
  const refine = tool.refine;
  const schema = refine
    ? whole.superRefine((v, ctx) => refine(v as ToolArgs<R, C, M>, ctx))
    : whole;
  return {
    name: tool.name,
    description: tool.description,
    routing: tool.routing,
    content: tool.content,
    modifiers,
    schema,
    handler: tool.handler,
  };
}
