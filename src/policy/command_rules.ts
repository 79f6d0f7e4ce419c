/**
 * The approval policy file's `run` and `vouch` entries, bound to programs when the run starts
 * (docs/cli.md#run; docs/contract.md §8.3). An entry names its program as the command line would: a
 * bare name is the program on PATH (never a file the repository ships), a path is a workspace
 * program, bound to the bytes it has at the run's start. An entry is then compared with a stage by
 * resolved program and arguments — never by the word the planner typed — so `["echo", "hello"]`
 * does not cover a `./echo` in the workspace, and a rewritten `scripts/build.sh` is no longer
 * covered.
 */
import type { CommandRule } from "./approvals_file.ts";
import { type ProgramPlaces, resolveProgram } from "./programs.ts";
import { argsCovered, type StageIdentity } from "./vouches.ts";

export interface BoundRule {
  readonly match: "exact" | "prefix";
  /** The program as the person wrote it in the file: how the entry is named to the planner. */
  readonly written: string;
  /** The resolved absolute path of the entry's program. */
  readonly program: string;
  /** A workspace program's SHA-256 at the run's start; null for a program outside it. */
  readonly sha256: string | null;
  readonly args: readonly string[];
  /** The entry lets the command run outside the bwrap confinement (`"unconfined": true`). */
  readonly unconfined?: boolean;
}

export interface BoundRules {
  run: readonly BoundRule[];
  vouch: readonly BoundRule[];
}

export const NO_RULES: BoundRules = { run: [], vouch: [] };

/** How an entry stands to a stage: it covers it, it would but the program changed, or not. */
export type RuleMatch = "covers" | "changed" | "no";

export function ruleMatch(rule: BoundRule, stage: StageIdentity): RuleMatch {
  if (rule.program !== stage.resolved || !argsCovered(rule.match, rule.args, stage.args)) {
    return "no";
  }
  return rule.sha256 === stage.sha256 ? "covers" : "changed";
}

/** The best standing any of `rules` gives the stage. */
export function rulesMatch(rules: readonly BoundRule[], stage: StageIdentity): RuleMatch {
  let best: RuleMatch = "no";
  for (const rule of rules) {
    const m = ruleMatch(rule, stage);
    if (m === "covers") return m;
    if (m === "changed") best = m;
  }
  return best;
}

/** Whether an entry covering the stage lets it run unconfined. */
export function rulesUnconfine(rules: readonly BoundRule[], stage: StageIdentity): boolean {
  return rules.some((rule) => rule.unconfined && ruleMatch(rule, stage) === "covers");
}

/**
 * Binds every entry of both lists; an entry whose program cannot be found allows nothing and is
 * reported (the person wrote the file, so the sentence may quote it).
 */
export async function bindRules(
  policy: ProgramPlaces,
  file: { run?: CommandRule[]; vouch?: CommandRule[] } | null,
): Promise<{ rules: BoundRules; problems: string[] }> {
  const problems: string[] = [];
  const bind = async (field: "run" | "vouch") => {
    const bound: BoundRule[] = [];
    for (const [i, rule] of (file?.[field] ?? []).entries()) {
      const argv = "argv" in rule ? rule.argv : rule.prefix;
      const program = await resolveProgram(policy, argv[0]);
      if (!program.ok) {
        problems.push(
          `the approval policy file's ${field} entry ${i + 1} allows nothing: ${program.error}`,
        );
        continue;
      }
      bound.push({
        match: "argv" in rule ? "exact" : "prefix",
        written: argv[0],
        program: program.value.resolved,
        sha256: program.value.sha256,
        args: argv.slice(1),
        unconfined: rule.unconfined === true,
      });
    }
    return bound;
  };
  return { rules: { run: await bind("run"), vouch: await bind("vouch") }, problems };
}
