/**
 * A `run`, first step (docs/tools.md#run; docs/contract.md §8, §13): whether the pipeline is well
 * formed, what each stage's program is (resolved, hashed, in an untrusted place or not), the git
 * guard's overrides, what the stdin reference holds and what label it carries, and the timeout.
 * Nothing runs and nobody is asked here: {@link prepareRun}'s answer is what the decision weighs
 * (run_evaluate.ts) and what is carried out (runs.ts).
 */
import type { Asking, FileLabels, References, WorkspaceFiles } from "./capabilities.ts";
import { describeKind, staleFileRef } from "./core.ts";
import { joinLabels, type Label } from "../util/label.ts";
import type { RefRecord } from "./refs.ts";
import { resolvePath } from "./paths.ts";
import { readFileRef, tooBigMessage } from "./reads.ts";
import { type ResolvedProgram, resolveProgram } from "./programs.ts";
import { guardGitStage } from "./git_guard.ts";
import { DEFAULT_LIMITS, type Settings } from "../state/settings.ts";
import { argvText, formatArgv, type ScreenText } from "../util/escape.ts";
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
 * (docs/tools.md#run), in seconds: the settings' defaults, so the tool's schema states the same
 * bounds. A session's own limits (a config may change them) are checked by {@link prepareRun}.
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
   * asked about every time, whatever vouches or entries say (docs/contract.md §8).
   */
  untrusted: boolean;
  /**
   * Brave Bot's own arguments, run right after the program and before `args` (the git
   * overrides of docs/contract.md §13); shown to the person, never part of what a vouch matches.
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
export function pipelineText(stages: readonly ShownStage[]): ScreenText {
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
async function programUntrusted(policy: FileLabels, rel: string | null): Promise<boolean> {
  if (rel === null) return false;
  const dir = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : ".";
  if (policy.nameLabel(dir).integrity === "U") return true;
  return (await policy.fileLabel(rel)).integrity === "U";
}

/** The stdin reference and the label of what it holds now. */
async function prepareStdin(
  policy: FileLabels & WorkspaceFiles & References,
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
  policy: FileLabels & Asking & WorkspaceFiles & References,
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
export async function stdinBytes(
  policy: FileLabels & WorkspaceFiles & References,
  ref: RefRecord,
): Promise<Result<Uint8Array>> {
  if (ref.kind !== "file") {
    if (ref.size !== undefined && ref.size > MAX_STDIN_BYTES) {
      return err(tooBigMessage(`ref:${ref.id}`, { size: ref.size, grew: false }, MAX_STDIN_BYTES));
    }
    return ok(await policy.refs.bytes(ref));
  }
  const read = await readFileRef(policy, ref, MAX_STDIN_BYTES);
  return read.ok ? ok(read.value.bytes) : read;
}
