/**
 * The decisions run and read_output ask for: the slice of the tools' port (`../api.ts`) that those tools
 * call. Each method decides through the policy layer's rule functions and returns a value the
 * tool renders; none hands out the effect worker, the audit log or the planner context.
 */
import type {
  BoundCommandRules,
  ChangeRecords,
  Deciding,
  RunMemory,
  Vouches,
} from "../capabilities.ts";
import type { Label } from "../../util/label.ts";
import type { Settings } from "../../state/settings.ts";
import { ownWordsLabel } from "../driver_labels.ts";
import { carryOutRun, type RunInput, type RunOutcome } from "../runs.ts";
import { decideReadOutput, type ReadOutputDecision } from "../outputs.ts";

export { MAX_STAGES, RUN_TIMEOUT_SECONDS } from "../runs.ts";
export type { OutputRef, RunInput, RunOutcome, StageInput } from "../runs.ts";
export type { ReadOutputDecision, ShownAs } from "../outputs.ts";
export { assertedWords } from "../show.ts";

/**
 * run's outcome as the tool is given it: once the run ran, with `resultLabel`, the label of what
 * the planner is shown of it — the output's own label when its text is shown, else Brave Bot's
 * words about the reference (a reference's metadata, `ownWordsLabel`).
 */
export type RunResult =
  | Exclude<RunOutcome, { outcome: "ran" }>
  | (Extract<RunOutcome, { outcome: "ran" }> & { resultLabel: Label });

export interface RunPort {
  /**
   * run: checks the pipeline, plans the sandbox, decides whether it may start (asking the
   * person when docs/contract.md §8.2 says so), spawns it and keeps its output as a reference.
   */
  run(input: RunInput, settings: Settings): Promise<RunResult>;
  /** read_output: whether a run's output reference is shown to the planner, and what it shows. */
  readOutput(ref: string, settings: Settings): Promise<ReadOutputDecision>;
}

export function runPort(
  policy: Deciding & ChangeRecords & Vouches & BoundCommandRules & RunMemory,
): RunPort {
  return {
    run: async (input, settings) => withResultLabel(await carryOutRun(policy, settings, input)),
    readOutput: (ref, settings) => decideReadOutput(policy, settings, ref),
  };
}

/** A run's outcome with the label of what its result shows ({@link RunResult}). */
function withResultLabel(r: RunOutcome): RunResult {
  if (r.outcome !== "ran") return r;
  return { ...r, resultLabel: r.shown ? r.label : ownWordsLabel() };
}
