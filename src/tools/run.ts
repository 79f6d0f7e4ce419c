/**
 * run (docs/tools.md#run): a pipeline of programs, no shell. The person approves the exact argv of
 * every stage before anything runs, unless every stage is vouched for, the planner context is `T`
 * and the stdin is `pub` (policy/runs.ts decides). The output becomes a reference the planner is
 * not shown — `(U,priv)` — or, for a vouched command, `(T,priv)` text it is shown, capped.
 */
import { z } from "zod";
import { defineTool, failure, shown, type ToolContext, type ToolOutput } from "./tool.ts";
import { formatLabel } from "../util/label.ts";
import { MAX_STAGES, RUN_TIMEOUT_SECONDS, type RunInput, type RunResult } from "../policy/api.ts";
import { escapeForScreen, formatArgv } from "../util/escape.ts";
import { plural } from "../util/plural.ts";

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
});

const modifiers = z.strictObject({
  timeout_seconds: z.number({ error: "timeout_seconds must be a number" })
    .int("timeout_seconds must be a whole number")
    .min(1, "timeout_seconds must be at least 1")
    .max(
      RUN_TIMEOUT_SECONDS.max,
      `timeout_seconds is at most ${RUN_TIMEOUT_SECONDS.max} (${
        RUN_TIMEOUT_SECONDS.max / 60
      } minutes)`,
    ).optional()
    .describe(`default ${RUN_TIMEOUT_SECONDS.default}, at most ${RUN_TIMEOUT_SECONDS.max}`),
});

/** Why a stage could not start, by the kind of failure the effect worker reported. */
function startFailure(cause: string): string {
  return cause === "NotCapable"
    ? "the configuration does not let Brave Bot start this program (run.programs)"
    : cause === "NotFound"
    ? "the program or the interpreter its first line names was not found"
    : cause === "PermissionDenied"
    ? "permission denied"
    : `it could not be started (${cause})`;
}

/** For the person: the command as the planner wrote it, how it ended and where its output is. */
function summary(input: RunInput, r: Extract<RunResult, { outcome: "ran" }>): string {
  const command = input.pipeline.map((s) => formatArgv([s.program, ...(s.args ?? [])]))
    .join(" | ");
  const e = r.ended;
  const ended = e.timedOut
    ? "timed out"
    : e.signal
    ? `killed by ${escapeForScreen(e.signal)}`
    : `exit ${e.code}`;
  const output = r.shown
    ? `${plural(r.ref.lines, "line")} shown to the planner, kept as ref:${r.ref.id}`
    : `kept as ref:${r.ref.id} (${plural(r.ref.lines, "line")}), not shown to the planner`;
  const ran = `ran${r.vouched ? " (vouched)" : ""} \`${command}\``;
  // A stop by the person is what they look for first: it leads.
  return e.stopped ? `${e.stopped}; ${ran}, ${output}` : `${ran} → ${ended}, ${output}`;
}

function render(r: RunResult, input: RunInput): ToolOutput {
  switch (r.outcome) {
    case "invalid":
      return failure(r.reason);
    case "refused":
      return failure(`${r.reason}. Nothing was run.`);
    case "stdin unreadable":
      return failure(`stdin: ${r.reason}. Nothing was run.`);
    case "not started": {
      const which = r.stage
        ? `stage ${r.stage.index + 1} ('${escapeForScreen(r.stage.typed)}')`
        : "a stage";
      return failure(`the command could not start: ${which}: ${startFailure(r.cause)}`);
    }
    case "ran":
      break;
  }
  const names = r.typed.map((t) => escapeForScreen(t)).join(" | ");
  const lines = [
    `ran${r.vouched ? " (vouched)" : ""}: ${names}${r.confined ? " [confined]" : ""}`,
    ...r.status,
  ];
  const { ref } = r;
  if (r.shown) {
    lines.push(
      `also kept as ref:${ref.id} (${plural(ref.size, "byte")}, ${plural(ref.lines, "line")})`,
    );
    const omitted = r.shown.omitted
      ? ` — ${plural(r.shown.omitted, "character")} left out in the middle`
      : "";
    lines.push(`--- output ${formatLabel(r.label)}${omitted} ---`);
    lines.push(r.shown.text === "" ? "(no output)" : r.shown.text);
    return shown(lines.join("\n"), r.resultLabel, summary(input, r));
  }
  lines.push(
    `output: ref:${ref.id} — command output, ${formatLabel(ref.label)}, ${
      plural(ref.size, "byte")
    }, ${plural(ref.lines, "line")}; not shown to you.`,
    "Pass it to spawn_processor, write it with write_file contents_ref, or ask the person to show it with read_output.",
  );
  return shown(lines.join("\n"), r.resultLabel, summary(input, r));
}

async function handler(args: RunInput, ctx: ToolContext): Promise<ToolOutput> {
  return render(await ctx.decide.run(args, ctx.settings), args);
}

export const runTool = defineTool({
  name: "run",
  description:
    "Run a program (no shell: each argument is passed literally; pipe by adding stages). " +
    "The person approves the exact argv unless it is vouched for. Output comes back as a " +
    "reference unless the command is vouched for.",
  routing,
  content,
  modifiers,
  handler,
});
