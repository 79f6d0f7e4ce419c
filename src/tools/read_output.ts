/**
 * read_output (tools.md): asks the person to show the planner what a command printed. It works
 * only for a run's output — a quarantined file is not readable this way — and what comes back
 * is the person's assertion about those bytes (the policy layer decides and records it).
 */
import { z } from "zod";
import { defineTool, failure, shown, type ToolContext, type ToolOutput } from "./tool.ts";
import { formatLabel } from "../util/label.ts";
import { plural } from "../util/plural.ts";

const routing = z.strictObject({
  ref: z.string({ error: "ref must be a reference such as ref:0" })
    .describe("the reference a run handed back, e.g. ref:3"),
});
const content = z.strictObject({});

async function handler(args: { ref: string }, ctx: ToolContext): Promise<ToolOutput> {
  const decision = await ctx.decide.readOutput(args.ref, ctx.settings);
  if (!decision.shown) return failure(decision.reason);
  const { ref } = decision;
  const notes = [
    `output of ref:${ref.id}, shown ${
      decision.by === "person" ? "with the person's agreement" : "by standing rule"
    } ${formatLabel(decision.label)}; ${plural(ref.size ?? 0, "byte")}, ${
      plural(ref.lines ?? 0, "line")
    }`,
  ];
  if (decision.omitted) {
    notes.push(`${plural(decision.omitted, "character")} left out in the middle`);
  }
  if (!decision.utf8) notes.push("not valid UTF-8 (invalid bytes read as U+FFFD)");
  return shown(
    `${notes.join("; ")}\n---\n${decision.text === "" ? "(no output)" : decision.text}`,
    decision.label,
  );
}

export const readOutputTool = defineTool({
  name: "read_output",
  description: "Ask the person to show you what a run printed (only for a run's output reference).",
  routing,
  content,
  handler,
});
