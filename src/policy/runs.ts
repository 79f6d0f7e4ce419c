/**
 * The decisions about a `run` (tools.md, run; design.md §3, §4, §8, §12): whether the pipeline
 * is well formed, what each stage's program is, what its stdin is and what label it carries,
 * whether the person must be asked, what their answer grants, and the label of the output.
 *
 * The rule of §8, decided only in {@link decideRun}: a command runs without asking only when
 * every stage is vouched for, the planner context is `T`, and the stdin is `pub`. Anything else
 * asks the person; where nobody can be asked, the approval policy file's `run` entries answer
 * in advance and everything else is declined.
 *
 * {@link carryOutRun} is the whole of a `run` for the tool: it decides, has the effect worker
 * spawn the pipeline, keeps the output and returns what became of it.
 */
import {
  changesLine,
  compareSnapshots,
  recordRunChanges,
  type RunChanges,
  runStart,
  type Snapshot,
  UNKNOWN_SNAPSHOT,
  unpackSnapshot,
} from "./run_changes.ts";
import {
  closeLeftoverWatch,
  leftoverWatchSince,
  openLeftoverWatch,
  runCgroup,
} from "./leftovers.ts";
import type { Policy } from "./core.ts";
import { describeKind, staleFileRef } from "./core.ts";
import {
  type Integrity,
  joinLabels,
  type Label,
  label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
} from "../util/label.ts";
import type { RefRecord } from "./refs.ts";
import { resolvePath } from "./paths.ts";
import { pathNameShown, readFileRef, tooBigMessage } from "./reads.ts";
import type { Decider } from "./audit.ts";
import { childEnv, type ResolvedProgram, resolveProgram, runnerWarning } from "./programs.ts";
import { keepOutput, statusLines } from "./outputs.ts";
import { personWatch } from "./watch.ts";
import {
  type ConfinementPlan,
  describeBox,
  planConfinement,
  type Spawner,
  stageWrapper,
} from "./sandbox.ts";
import { type RuleMatch, rulesMatch, rulesUnconfine } from "./command_rules.ts";
import { guardGitStage } from "./git_guard.ts";
import {
  describeVouch,
  type NewVouch,
  type StageIdentity,
  type Vouch,
  vouchedCommands,
} from "./vouches.ts";
import { DEFAULT_LIMITS, type Settings } from "../state/settings.ts";
import type { RunAnswer } from "../person/person.ts";
import { argvText, formatArgv, type ScreenText, screenText } from "../util/escape.ts";
import { err, ok, type Result } from "../util/result.ts";

/** A pipeline longer than this is refused: real narrowing needs a handful of stages. */
export const MAX_STAGES = 8;
export const MAX_ARGS_PER_STAGE = 1_024;
export const MAX_ARG_CHARS = 128 * 1024;
/** Below the usual ARG_MAX, so an accepted argv is one the OS also accepts. */
export const MAX_ARGV_BYTES = 1024 * 1024;
/** The largest file a stdin reference may feed to a pipeline. */
export const MAX_STDIN_BYTES = 64 * 1024 * 1024;
/**
 * The timeout a run gets unless the planner asks for another, and the most it may ask for
 * (tools.md), in seconds: the settings' defaults, so the tool's schema states the same bounds.
 * A session's own limits (a config may change them) are checked by {@link prepareRun}.
 */
export const RUN_TIMEOUT_SECONDS = {
  default: DEFAULT_LIMITS.runTimeoutMs / 1000,
  max: DEFAULT_LIMITS.runMaxTimeoutMs / 1000,
} as const;

export interface StageInput {
  program: string;
  args?: string[];
}

export interface RunInput {
  pipeline: StageInput[];
  stdin?: string;
  timeout_seconds?: number;
}

export interface PreparedStage extends ResolvedProgram {
  args: string[];
  /**
   * A workspace program in an untrusted place (its directory or the file itself untrusted):
   * asked about every time, whatever vouches or entries say (design.md §8).
   */
  untrusted: boolean;
  /**
   * Brave Bot's own arguments, run right after the program and before `args` (the git
   * overrides of design.md §13); shown to the person, never part of what a vouch matches.
   */
  injected: string[];
}

export interface PreparedRun {
  stages: PreparedStage[];
  stdin: { ref: RefRecord; label: Label } | null;
  timeoutMs: number;
  /** One line per stage, escaped, with the resolved program: what the person approves. */
  display: string[];
}

const encoder = new TextEncoder();

type ShownStage = { resolved: string; args: readonly string[]; injected?: readonly string[] };

/** What a stage runs: the resolved program, Brave Bot's arguments, then the planner's. */
function stageArgv(stage: ShownStage): string[] {
  return [stage.resolved, ...stage.injected ?? [], ...stage.args];
}

/** The exact argv of a stage as the person sees it: resolved program, each argument escaped. */
export function displayStage(stage: ShownStage): string {
  return formatArgv(stageArgv(stage));
}

/** A pipeline in one line, escaped, for a notice (shown as it is, not escaped again). */
function pipelineText(stages: readonly ShownStage[]): ScreenText {
  return argvText(stages.map(stageArgv));
}

/** A pipeline in one line, for results and the audit log. */
export function displayPipeline(stages: readonly ShownStage[]): string {
  return pipelineText(stages).text;
}

function checkShape(input: RunInput): Result<void> {
  if (!Array.isArray(input.pipeline) || input.pipeline.length === 0) {
    return err('the pipeline is empty; give at least one stage, e.g. [{"program": "ls"}]');
  }
  if (input.pipeline.length > MAX_STAGES) {
    return err(`the pipeline has ${input.pipeline.length} stages; at most ${MAX_STAGES} are run`);
  }
  let argvBytes = 0;
  for (const [i, stage] of input.pipeline.entries()) {
    const where = `stage ${i + 1}`;
    if (typeof stage?.program !== "string" || stage.program === "") {
      return err(`${where}: the program is empty; name a program such as git`);
    }
    const args = stage.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) {
      return err(`${where}: args must be a list of strings`);
    }
    if (args.length > MAX_ARGS_PER_STAGE) {
      return err(`${where}: ${args.length} arguments; at most ${MAX_ARGS_PER_STAGE} are accepted`);
    }
    for (const [j, a] of args.entries()) {
      if (a.includes("\0")) {
        return err(`${where}: argument ${j + 1} contains a NUL byte, which no program can receive`);
      }
      if (a.length > MAX_ARG_CHARS) {
        return err(`${where}: argument ${j + 1} is longer than ${MAX_ARG_CHARS} characters`);
      }
      argvBytes += encoder.encode(a).length + 1;
    }
    argvBytes += encoder.encode(stage.program).length + 1;
  }
  if (argvBytes > MAX_ARGV_BYTES) {
    return err(`the arguments add up to more than ${MAX_ARGV_BYTES} bytes`);
  }
  return ok(undefined);
}

/** The kinds of reference whose bytes can be a stdin: content, not names. */
function stdinProblem(ref: RefRecord): string | null {
  switch (ref.kind) {
    case "file":
    case "file_content":
    case "command_output":
    case "processor_answer":
      return null;
    case "file_name":
      return `ref:${ref.id} is ${describeKind(ref)}: a name, not content; read it with read_file ` +
        `path_ref first and give the reference that returns`;
  }
}

/** Whether a workspace program lies in an untrusted place: its directory, or the file itself. */
async function programUntrusted(policy: Policy, rel: string | null): Promise<boolean> {
  if (rel === null) return false;
  const dir = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : ".";
  if (policy.nameLabel(dir).integrity === "U") return true;
  return (await policy.fileLabel(rel)).integrity === "U";
}

/** The stdin reference and the label of what it holds now. */
async function prepareStdin(
  policy: Policy,
  text: string,
): Promise<Result<{ ref: RefRecord; label: Label }>> {
  const found = policy.refs.lookup(text);
  if (!found.ok) return err(`stdin: ${found.error}`);
  const ref = found.value;
  const problem = stdinProblem(ref);
  if (problem) return err(`stdin: ${problem}`);
  if (ref.kind === "file") {
    // Not opened yet: the label is the one the file has now, never less than the reference's.
    const where = await resolvePath(policy.workspace, ref.path);
    if (!where.ok) return err(`stdin: ${staleFileRef(ref)}`);
    if (where.value.kind !== "file") return err(`stdin: ref:${ref.id} is no longer a file`);
    const now = await policy.fileLabel(where.value.rel, where.value);
    return ok({ ref, label: joinLabels(ref.label, now) });
  }
  if (!ref.hasBytes) return err(`stdin: ref:${ref.id} holds no bytes`);
  return ok({ ref, label: ref.label });
}

/** The timeout of a run (or a shell line) nobody gave one: the configured one, within the ceiling. */
export function defaultTimeoutMs(settings: Settings): number {
  return Math.min(settings.limits.runTimeoutMs, settings.limits.runMaxTimeoutMs);
}

/** Checks and resolves everything the planner sent; nothing runs and nobody is asked here. */
export async function prepareRun(
  policy: Policy,
  settings: Settings,
  input: RunInput,
): Promise<Result<PreparedRun>> {
  const shape = checkShape(input);
  if (!shape.ok) return shape;
  const stages: PreparedStage[] = [];
  for (const [i, stage] of input.pipeline.entries()) {
    const program = await resolveProgram(policy, stage.program);
    if (!program.ok) return err(`stage ${i + 1}: ${program.error}`);
    const args = [...(stage.args ?? [])];
    const injected = await guardGitStage(policy, { resolved: program.value.resolved, args });
    if (!injected.ok) return err(`stage ${i + 1}: ${injected.error}`);
    stages.push({
      ...program.value,
      args,
      untrusted: await programUntrusted(policy, program.value.workspaceRel),
      injected: injected.value,
    });
  }
  let stdin: PreparedRun["stdin"] = null;
  if (input.stdin !== undefined) {
    const prepared = await prepareStdin(policy, input.stdin);
    if (!prepared.ok) return prepared;
    stdin = prepared.value;
  }
  const maxMs = settings.limits.runMaxTimeoutMs;
  let timeoutMs = defaultTimeoutMs(settings);
  if (input.timeout_seconds !== undefined) {
    const s = input.timeout_seconds;
    if (!Number.isInteger(s) || s < 1 || s * 1000 > maxMs) {
      return err(`timeout_seconds must be a whole number from 1 to ${maxMs / 1000}`);
    }
    timeoutMs = s * 1000;
  }
  return ok({ stages, stdin, timeoutMs, display: stages.map(displayStage) });
}

/** The bytes of the stdin reference, read by the policy layer (through the worker for a file). */
export async function stdinBytes(policy: Policy, ref: RefRecord): Promise<Result<Uint8Array>> {
  if (ref.kind !== "file") {
    if (ref.size !== undefined && ref.size > MAX_STDIN_BYTES) {
      return err(tooBigMessage(`ref:${ref.id}`, { size: ref.size, grew: false }, MAX_STDIN_BYTES));
    }
    return ok(await policy.refs.bytes(ref));
  }
  const read = await readFileRef(policy, ref, MAX_STDIN_BYTES);
  return read.ok ? ok(read.value.bytes) : read;
}

// ---- the decision ----

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
interface StageStanding {
  /** A stored one-program vouch that covers the stage and still holds. */
  vouch: Vouch | null;
  /** A stored vouch that would cover this stage but its program changed. */
  voided: Vouch | null;
  /** The policy file's `vouch` entries for this run. */
  fileVouch: RuleMatch;
  /** The policy file's `run` entries: allowed to run without asking. */
  fileRun: RuleMatch;
}

function identity(stage: PreparedStage): StageIdentity {
  return { resolved: stage.resolved, args: stage.args, sha256: stage.sha256 };
}

async function standingOf(policy: Policy, stage: PreparedStage): Promise<StageStanding> {
  const found = await policy.vouches.lookup(identity(stage));
  const rules = policy.commandRules;
  return {
    vouch: found.status === "vouched" ? found.vouch : null,
    voided: found.status === "void" ? found.vouch : null,
    fileVouch: rulesMatch(rules.vouch, identity(stage)),
    fileRun: rulesMatch(rules.run, identity(stage)),
  };
}

/** What the person's "vouch" answer stores: one program (exact or prefix), or the whole pipeline. */
function vouchToStore(prepared: PreparedRun, prefixArgs: number | undefined): NewVouch {
  const command = (s: PreparedStage) => ({
    program: s.resolved,
    args: s.args,
    ...(s.sha256 ? { sha256: s.sha256 } : {}),
  });
  if (prepared.stages.length > 1) {
    // A prefix vouch names one program; a pipeline is vouched exactly, as a whole.
    return { match: "pipeline", stages: prepared.stages.map(command) };
  }
  const [stage] = prepared.stages;
  const prefix = prefixArgs !== undefined && prefixArgs >= 0 && prefixArgs < stage.args.length;
  return prefix
    ? { ...command(stage), match: "prefix", args: stage.args.slice(0, prefixArgs) }
    : { ...command(stage), match: "exact" };
}

/**
 * The output's label (tools.md, run; design.md §8): `(U,priv)`; for a vouched command
 * `(T,priv)` — unless its stdin was untrusted, since a vouched `cat` or `sed` would otherwise
 * hand untrusted bytes to the planner as trusted ones. Command output is always `priv`.
 */
export function outputLabel(vouched: boolean, stdin: Label | null): Label {
  if (!vouched) return UNTRUSTED_PRIVATE;
  return joinLabels(TRUSTED_PRIVATE, label(stdin?.integrity ?? "T", "priv"));
}

/** Why a command that might otherwise run unasked must ask; empty when it need not. */
function reasonsToAsk(policy: Policy, prepared: PreparedRun, vouched: boolean[]): string[] {
  const reasons: string[] = [];
  const unvouched = vouched.flatMap((v, i) => v ? [] : [i + 1]);
  if (unvouched.length === prepared.stages.length) reasons.push("the command is not vouched for");
  else if (unvouched.length > 0) {
    reasons.push(`stage${unvouched.length > 1 ? "s" : ""} ${unvouched.join(", ")} not vouched for`);
  }
  if (policy.contextTainted) {
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
 * Decides whether the prepared run may start, asking the person when §8 says so, storing any
 * vouch they give, and recording the decision in the audit log.
 */
export async function decideRun(
  policy: Policy,
  prepared: PreparedRun,
  confinement: ConfinementPlan = { confined: false, why: "not planned" },
): Promise<RunDecision> {
  const standings = await Promise.all(prepared.stages.map((s) => standingOf(policy, s)));
  const whole = prepared.stages.length > 1
    ? await policy.vouches.lookupPipeline(prepared.stages.map(identity))
    : { status: "none" as const };
  const wholeVouch = whole.status === "vouched" ? whole.vouch : null;
  // A pipeline runs unasked when vouched whole, or when each stage is covered on its own.
  const vouched = standings.map((s) =>
    wholeVouch !== null || s.vouch !== null || s.fileVouch === "covers"
  );
  const allVouched = vouched.every(Boolean);
  const untrusted = prepared.stages.some((s) => s.untrusted);
  const stdinLabel = prepared.stdin?.label ?? null;
  const reasons = reasonsToAsk(policy, prepared, vouched);
  const routing = routingOf(prepared);
  // The stdin is content (tools.md): named among the inputs, never as routing.
  const inputs = { stdin: prepared.stdin ? `ref:${prepared.stdin.ref.id}` : null };
  const labels = (l: Label | null) => ({
    argv: TRUSTED_PUBLIC,
    ...(stdinLabel ? { stdin: stdinLabel } : {}),
    ...(l ? { output: l } : {}),
  });
  const allowed = async (
    by: Decider,
    decision: string,
    v: boolean,
    reason?: string,
    unconfined = false,
  ) => {
    const out = outputLabel(v, stdinLabel);
    const outside = unconfined && confinement.confined;
    await policy.record({
      tool: "run",
      routing: outside ? { ...routing, unconfined: true } : routing,
      inputs,
      labels: labels(out),
      decision,
      by,
      reason,
    });
    return { run: true as const, vouched: v, by, outputLabel: out, unconfined: outside };
  };
  // The policy file's `"unconfined": true` covers a run only when it covers every stage.
  const fileUnconfined = prepared.stages.every((s) =>
    rulesUnconfine([...policy.commandRules.run, ...policy.commandRules.vouch], identity(s))
  );
  const refused = async (by: Decider, reason: string, decision = "refused") => {
    await policy.record({
      tool: "run",
      routing,
      inputs,
      labels: labels(null),
      decision,
      by,
      reason,
    });
    return { run: false as const, by, reason };
  };

  if (reasons.length === 0) {
    const bys = wholeVouch
      ? [wholeVouch.id]
      : standings.map((s) => s.vouch ? s.vouch.id : "the approval policy file");
    return await allowed(
      wholeVouch || standings.every((s) => s.vouch) ? "rule" : "policy-file",
      "ran without asking (vouched)",
      true,
      `vouched: ${bys.join(", ")}`,
      fileUnconfined,
    );
  }

  // The approval policy file answers in advance what would be asked (cli.md): every stage is
  // in its `run` entries, or vouched with nothing else (context, stdin) calling for a question.
  // A program in an untrusted place is never answered in advance.
  const onlyVouchesMissing = !policy.contextTainted &&
    prepared.stdin?.label.confidentiality !== "priv";
  if (
    policy.approvals && !untrusted &&
    standings.every((s, i) => s.fileRun === "covers" || (vouched[i] && onlyVouchesMissing))
  ) {
    return await allowed(
      "policy-file",
      "ran without asking (policy file run entry)",
      allVouched,
      reasons.join("; "),
      fileUnconfined,
    );
  }

  const voided = [
    ...(whole.status === "void"
      ? [
        `the vouch ${whole.vouch.id} for this pipeline no longer holds: a program's contents changed`,
      ]
      : []),
    ...standings.flatMap((s, i) => [
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
  const why = [...reasons, ...voided].join("; ");

  if (!policy.canAsk) {
    const reason = `not run: ${why}, and nobody can be asked in a one-shot run` +
      (policy.approvals ? "; the approval policy file does not allow it" : "");
    policy.person.notice(screenText`declined a run: ${pipelineText(prepared.stages)} (${why})`);
    return await refused(policy.asker, reason, "declined");
  }

  let answer: RunAnswer;
  try {
    answer = await policy.person.approveRun({
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
      confinement: confinement.confined
        ? { confined: true, detail: describeBox(confinement.box) }
        : { confined: false, why: confinement.why },
    });
  } catch (e) {
    return await refused("person", `not run: the person could not be asked (${String(e)})`);
  }

  if (answer.answer === "refuse") {
    const reason = answer.reason?.trim()
      ? `the person refused: ${answer.reason.trim()}`
      : "the person refused to run it";
    return await refused("person", reason);
  }
  if (answer.answer === "vouch") {
    const v = await policy.vouches.add(vouchToStore(prepared, answer.prefixArgs));
    return await allowed("person", "vouched and ran", true, describeVouch(v));
  }
  // Run once: the output is trusted only if the command was vouched and no program is untrusted.
  return await allowed(
    "person",
    answer.unconfined && confinement.confined ? "ran once, unconfined" : "ran once",
    allVouched && !untrusted,
    undefined,
    answer.unconfined === true,
  );
}

// ---- carrying it out ----

/** A run's output reference as the tool names it: metadata, never the bytes. */
export interface OutputRef {
  id: number;
  size: number;
  lines: number;
  label: Label;
}

/**
 * What became of a run, for the tool to render. Only `ran` started anything; every other
 * outcome ran nothing, and the one that failed to start says which stage, as the planner typed
 * it (the resolved path may be an untrusted name behind a link).
 */
export type RunOutcome =
  /** The request or the configured confinement cannot run; nobody was asked. */
  | { outcome: "invalid"; reason: string }
  /** Refused or declined (by rule, the policy file or the person). */
  | { outcome: "refused"; reason: string }
  /** Allowed, but the stdin reference's bytes could not be read. */
  | { outcome: "stdin unreadable"; reason: string }
  | {
    outcome: "not started";
    /** The stage that failed (0-based) and its program as typed, when the worker named one. */
    stage: { index: number; typed: string } | null;
    /** The kind of failure (`NotFound`, `PermissionDenied`, `NotCapable`, …). */
    cause: string;
  }
  | {
    outcome: "ran";
    /** Each stage's program as the planner typed it. */
    typed: string[];
    vouched: boolean;
    /** Run inside the configured sandbox. */
    confined: boolean;
    /** Exit status, duration, byte counts, cut or timed out: metadata the planner is shown. */
    status: string[];
    ref: OutputRef;
    /** The label the output carries. */
    label: Label;
    /** A trusted output's capped text, which the planner is shown; null otherwise. */
    shown: { text: string; omitted: number } | null;
  };

const spawners = new WeakMap<Policy, Spawner>();

/** The effect worker as the sandbox probe's spawner: one per session, so the probe runs once. */
function workerSpawner(policy: Policy): Spawner {
  let spawner = spawners.get(policy);
  if (!spawner) {
    spawner = async (request) => {
      const r = await policy.worker.call({ op: "spawn", request });
      return r.ok ? r : { ok: false, error: `${r.error.name}: ${r.error.message}` };
    };
    spawners.set(policy, spawner);
  }
  return spawner;
}

/**
 * The workspace as it is now, within the settings' bounds; with `since` (after a run, its start)
 * the entries changed since come back past the first bound. A snapshot that failed knows nothing.
 */
async function snapshotWorkspace(
  policy: Policy,
  settings: Settings,
  since?: number,
): Promise<Snapshot> {
  const { snapshotEntries, snapshotChanges, snapshotMarks } = settings.limits;
  const taken = await policy.worker.call({
    op: "snapshot",
    root: policy.workspace.root,
    skip: [...policy.workspace.protectedDirs],
    maxEntries: snapshotEntries,
    maxChanges: snapshotChanges,
    maxMarks: snapshotMarks,
    ...(since !== undefined ? { since: Math.floor(since / 1000) * 1000 } : {}),
  });
  return taken.ok ? unpackSnapshot(taken.value) : UNKNOWN_SNAPSHOT;
}

/**
 * Files a run created or changed carry its label (design.md §13): `T` only when the whole command
 * was vouched, every stdin was `T` and the planner context is `T`; recorded, and audited when
 * anything changed.
 */
async function recordChanges(
  policy: Policy,
  changes: RunChanges,
  integrity: Integrity,
  command: string,
): Promise<void> {
  const { created, changed, unsure, removed, blind, complete } = changes;
  const touched = created.length + changed.length + unsure.length + removed.length;
  if (touched === 0 && blind.length === 0 && complete) return;
  await recordRunChanges(policy, changes, integrity);
  await policy.record({
    tool: "run",
    routing: { pipeline: command },
    labels: { files: label(integrity, "pub") },
    decision: "files changed by the run",
    by: "rule",
    reason: `${created.length} created, ${changed.length + unsure.length} changed, ` +
      `${removed.length} removed${complete ? "" : " (snapshot partial)"}` +
      (blind.length ? `, ${blind.length} folders not seen into` : ""),
  });
}

/**
 * How this session's run stages are confined (design.md §13): planned once a session (PATH
 * looked up, bwrap probed), then asked by each run and by the session at its start, which tells
 * the person when runs will not be confined.
 */
export function sessionConfinement(
  policy: Policy,
  settings: Settings,
): Promise<Result<ConfinementPlan>> {
  // Planned once a session for each configuration: finding bwrap and cat on PATH and probing
  // bwrap need not be done again at every run.
  const key = JSON.stringify([settings.sandbox, settings.runWritable, settings.runNetwork]);
  let known = plans.get(policy);
  if (!known) plans.set(policy, known = new Map());
  let plan = known.get(key);
  if (!plan) {
    const hide = policy.workspace.protectedDirs;
    plan = planConfinement(
      settings,
      { workspace: policy.workspace.root, scratch: policy.scratch, hide },
      workerSpawner(policy),
    );
    known.set(key, plan);
  }
  return plan;
}

const plans = new WeakMap<Policy, Map<string, Promise<Result<ConfinementPlan>>>>();

/**
 * The planner's reason when the configured confinement cannot stand: `run.sandbox: "bwrap"` and
 * bwrap cannot confine, or bwrap cannot hide what it must (in `auto` too).
 */
const BWRAP_REFUSED =
  "bwrap cannot confine commands here; nothing was run (the person was told why)";

/**
 * A whole `run`: prepares it, plans the sandbox, decides (asking the person when §8 says so),
 * reads the stdin, has the effect worker spawn the pipeline and keeps the output as a
 * reference. Every audit entry of the run is written here or in what it calls.
 */
export async function carryOutRun(
  policy: Policy,
  settings: Settings,
  input: RunInput,
): Promise<RunOutcome> {
  const prepared = await prepareRun(policy, settings, input);
  if (!prepared.ok) return { outcome: "invalid", reason: prepared.error };
  const run = prepared.value;

  // A configured wall that cannot stand refuses the run before the person is bothered.
  const plan = await sessionConfinement(policy, settings);
  if (!plan.ok) {
    // Why bwrap fails can quote bwrap itself and real paths: the person's to read, not the
    // planner's (design.md §3); the planner gets the fact in our words.
    policy.person.notice(plan.error);
    return { outcome: "invalid", reason: BWRAP_REFUSED };
  }

  const decision = await decideRun(policy, run, plan.value);
  if (!decision.run) return { outcome: "refused", reason: decision.reason };
  const confined = plan.value.confined && !decision.unconfined ? plan.value : null;
  // Found again for each run: the host's sockets of now (sandbox.ts).
  const wrapped = confined ? await stageWrapper(confined) : null;
  if (wrapped && !wrapped.ok) {
    policy.person.notice(wrapped.error);
    await policy.record({
      tool: "run",
      routing: { pipeline: displayPipeline(run.stages) },
      labels: {},
      decision: "failed to start",
      by: "rule",
      reason: wrapped.error,
    });
    return { outcome: "invalid", reason: BWRAP_REFUSED };
  }
  const wrapper = wrapped?.value ?? null;

  let stdin: Uint8Array | null = null;
  if (run.stdin) {
    const bytes = await stdinBytes(policy, run.stdin.ref);
    if (!bytes.ok) return { outcome: "stdin unreadable", reason: bytes.error };
    stdin = bytes.value;
  }

  const command = displayPipeline(run.stages);
  // Unconfined, the run gets a cgroup folder of its own where one can be made (leftovers.ts).
  const cgroup = confined ? null : (await runCgroup(policy, workerSpawner(policy))).cgroup;
  // What the stages may write is found by comparing the workspace before and after (§13). The
  // snapshot before also closes the watch on a previous unconfined run's leftovers, so it keeps
  // what changed since that run even past its bound.
  const before = await snapshotWorkspace(policy, settings, leftoverWatchSince(policy));
  await closeLeftoverWatch(policy, before);
  const startMs = await runStart(before);
  // The person who approved the command sees it print, whatever the planner is shown (§15).
  const watching = personWatch(policy, decision.by === "person");
  const spawned = await policy.worker.call({
    op: "spawn",
    request: {
      stages: run.stages.map((s) => ({ program: s.resolved, args: [...s.injected, ...s.args] })),
      stdin,
      cwd: policy.workspace.root,
      env: childEnv(policy.scratch),
      timeoutMs: run.timeoutMs,
      maxOutputBytes: settings.limits.refOutputBytes,
      ...(wrapper ? { wrapper } : {}),
      ...(confined?.wrapperGroup ? { wrapperGroup: confined.wrapperGroup } : {}),
      ...(watching ? { streamBytes: watching.streamBytes } : {}),
      ...(cgroup ? { cgroup } : {}),
    },
  }, watching?.onProgress);
  // Files carry the run's label (§13), whether it ran or a later stage could not start.
  const filesLabel = policy.contextTainted ? "U" : decision.outputLabel.integrity;
  const afterBegun = Date.now();
  const after = await snapshotWorkspace(policy, settings, startMs);
  const changes = compareSnapshots(before, after, startMs);
  await recordChanges(policy, changes, filesLabel, command);
  // Unconfined, and not every process it started known to be gone: the watch stands.
  if (!confined && !(spawned.ok && spawned.value.cgroupEnded === true)) {
    openLeftoverWatch(policy, {
      since: startMs,
      integrity: filesLabel,
      after,
      afterBegun,
      command,
    });
  }
  if (!spawned.ok) {
    const { name, message, stage } = spawned.error;
    await policy.record({
      tool: "run",
      routing: { pipeline: command },
      labels: {},
      decision: "failed to start",
      by: "rule",
      reason: `${name}: ${message}`,
    });
    const failed = stage !== undefined ? run.stages[stage] : undefined;
    return {
      outcome: "not started",
      stage: failed ? { index: stage!, typed: failed.typed } : null,
      cause: name,
    };
  }
  const result = spawned.value;
  watching?.end(result);
  const kept = await keepOutput(
    policy,
    settings,
    result,
    decision.outputLabel,
    command,
    "run",
    run.stdin?.ref ?? null,
  );
  const { ref } = kept;
  const filesLine = changesLine(changes);
  return {
    outcome: "ran",
    typed: run.stages.map((s) => s.typed),
    vouched: decision.vouched,
    confined: wrapper !== null,
    status: [
      ...statusLines(result, run.timeoutMs, settings.limits.refOutputBytes, kept),
      ...(filesLine ? [filesLine] : []),
    ],
    ref: { id: ref.id, size: ref.size ?? 0, lines: ref.lines ?? 0, label: ref.label },
    label: decision.outputLabel,
    shown: kept.shown,
  };
}

/**
 * The commands that run without asking, one short line each, for the planner's system prompt
 * (design.md §15): stored vouches and the policy file's `vouch` and `run` entries, so it does not
 * spend calls finding out. A policy file entry is named as the person wrote it. A stored vouch
 * knows its program only by its real path: a program on PATH is named by its file name, a
 * workspace program by its path only where that name may be shown (§3) — the real file behind a
 * trusted link may lie in an untrusted folder, whose names are untrusted text — and a vouch with
 * a name that may not be shown is left out.
 */
export async function commandsRunUnasked(policy: Policy): Promise<string[]> {
  const root = policy.workspace.root + "/";
  const name = (program: string): string | null => {
    if (!program.startsWith(root)) return program.split("/").at(-1)!;
    const rel = program.slice(root.length);
    return pathNameShown(policy, rel) ? `./${rel}` : null;
  };
  const more = (match: string) => match === "prefix" ? " …" : "";
  const lines: string[] = [];
  for (const v of await policy.vouches.list()) {
    const stages = vouchedCommands(v).map((s) => ({ name: name(s.program), args: s.args }));
    if (stages.some((s) => s.name === null)) continue;
    const argv = stages.map((s) => formatArgv([s.name!, ...s.args])).join(" | ");
    lines.push(
      v.match === "pipeline"
        ? `${argv} (exactly, as one pipeline)`
        : `${argv}${more(v.match)} (vouched: output shown to you)`,
    );
  }
  for (const r of policy.commandRules.vouch) {
    lines.push(
      `${formatArgv([r.written, ...r.args])}${more(r.match)} (vouched: output shown to you)`,
    );
  }
  for (const r of policy.commandRules.run) {
    lines.push(`${formatArgv([r.written, ...r.args])}${more(r.match)} (output stays a reference)`);
  }
  return lines;
}
