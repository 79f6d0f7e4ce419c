/**
 * What the driver reports as it works: the events themselves are plain data in
 * `src/util/events.ts`, so that the person's screen can read them without importing the driver.
 */
import type { DriverEvent } from "../util/events.ts";

export type { DriverEvent, TurnStatus } from "../util/events.ts";

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
