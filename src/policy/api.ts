/**
 * The policy layer's decision API: the one module of `src/policy/` that the driver and the tools
 * import (the layering test holds them to it). It hands out ports, never the `Policy` itself:
 *
 * - {@link ToolPolicy}, what a tool receives: one slice per group of tools, each method a
 *   decision that returns a value for the tool to render. It has no effect worker, no audit log
 *   and no way to place anything in the planner context: a tool validates, asks, renders.
 * - {@link DriverPolicy}, what the driver receives (`ports/driver.ts`): the planner context (the
 *   driver places every result it sends, at labels the port decides), the decisions recorded
 *   during a call, and the egress gate for results.
 * - {@link PersonPolicy} (`ports/person_facing.ts`), what the person's side of a session
 *   receives: shell mode, `/show`, `/trust`, `/vouch`, the walls for `/status`, stopping runs.
 *
 * The session (`src/session/`) builds all three from one `Policy`.
 */
import type {
  BoundCommandRules,
  ChangeRecords,
  Deciding,
  EgressMemory,
  RunMemory,
  Vouches,
} from "./capabilities.ts";
import type { Label } from "../util/label.ts";
import { type FilesReadPort, filesReadPort } from "./ports/files_read.ts";
import { type FilesWritePort, filesWritePort } from "./ports/files_write.ts";
import { type RunPort, runPort } from "./ports/run.ts";
import { type ListedSkills, type OtherPort, otherPort } from "./ports/other.ts";

export * from "./ports/files_read.ts";
export * from "./ports/files_write.ts";
export * from "./ports/run.ts";
export * from "./ports/other.ts";
export * from "./ports/person_facing.ts";
export * from "./ports/driver.ts";
export type { Limits, Settings } from "../state/settings.ts";
export { type Shown, shownHeading, shownMarkers } from "./show.ts";
export type { SessionState, Todo, TodoStatus } from "../state/session_state.ts";
/** The label of Brave Bot's own words: what an error result the tools or the driver word carries. */
export { ownWordsLabel } from "./driver_labels.ts";

/** What a tool receives. */
export interface ToolPolicy extends FilesReadPort, FilesWritePort, RunPort, OtherPort {
  /** The planner context's label, read only: the planner's words carry it (docs/contract.md §4). */
  readonly contextLabel: Label;
}

/**
 * The tools' port over `policy`; `session` is the session state the tools' context holds, whose
 * skills (listed at each turn's start) load_skill selects from.
 */
export function toolPolicy(
  policy: Deciding & ChangeRecords & Vouches & BoundCommandRules & RunMemory & EgressMemory,
  session: ListedSkills,
): ToolPolicy {
  return {
    ...filesReadPort(policy),
    ...filesWritePort(policy),
    ...runPort(policy),
    ...otherPort(policy, session),
    get contextLabel() {
      return policy.contextLabel;
    },
  };
}
