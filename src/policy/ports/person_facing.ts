/**
 * What the person's own side of a session asks of the policy layer: the commands they type
 * (`/show`, `/trust`, `/vouch`, `/status`), shell mode (`!` / `!!`), stopping the commands that
 * run, and the context label the prompt shows. The interactive session holds this port, not the
 * `Policy`, and does not reach the rule files behind it (shell.ts, show.ts, runs.ts): each method
 * is one of those rules, deciding and recording as it does for the planner's tools.
 */
import type { ChangeRecords, Deciding, RunControl, RunMemory, Vouches } from "../capabilities.ts";
import type { Label } from "../../util/label.ts";
import { ok, type Result } from "../../util/result.ts";
import type { Settings } from "../../state/settings.ts";
import { PERSON_TRUST_WAIT, type TrustMap } from "../trust_map.ts";
import type { LockWait } from "../../state/jsonfile.ts";
import type { VouchStore } from "../vouches.ts";
import { runShellLine, type ShellLine, type ShellOutcome } from "../shell.ts";
import { type Shown, showToPerson } from "../show.ts";
import { sessionConfinement } from "../runs.ts";
import { applyUndo, type FileDiff, planUndo, sessionDiff, type UndoPlan } from "../undo.ts";

export type { FileDiff, UndoPlan } from "../undo.ts";

export { parseShellLine } from "../shell.ts";
export type { ShellLine, ShellOutcome } from "../shell.ts";

/** Whether this session's commands run inside the walls (bwrap), and if not, why. */
export type Walls = { confined: true } | { confined: false; why: string };

export interface PersonPolicy {
  /** The planner context's label, read only: the prompt line and `/status` show it. */
  readonly contextLabel: Label;
  /** `/show ref:N`: a reference's content for the person's screen only (docs/contract.md §15.2). */
  showToPerson(ref: string, maxLines: number): Promise<Result<Shown>>;
  /**
   * A shell line the person typed (docs/contract.md §9), run with their authority and recorded;
   * what the planner gets (`forPlanner`) goes with their next message.
   */
  runShellLine(line: ShellLine, settings: Settings): Promise<Result<ShellOutcome>>;
  /** `/status`: the walls the session's commands run in, as the runs themselves plan them. */
  walls(settings: Settings): Promise<Result<Walls>>;
  /** Ctrl-C: stops every command running (they lead their own process groups). */
  stopRuns(): Promise<number>;
  /**
   * `/trust`: the person's trust map as stored, read again, and changed one change at a time.
   * A change gives up when another process holds the lock past the bound (`wait`, by default
   * PERSON_TRUST_WAIT), with a LockTimeout naming the holder's pid: nothing was done on it yet.
   */
  readonly storedTrust: TrustMap;
  refreshTrust(): Promise<void>;
  changeTrust<R>(change: (map: TrustMap) => R, wait?: LockWait): Promise<R>;
  /** `/vouch`: the vouched commands, listed and removed. */
  readonly vouches: VouchStore;
  /** `/diff`: every file the session changed, against its state before the first change. */
  sessionDiff(): Promise<FileDiff[]>;
  /** `/undo N`: what taking back the last N changes would do, or why it cannot be done. */
  planUndo(n: number): Promise<Result<UndoPlan>>;
  /** The plan the person accepted, applied; what the planner is told goes with the next message. */
  applyUndo(plan: UndoPlan): ReturnType<typeof applyUndo>;
}

export function personPolicy(
  policy: Deciding & ChangeRecords & Vouches & RunControl & RunMemory,
): PersonPolicy {
  return {
    get contextLabel() {
      return policy.contextLabel;
    },
    showToPerson: (ref, maxLines) => showToPerson(policy, ref, maxLines),
    runShellLine: (line, settings) => runShellLine(policy, settings, line),
    walls: async (settings) => {
      const plan = await sessionConfinement(policy, settings);
      if (!plan.ok) return plan;
      return ok(
        plan.value.confined ? { confined: true } : { confined: false, why: plan.value.why },
      );
    },
    stopRuns: () => policy.stopRuns(),
    get storedTrust() {
      return policy.storedTrust;
    },
    refreshTrust: () => policy.refreshTrust(),
    changeTrust: (change, wait = PERSON_TRUST_WAIT) => policy.changeTrust(change, wait),
    get vouches() {
      return policy.vouches;
    },
    sessionDiff: () => sessionDiff(policy),
    planUndo: (n) => planUndo(policy, n),
    applyUndo: (plan) => applyUndo(policy, plan),
  };
}
