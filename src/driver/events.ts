/**
 * What the driver reports as it works: the events themselves are plain data in
 * `src/util/events.ts`, so that the person's screen can read them without importing the driver.
 */
import type { DriverEvent, TurnStatus } from "../util/events.ts";
import { ModelError } from "../model/types.ts";
import type { DriverPolicy, Shown } from "../policy/api.ts";
import { formatLabel } from "../util/label.ts";

export type { DriverEvent, TurnStatus } from "../util/events.ts";

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

/** The event types `stream-json` prints (docs/cli.md#output-formats). */
export const STREAM_JSON_TYPES: ReadonlySet<DriverEvent["type"]> = new Set([
  "assistant_text",
  "tool_call",
  "decision",
  "tool_result",
  "remark",
  "shown",
  "notice",
  "error",
  "final",
]);
