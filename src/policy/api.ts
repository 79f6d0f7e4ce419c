/**
 * The policy layer's decision API: the one module of `src/policy/` that the driver and the tools
 * import (the layering test holds them to it). It hands out ports, never the `Policy` itself:
 *
 * - {@link ToolPolicy}, what a tool receives: one slice per group of tools, each method a
 *   decision that returns a value for the tool to render. It has no effect worker, no audit log
 *   and no way to place anything in the planner context: a tool validates, asks, renders.
 * - {@link DriverPolicy}, what the driver receives: the planner context (the driver places every
 *   result it sends), the decisions recorded during a call, and the egress rule for results.
 * - {@link PersonPolicy} (`ports/person_facing.ts`), what the person's side of a session
 *   receives: shell mode, `/show`, `/trust`, `/vouch`, the walls for `/status`, stopping runs.
 *
 * The session (`src/session/`) builds all three from one `Policy`.
 */
import type { Policy } from "./core.ts";
import type { Label } from "../util/label.ts";
import type { AuditRecord } from "./audit.ts";
import { resultMayLeave } from "./egress.ts";
import { type Shown, showToPerson } from "./show.ts";
import type { Result } from "../util/result.ts";
import type { EndpointSettings } from "../state/settings.ts";
import { type FilesReadPort, filesReadPort } from "./ports/files_read.ts";
import { type FilesWritePort, filesWritePort } from "./ports/files_write.ts";
import { type RunPort, runPort } from "./ports/run.ts";
import { type OtherPort, otherPort } from "./ports/other.ts";

export * from "./ports/files_read.ts";
export * from "./ports/files_write.ts";
export * from "./ports/run.ts";
export * from "./ports/other.ts";
export * from "./ports/person_facing.ts";
export type { Limits, Settings } from "../state/settings.ts";
export { withheldResult } from "./egress.ts";
export { type Shown, shownHeading, shownMarkers } from "./show.ts";
export type { SessionState, Todo, TodoStatus } from "../state/session_state.ts";

/** What a tool receives. */
export interface ToolPolicy extends FilesReadPort, FilesWritePort, RunPort, OtherPort {
  /** The planner context's label, read only: what the planner writes carries it (design.md §3). */
  readonly contextLabel: Label;
}

export function toolPolicy(policy: Policy): ToolPolicy {
  return {
    ...filesReadPort(policy),
    ...filesWritePort(policy),
    ...runPort(policy),
    ...otherPort(policy),
    get contextLabel() {
      return policy.contextLabel;
    },
  };
}

/** What the driver receives. */
export interface DriverPolicy {
  readonly contextLabel: Label;
  /** Joins a label into the planner context: the driver calls it for whatever it sends. */
  placeInContext(l: Label): void;
  /** `/clear`: a new context at `(T,pub)`. */
  clearContext(): void;
  onContextChange(listener: (l: Label) => void): void;
  /** A state file found corrupt mid-session, for the person. */
  onStateProblem(listener: (problem: string) => void): void;
  /** Re-reads the trust map when another session changed it, before a decision. */
  refreshTrust(): Promise<void>;
  /** The decisions recorded so far (the driver reports those a tool call added). */
  readonly decisions: readonly AuditRecord[];
  /**
   * The egress rule for a tool result (design.md §3): whether it may go to the planner endpoint,
   * asked for a result just made and for one restored from a transcript.
   */
  resultMayLeave(
    endpoint: EndpointSettings,
    tool: string,
    content: string,
    label: Label,
    what?: string,
  ): Promise<boolean>;
  /** A reference's content for the person's screen only (design.md §15), at most `maxLines`. */
  showToPerson(ref: string, maxLines: number): Promise<Result<Shown>>;
}

export function driverPolicy(policy: Policy): DriverPolicy {
  return {
    get contextLabel() {
      return policy.contextLabel;
    },
    placeInContext: (l) => policy.placeInContext(l),
    clearContext: () => policy.clearContext(),
    onContextChange: (f) => policy.onContextChange(f),
    onStateProblem: (f) => policy.onStateProblem(f),
    refreshTrust: () => policy.refreshTrust(),
    get decisions() {
      return policy.audit.entries;
    },
    resultMayLeave: (endpoint, tool, content, label, what) =>
      resultMayLeave(policy, endpoint, tool, content, label, what),
    showToPerson: (ref, maxLines) => showToPerson(policy, ref, maxLines),
  };
}
