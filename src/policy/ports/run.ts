/**
 * The decisions run and read_output ask for: the slice of the tools' port (`../api.ts`) that those tools
 * call. Each method decides through the policy layer's rule functions and returns a value the
 * tool renders; none hands out the effect worker, the audit log or the planner context.
 */
import type { Policy } from "../core.ts";
import type { Settings } from "../../state/settings.ts";
import { carryOutRun, type RunInput, type RunOutcome } from "../runs.ts";
import { decideReadOutput, type ReadOutputDecision } from "../outputs.ts";

export { MAX_STAGES, RUN_TIMEOUT_SECONDS } from "../runs.ts";
export type { OutputRef, RunInput, RunOutcome, StageInput } from "../runs.ts";
export type { ReadOutputDecision, ShownAs } from "../outputs.ts";
export { assertedWords } from "../show.ts";

export interface RunPort {
  /**
   * run: checks the pipeline, plans the sandbox, decides whether it may start (asking the
   * person when docs/contract.md §8.2 says so), spawns it and keeps its output as a reference.
   */
  run(input: RunInput, settings: Settings): Promise<RunOutcome>;
  /** read_output: whether a run's output reference is shown to the planner, and what it shows. */
  readOutput(ref: string, settings: Settings): Promise<ReadOutputDecision>;
}

export function runPort(policy: Policy): RunPort {
  return {
    run: (input, settings) => carryOutRun(policy, settings, input),
    readOutput: (ref, settings) => decideReadOutput(policy, settings, ref),
  };
}
