/**
 * A `run`, second step: whether the prepared run may start (docs/contract.md §8, §12). The rule of
 * §8, decided only in {@link evaluateRun}: a command runs without asking only when every stage is
 * vouched for, the planner context is `T`, and the stdin is `pub`. Anything else asks the person;
 * where nobody can be asked, the approval policy file's `run` entries answer in advance and
 * everything else is declined. What the person's answer grants, and the output's label, are decided
 * here too.
 *
 * {@link runFacts} gathers the facts (the vouches and the policy file's entries for each stage),
 * {@link evaluateRun} decides on them alone, and {@link decideRun} settles the verdict: asks,
 * stores a vouch the person gave, records.
 */
import type {
  Asking,
  BoundCommandRules,
  PlannerContext,
  Recording,
  Vouches,
} from "./capabilities.ts";
import {
  joinLabels,
  type Label,
  label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
} from "../util/label.ts";
import type { Decider } from "./audit.ts";
import { runnerWarning } from "./programs.ts";
import { type ConfinementPlan, describeBox } from "./sandbox.ts";
import { type RuleMatch, rulesMatch, rulesUnconfine } from "./command_rules.ts";
import {
  describeVouch,
  type NewVouch,
  type StageIdentity,
  type Vouch,
  type VouchLookup,
} from "./vouches.ts";
import type { RunAnswer, RunApprovalRequest } from "../person/person.ts";
import { seatAt, settle, type Settled, type Verdict } from "./verdict.ts";
import { pipelineText, type PreparedRun, type PreparedStage } from "./run_prepare.ts";
import { type ScreenText, screenText } from "../util/escape.ts";

export type RunDecision =
  | {
    run: true;
    /** Every stage vouched for (stored, given now, or by the policy file's `vouch`). */
    vouched: boolean;
    by: Decider;
    /** The label the output will carry. */
    outputLabel: Label;
    /** Run outside the confinement: the person's choice for this once, or the policy file's. */
    unconfined: boolean;
  }
  | { run: false; by: Decider; reason: string };

/** A stage's standing: vouched, and by what. */
export interface StageStanding {
  /** A stored one-program vouch that covers the stage and still holds. */
  vouch: Vouch | null;
  /** A stored vouch that would cover this stage but its program changed. */
  voided: Vouch | null;
  /** The policy file's `vouch` entries for this run. */
  fileVouch: RuleMatch;
  /** The policy file's `run` entries: allowed to run without asking. */
  fileRun: RuleMatch;
  /** A policy file entry covering the stage says `"unconfined": true`. */
  fileUnconfines: boolean;
}

/** The facts a run is decided on: plain data, gathered by {@link runFacts}. */
export interface RunFacts {
  prepared: PreparedRun;
  /** How the session's stages are confined: whether the person may choose "unconfined". */
  confinement: ConfinementPlan;
  /** Each stage's standing, in the pipeline's order. */
  standings: readonly StageStanding[];
  /** The stored vouch for the pipeline as a whole (a single stage: none). */
  whole: VouchLookup;
  /** The planner context's label: a `U` context asks about every command. */
  context: Label;
  /** There is an approval policy file (its `run` entries answer; a decline names it). */
  approvals: boolean;
  /** Whether anybody can be asked (docs/contract.md §4), and who answers when asked. */
  canAsk: boolean;
  asker: Decider;
}

/** A run's verdicts: what an allowed run is granted; who refused and why; a vouch to store. */
interface RunTerms {
  grants: Extract<RunDecision, { run: true }>;
  refusal: Extract<RunDecision, { run: false }>;
  question: RunApprovalRequest;
  answer: RunAnswer;
  /** The vouches the person gave: one, or one per stage of a pipeline. */
  keep: readonly NewVouch[];
}

function identity(stage: PreparedStage): StageIdentity {
  return { resolved: stage.resolved, args: stage.args, sha256: stage.sha256 };
}

async function standingOf(
  policy: Vouches & BoundCommandRules,
  stage: PreparedStage,
): Promise<StageStanding> {
  const found = await policy.vouches.lookup(identity(stage));
  const rules = policy.commandRules;
  return {
    vouch: found.status === "vouched" ? found.vouch : null,
    voided: found.status === "void" ? found.vouch : null,
    fileVouch: rulesMatch(rules.vouch, identity(stage)),
    fileRun: rulesMatch(rules.run, identity(stage)),
    fileUnconfines: rulesUnconfine([...rules.run, ...rules.vouch], identity(stage)),
  };
}

/** The facts of a prepared run: the vouches and the policy file's entries for its stages. */
export async function runFacts(
  policy: PlannerContext & Asking & Vouches & BoundCommandRules,
  prepared: PreparedRun,
  confinement: ConfinementPlan,
): Promise<RunFacts> {
  const standings = await Promise.all(prepared.stages.map((s) => standingOf(policy, s)));
  const whole = prepared.stages.length > 1
    ? await policy.vouches.lookupPipeline(prepared.stages.map(identity))
    : { status: "none" as const };
  return {
    prepared,
    confinement,
    standings,
    whole,
    context: policy.contextLabel,
    approvals: policy.approvals !== null,
    canAsk: policy.canAsk,
    asker: policy.asker,
  };
}

/**
 * What the person's "vouch" answer stores: one program (exact or prefix); a pipeline whole,
 * exactly; or each of a pipeline's stages on its own, by the prefix the person picked for it
 * (docs/contract.md §8: a prefix vouch names one program, so a pipeline's prefixes are one vouch
 * per stage, each covering that program alone or in any pipeline). Prefixes that do not fit the
 * stages (another count, out of range) store the narrowest vouch: the pipeline whole.
 */
function vouchesToStore(
  prepared: PreparedRun,
  answer: Extract<RunAnswer, { answer: "vouch" }>,
): NewVouch[] {
  const command = (s: PreparedStage) => ({
    program: s.resolved,
    args: s.args,
    ...(s.sha256 ? { sha256: s.sha256 } : {}),
  });
  const byPrefix = (s: PreparedStage, n: number): NewVouch => ({
    ...command(s),
    match: "prefix",
    args: s.args.slice(0, n),
  });
  const fits = (n: number, s: PreparedStage) => Number.isInteger(n) && n >= 0 && n <= s.args.length;
  if (prepared.stages.length > 1) {
    const each = answer.stagePrefixes;
    if (
      each?.length === prepared.stages.length && each.every((n, i) => fits(n, prepared.stages[i]))
    ) {
      return prepared.stages.map((s, i) => byPrefix(s, each[i]));
    }
    return [{ match: "pipeline", stages: prepared.stages.map(command) }];
  }
  const [stage] = prepared.stages;
  const n = answer.prefixArgs;
  // A prefix as long as the arguments is the command exactly.
  return [
    n !== undefined && fits(n, stage) && n < stage.args.length
      ? byPrefix(stage, n)
      : { ...command(stage), match: "exact" },
  ];
}

/**
 * The output's label (docs/tools.md#run; docs/contract.md §8): `(U,priv)`; for a vouched command
 * `(T,priv)` — unless its stdin was untrusted, since a vouched `cat` or `sed` would otherwise
 * hand untrusted bytes to the planner as trusted ones. Command output is always `priv`.
 */
export function outputLabel(vouched: boolean, stdin: Label | null): Label {
  if (!vouched) return UNTRUSTED_PRIVATE;
  return joinLabels(TRUSTED_PRIVATE, label(stdin?.integrity ?? "T", "priv"));
}

/** Why a command that might otherwise run unasked must ask; empty when it need not. */
function reasonsToAsk(prepared: PreparedRun, vouched: boolean[], tainted: boolean): string[] {
  const reasons: string[] = [];
  const unvouched = vouched.flatMap((v, i) => v ? [] : [i + 1]);
  if (unvouched.length === prepared.stages.length) reasons.push("the command is not vouched for");
  else if (unvouched.length > 0) {
    reasons.push(`stage${unvouched.length > 1 ? "s" : ""} ${unvouched.join(", ")} not vouched for`);
  }
  if (tainted) {
    reasons.push(
      "the planner's context is untrusted, so every command asks, vouched or not",
    );
  }
  if (prepared.stdin?.label.confidentiality === "priv") {
    reasons.push(
      `its stdin (ref:${prepared.stdin.ref.id}) is private, which asks even for a vouched command`,
    );
  }
  for (const [i, stage] of prepared.stages.entries()) {
    if (!stage.untrusted) continue;
    reasons.push(
      `the program of stage ${i + 1} lies in an untrusted place, so it is asked about every time`,
    );
  }
  return reasons;
}

/** Vouches and policy file entries that would have covered a stage but no longer hold. */
function voidedReasons(f: RunFacts): string[] {
  return [
    ...(f.whole.status === "void"
      ? [
        `the vouch ${f.whole.vouch.id} for this pipeline no longer holds: a program's contents changed`,
      ]
      : []),
    ...f.standings.flatMap((s, i) => [
      ...(s.voided
        ? [
          `the vouch ${s.voided.id} for stage ${
            i + 1
          } no longer holds: the program's contents changed`,
        ]
        : []),
      ...(s.fileVouch === "changed" || s.fileRun === "changed"
        ? [
          `the program of stage ${
            i + 1
          } changed since the run started, so the approval policy file's entry no longer covers it`,
        ]
        : []),
    ]),
  ];
}

function routingOf(prepared: PreparedRun): Record<string, unknown> {
  return {
    stages: prepared.stages.map((s) => ({
      program: s.typed,
      resolved: s.resolved,
      args: s.args,
      ...(s.sha256 ? { sha256: s.sha256 } : {}),
    })),
  };
}

/**
 * Whether the prepared run may start (docs/contract.md §8): unasked when vouched with nothing else
 * calling for a question; by the approval policy file's entries where nobody can be asked (a
 * program in an untrusted place never); declined where nobody can be asked and no entry
 * answers; otherwise the person's question, and what each answer grants — run once (inside the
 * confinement, or outside it this once), vouch for it (exactly or by a prefix; a pipeline
 * whole), or refuse with their reason.
 */
export function evaluateRun(f: RunFacts): Verdict<RunTerms> {
  const { prepared, confinement, standings, whole } = f;
  const wholeVouch = whole.status === "vouched" ? whole.vouch : null;
  // A pipeline runs unasked when vouched whole, or when each stage is covered on its own.
  const vouched = standings.map((s) =>
    wholeVouch !== null || s.vouch !== null || s.fileVouch === "covers"
  );
  const allVouched = vouched.every(Boolean);
  const untrusted = prepared.stages.some((s) => s.untrusted);
  const stdinLabel = prepared.stdin?.label ?? null;
  const tainted = f.context.integrity === "U";
  const reasons = reasonsToAsk(prepared, vouched, tainted);
  const routing = routingOf(prepared);
  // The stdin is content (docs/tools.md#run): named among the inputs, never as routing.
  const inputs = { stdin: prepared.stdin ? `ref:${prepared.stdin.ref.id}` : null };
  const labels = (l: Label | null) => ({
    argv: TRUSTED_PUBLIC,
    ...(stdinLabel ? { stdin: stdinLabel } : {}),
    ...(l ? { output: l } : {}),
  });
  const allowed = (
    by: Decider,
    decision: string,
    v: boolean,
    reason?: string,
    unconfined = false,
  ): Settled<RunTerms> => {
    const out = outputLabel(v, stdinLabel);
    const outside = unconfined && confinement.confined;
    return {
      kind: "allow",
      grants: { run: true, vouched: v, by, outputLabel: out, unconfined: outside },
      audit: {
        tool: "run",
        routing: outside ? { ...routing, unconfined: true } : routing,
        inputs,
        labels: labels(out),
        decision,
        by,
        reason,
      },
    };
  };
  // The policy file's `"unconfined": true` covers a run only when it covers every stage.
  const fileUnconfined = standings.every((s) => s.fileUnconfines);
  const refused = (
    by: Decider,
    reason: string,
    decision = "refused",
    notice?: ScreenText,
  ): Settled<RunTerms> => ({
    kind: "refuse",
    refusal: { run: false, by, reason },
    audit: { tool: "run", routing, inputs, labels: labels(null), decision, by, reason },
    ...(notice === undefined ? {} : { notice }),
  });

  if (reasons.length === 0) {
    const bys = wholeVouch
      ? [wholeVouch.id]
      : standings.map((s) => s.vouch ? s.vouch.id : "the approval policy file");
    return allowed(
      wholeVouch || standings.every((s) => s.vouch) ? "rule" : "policy-file",
      "ran without asking (vouched)",
      true,
      `vouched: ${bys.join(", ")}`,
      fileUnconfined,
    );
  }

  // The approval policy file answers in advance what would be asked (docs/cli.md): every stage is
  // in its `run` entries, or vouched with nothing else (context, stdin) calling for a question.
  // A program in an untrusted place is never answered in advance.
  const onlyVouchesMissing = !tainted && prepared.stdin?.label.confidentiality !== "priv";
  if (
    f.approvals && !untrusted &&
    standings.every((s, i) => s.fileRun === "covers" || (vouched[i] && onlyVouchesMissing))
  ) {
    return allowed(
      "policy-file",
      "ran without asking (policy file run entry)",
      allVouched,
      reasons.join("; "),
      fileUnconfined,
    );
  }

  const why = [...reasons, ...voidedReasons(f)].join("; ");

  if (!f.canAsk) {
    const reason = `not run: ${why}, and nobody can be asked in a one-shot run` +
      (f.approvals ? "; the approval policy file does not allow it" : "");
    return refused(
      f.asker,
      reason,
      "declined",
      screenText`declined a run: ${pipelineText(prepared.stages)} (${why})`,
    );
  }

  return {
    kind: "ask",
    question: {
      stages: prepared.stages.map((s) => ({
        program: s.typed,
        resolved: s.resolved,
        args: s.args,
      })),
      display: prepared.display,
      stdin: prepared.stdin
        ? { ref: `ref:${prepared.stdin.ref.id}`, label: prepared.stdin.label }
        : null,
      why,
      warnings: prepared.stages.flatMap((s) => runnerWarning(s) ?? []),
      stageWarnings: prepared.stages.map(runnerWarning),
      confinement: confinement.confined
        ? { confined: true, detail: describeBox(confinement.box) }
        : { confined: false, why: confinement.why },
    },
    answered: (answer) => {
      if (answer.answer === "refuse") {
        const reason = answer.reason?.trim()
          ? `the person refused: ${answer.reason.trim()}`
          : "the person refused to run it";
        return refused("person", reason);
      }
      if (answer.answer === "vouch") {
        // The line's reason is the stored vouch, as the seat describes it once kept.
        return {
          ...allowed("person", "vouched and ran", true),
          keep: vouchesToStore(prepared, answer),
        };
      }
      // Run once: the output is trusted only if the command was vouched and no program is
      // untrusted.
      return allowed(
        "person",
        answer.unconfined && confinement.confined ? "ran once, unconfined" : "ran once",
        allVouched && !untrusted,
        undefined,
        answer.unconfined === true,
      );
    },
    unasked: (e) => refused("person", `not run: the person could not be asked (${String(e)})`),
  };
}

/**
 * Decides whether the prepared run may start: the facts gathered, evaluated, the person asked
 * when §8 says so, a vouch they give stored (before the line is written), and the decision
 * recorded in the audit log.
 */
export async function decideRun(
  policy: PlannerContext & Asking & Recording & Vouches & BoundCommandRules,
  prepared: PreparedRun,
  confinement: ConfinementPlan = { confined: false, why: "not planned" },
): Promise<RunDecision> {
  const settled = await settle(
    evaluateRun(await runFacts(policy, prepared, confinement)),
    seatAt<RunTerms>(
      policy,
      (question) => policy.person.approveRun(question),
      async (vouches) => {
        const kept = [];
        for (const vouch of vouches) kept.push(describeVouch(await policy.vouches.add(vouch)));
        return kept.join("; ");
      },
    ),
  );
  return settled.kind === "allow" ? settled.grants : settled.refusal;
}
