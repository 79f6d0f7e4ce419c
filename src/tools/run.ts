/**
 * run (tools.md): a pipeline of programs, no shell. The person approves the exact argv of every
 * stage before anything runs, unless every stage is vouched for, the planner context is `T`
 * and the stdin is `pub` (policy/runs.ts decides). The output becomes a reference the planner
 * is not shown — `(U,priv)` — or, for a vouched command, `(T,priv)` text it is shown, capped.
 */
import { z } from "zod";
import {
  defineTool,
  failure,
  shown,
  type ToolContext,
  type ToolOutput,
  toolSchema,
} from "./tool.ts";
import { formatLabel, TRUSTED_PUBLIC } from "../util/label.ts";
import {
  decideRun,
  displayPipeline,
  MAX_STAGES,
  prepareRun,
  type RunInput,
  stdinBytes,
} from "../policy/runs.ts";
import { keepOutput, statusLines } from "../policy/outputs.ts";
import { childEnv } from "../policy/programs.ts";
import { planConfinement, type Spawner } from "../policy/sandbox.ts";
import type { Policy } from "../policy/core.ts";
import { escapeForScreen } from "../util/escape.ts";

const stage = z.strictObject({
  program: z.string({ error: "program must be a string" })
    .min(1, "program is empty; name a program such as git")
    .describe("a name looked up on PATH, or a workspace-relative path such as ./build.sh"),
  args: z.array(z.string({ error: "every argument must be a string" }), {
    error: "args must be a list of strings",
  }).optional().describe("what comes after the program (no argv[0]); each string is one argument"),
});

const routing = z.strictObject({
  pipeline: z.array(stage, { error: "pipeline must be a list of stages" })
    .min(1, 'pipeline is empty; give at least one stage, e.g. [{"program": "ls"}]')
    .max(MAX_STAGES, `a pipeline has at most ${MAX_STAGES} stages`)
    .describe("the stages; each stage's output feeds the next"),
});
const content = z.strictObject({
  stdin: z.string({ error: "stdin must be a reference such as ref:0" }).optional()
    .describe("a reference whose bytes become the first stage's input"),
  timeout_seconds: z.number({ error: "timeout_seconds must be a number" })
    .int("timeout_seconds must be a whole number")
    .min(1, "timeout_seconds must be at least 1")
    .max(600, "timeout_seconds is at most 600 (10 minutes)").optional()
    .describe("default 120, at most 600"),
});

const schema = toolSchema(routing, content);

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

async function handler(args: RunInput, ctx: ToolContext): Promise<ToolOutput> {
  const { policy, settings } = ctx;
  const prepared = await prepareRun(policy, settings, args);
  if (!prepared.ok) return failure(prepared.error);
  const run = prepared.value;

  // A configured wall that cannot stand refuses the run before the person is bothered.
  const hide = policy.workspace.protectedDirs;
  const wrapper = await planConfinement(
    settings,
    { workspace: policy.workspace.root, scratch: policy.scratch, hide },
    workerSpawner(policy),
  );
  if (!wrapper.ok) return failure(wrapper.error);

  const decision = await decideRun(policy, run);
  if (!decision.run) return failure(`${decision.reason}. Nothing was run.`);

  let stdin: Uint8Array | null = null;
  if (run.stdin) {
    const bytes = await stdinBytes(policy, run.stdin.ref);
    if (!bytes.ok) return failure(`stdin: ${bytes.error}. Nothing was run.`);
    stdin = bytes.value;
  }

  const spawned = await policy.worker.call({
    op: "spawn",
    request: {
      stages: run.stages.map((s) => ({ program: s.resolved, args: s.args })),
      stdin,
      cwd: policy.workspace.root,
      env: childEnv(policy.scratch),
      timeoutMs: run.timeoutMs,
      maxOutputBytes: settings.limits.refOutputBytes,
      ...(wrapper.value ? { wrapper: wrapper.value } : {}),
    },
  });
  if (!spawned.ok) {
    const { name, message, stage } = spawned.error;
    await policy.record({
      tool: "run",
      routing: { pipeline: displayPipeline(run.stages) },
      labels: {},
      decision: "failed to start",
      by: "rule",
      reason: `${name}: ${message}`,
    });
    // Named as the planner typed it: the resolved path may be an untrusted name behind a link.
    const which = stage !== undefined && run.stages[stage]
      ? `stage ${stage + 1} ('${escapeForScreen(run.stages[stage].typed)}')`
      : "a stage";
    const why = name === "NotCapable"
      ? "the configuration does not let Brave Bot start this program (run.programs)"
      : name === "NotFound"
      ? "the program or the interpreter its first line names was not found"
      : name === "PermissionDenied"
      ? "permission denied"
      : `it could not be started (${name})`;
    return failure(`the command could not start: ${which}: ${why}`);
  }
  const result = spawned.value;
  const command = displayPipeline(run.stages);
  const kept = await keepOutput(policy, settings, result, decision.outputLabel, command, "run");

  const names = run.stages.map((s) => escapeForScreen(s.typed)).join(" | ");
  const lines = [
    `ran${decision.vouched ? " (vouched)" : ""}: ${names}${wrapper.value ? " [confined]" : ""}`,
    ...statusLines(result, run.timeoutMs, settings.limits.refOutputBytes, kept),
  ];
  const ref = kept.ref;
  if (kept.shown) {
    lines.push(`also kept as ref:${ref.id} (${ref.size} bytes, ${ref.lines} lines)`);
    const omitted = kept.shown.omitted
      ? ` — ${kept.shown.omitted} characters left out in the middle`
      : "";
    lines.push(`--- output ${formatLabel(decision.outputLabel)}${omitted} ---`);
    lines.push(kept.shown.text === "" ? "(no output)" : kept.shown.text);
    return shown(lines.join("\n"), decision.outputLabel);
  }
  lines.push(
    `output: ref:${ref.id} — command output, ${
      formatLabel(ref.label)
    }, ${ref.size} bytes, ${ref.lines} lines; not shown to you.`,
    "Pass it to spawn_processor, write it with write_file contents_ref, or ask the person to show it with read_output.",
  );
  return shown(lines.join("\n"), TRUSTED_PUBLIC);
}

export const runTool = defineTool({
  name: "run",
  description:
    "Run a program (no shell: each argument is passed literally; pipe by adding stages). " +
    "The person approves the exact argv unless it is vouched for. Output comes back as a " +
    "reference unless the command is vouched for.",
  routing,
  content,
  schema,
  handler,
});
