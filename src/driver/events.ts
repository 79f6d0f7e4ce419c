/**
 * What the driver reports as it works. One-shot's `stream-json` prints the types cli.md names
 * (assistant_text, tool_call, decision, tool_result, remark, error, final); the interactive
 * screen renders all of them. A `tool_result` carries exactly what the planner was shown.
 */
import { ModelError } from "../model/types.ts";
import type { DriverPolicy, Shown } from "../policy/api.ts";
import { formatLabel } from "../util/label.ts";

export type DriverEvent =
  /** A piece of the planner's text as it streams in (screens only). */
  | { type: "text_delta"; text: string }
  /** The planner's complete text of one reply. */
  | { type: "assistant_text"; text: string }
  /** A request to the planner is about to be sent (screens show a spinner until text comes). */
  | { type: "model_request"; turn: number }
  | {
    type: "tool_call";
    id: string;
    name: string;
    /** Parsed when the arguments were JSON, else the raw string. */
    arguments: unknown;
    /** True when the model wrote the call in its text instead of as a tool call. */
    from_text?: boolean;
  }
  | {
    type: "decision";
    tool: string;
    decision: string;
    by: string;
    reason?: string;
    routing: Record<string, unknown>;
    labels: Record<string, string>;
  }
  | {
    type: "tool_result";
    id: string;
    name: string;
    content: string;
    is_error: boolean;
    /** The label of what the result placed in the planner context. */
    label: string;
  }
  /** A processor's remark: for the person's screen only, stored nowhere. */
  | { type: "remark"; text: string }
  /**
   * A reference's content shown to the person, never to the planner (design.md §15): `text` is
   * the content itself (raw; screens escape it), `label` what it carries.
   */
  | {
    type: "shown";
    ref: string;
    kind: string;
    label: string;
    source: string;
    text: string;
    lines: number;
    omitted: number;
    /** A run's output asserted for the planner: by whom, in words (design.md §16). */
    asserted?: string;
  }
  /** Something the person should know that is not an error (a retry, a capped reply). */
  | { type: "notice"; text: string }
  /** The planner context's label changed. */
  | { type: "context_label"; label: string }
  | { type: "error"; message: string }
  | {
    type: "final";
    result: string;
    status: TurnStatus;
    turns: number;
    context_label: string;
  };

export type TurnStatus = "finished" | "max_turns" | "error" | "aborted";

/** A turn ended by a failure: its status and the words for the person. */
export interface TurnFailure {
  status: TurnStatus;
  error: string;
}

/**
 * A failed planner request as the end of a turn: the endpoint's words go to the person (the
 * `error` event), nothing of them into the conversation. Anything but a model error is a bug.
 */
export function turnFailure(e: unknown): TurnFailure {
  if (e instanceof ModelError) {
    return { status: e.kind === "aborted" ? "aborted" : "error", error: e.forPerson("planner") };
  }
  throw e;
}

/** A decision the policy layer recorded during a tool call, as the person is shown it. */
export function decisionEvent(entry: DriverPolicy["decisions"][number]): DriverEvent {
  return {
    type: "decision",
    tool: entry.tool,
    decision: entry.decision,
    by: entry.by,
    ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
    routing: entry.routing,
    labels: entry.labels,
  };
}

/** A reference shown to the person (`{{ref:N}}`), for the screen and the transcript. */
export function shownEvent(s: Shown): Extract<DriverEvent, { type: "shown" }> {
  return {
    type: "shown",
    ref: s.ref,
    kind: s.kind,
    label: formatLabel(s.label),
    source: s.source,
    text: s.text,
    lines: s.lines,
    omitted: s.omitted,
    ...(s.asserted ? { asserted: s.asserted } : {}),
  };
}

/** The event types cli.md lets `stream-json` print. */
export const STREAM_JSON_TYPES: ReadonlySet<DriverEvent["type"]> = new Set([
  "assistant_text",
  "tool_call",
  "decision",
  "tool_result",
  "remark",
  "shown",
  "error",
  "final",
]);
