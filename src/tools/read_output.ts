/**
 * read_output (docs/tools.md#read_output): asks to be shown what a command printed. It works only
 * for a run's output — a quarantined file is not readable this way — and what comes back is an
 * assertion about those bytes (docs/contract.md §16.2, §16.3): the person's, or the approval policy
 * file's by a shape, in the shape's canonical form. The policy layer decides and records it; this
 * renders.
 */
import { z } from "zod";
import { defineTool, failure, shown, type ToolContext, type ToolOutput } from "./tool.ts";
import { formatLabel } from "../util/label.ts";
import { plural } from "../util/plural.ts";
import { assertedWords, type ShownAs } from "../policy/api.ts";

const routing = z.strictObject({
  ref: z.string({ error: "ref must be a reference such as ref:0" })
    .describe("the reference a run handed back, e.g. ref:3"),
});
const content = z.strictObject({});

/** How the text came to be shown, for the planner. */
function how(as: ShownAs): string {
  if (as.kind === "trusted") return "a vouched command's output, trusted already";
  const canonical = as.shape ? ", in its canonical form" : "";
  return `${assertedWords(as)}${canonical}${as.earlier ? " (earlier)" : ""}`;
}

async function handler(args: { ref: string }, ctx: ToolContext): Promise<ToolOutput> {
  const decision = await ctx.decide.readOutput(args.ref, ctx.settings);
  if (!decision.shown) return failure(decision.reason);
  const { ref, as } = decision;
  const notes = [
    `output of ref:${ref.id}, ${how(as)} ${formatLabel(decision.label)}; ${
      plural(ref.size ?? 0, "byte")
    }, ${plural(ref.lines ?? 0, "line")}`,
  ];
  if (decision.omitted) {
    notes.push(`${plural(decision.omitted, "character")} left out in the middle`);
  }
  if (!decision.utf8) notes.push("not valid UTF-8 (invalid bytes read as U+FFFD)");
  return {
    ...shown(
      `${notes.join("; ")}\n---\n${decision.text === "" ? "(no output)" : decision.text}`,
      decision.label,
      `showed ref:${ref.id} to the planner (${
        as.kind === "trusted" ? "a vouched command's output" : assertedWords(as)
      }), ${plural(ref.lines ?? 0, "line")}`,
    ),
    ...(as.kind === "asserted"
      ? { asserted: { ref: `ref:${ref.id}`, by: as.by, shape: as.shape } }
      : {}),
  };
}

export const readOutputTool = defineTool({
  name: "read_output",
  description:
    "Ask to be shown what a run printed, as the person's assertion (only a run's output reference).",
  routing,
  content,
  handler,
});
