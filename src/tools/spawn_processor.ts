/**
 * spawn_processor (docs/tools.md#spawn_processor, docs/contract.md §10): an isolated model call
 * over references the planner was not shown — no tools, no history, nothing to read but the
 * references named. The reply's remark (before the `=== document ===` line) reaches the person's
 * screen only; the document becomes a new `U` reference bound to the file the call is about, or to
 * nothing. The planner is given the reference and counts, never the bytes.
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import { DOCUMENT_MARKER } from "../util/processor_reply.ts";
import { plural } from "../util/plural.ts";
import { escapeForScreen } from "../util/escape.ts";

const refString = z.string({ error: "a reference is a string such as ref:0" }).max(64);

const routing = z.strictObject({
  about: refString.nullable().optional().describe(
    "which of reads the answer is for (its file is the only place it may be written); " +
      "required when reads has more than one",
  ),
});
const content = z.strictObject({
  reads: z.array(refString, { error: 'reads must be a list of references such as ["ref:0"]' })
    .min(1, "reads needs at least one reference").max(16, "at most 16 references per call")
    .describe('references to give the processor, e.g. ["ref:0"]'),
  instruction: z.string({ error: "instruction must be a string" }).min(1, "instruction is empty")
    .max(20_000).describe("what to do with them and what document to produce"),
});

export const spawnProcessorTool = defineTool({
  name: "spawn_processor",
  description: "Give quarantined references to an isolated model (no tools, no memory) with an " +
    "instruction; its answer comes back as a new reference you are not shown: write it " +
    "(write_file contents_ref) only to the file the call is about, or show it to the person " +
    "with {{ref:N}} in your reply.",
  routing,
  content,
  async handler(args, ctx) {
    const outcome = await ctx.decide.spawnProcessor(
      { reads: args.reads, about: args.about, instruction: args.instruction },
      ctx.processor,
      ctx.settings,
      ctx.signal,
    );
    switch (outcome.kind) {
      case "refused":
        return failure(outcome.error);
      case "failed":
        ctx.emit({ type: "notice", text: outcome.forPerson });
        return failure(`${outcome.forPlanner}; no answer was stored`);
    }
    // The remark is for the person's screen only: not stored, not returned to the planner.
    if (outcome.remark !== "") ctx.emit({ type: "remark", text: outcome.remark });
    if (outcome.kind === "stored" && outcome.endingNote) {
      ctx.emit({ type: "notice", text: outcome.endingNote });
    }
    if (outcome.kind === "no_document") {
      return failure(
        `the processor's reply had no '${DOCUMENT_MARKER}' line, so it names no document and ` +
          "nothing was stored (its reply was shown to the person); ask again, saying what document to produce",
      );
    }
    const bound = outcome.aboutShown
      ? `bound to the file of ${outcome.aboutShown}: write it there with write_file ` +
        `{path_ref or path of that file, contents_ref: "${outcome.ref}"}`
      : "about no file: it can be written nowhere";
    return shown(
      `${outcome.ref}: processor answer, ${plural(outcome.lines, "line")}, ${
        plural(outcome.size, "byte")
      }, ${bound}`,
      outcome.label,
      `the processor answered: ${outcome.ref}, ${plural(outcome.lines, "line")}, ${
        outcome.aboutShown ? `for ${escapeForScreen(outcome.aboutShown)}` : "for no file"
      }, not shown to the planner`,
    );
  },
});
