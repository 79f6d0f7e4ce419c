/**
 * spawn_processor (tools.md, design.md §10): an isolated model call over references the planner
 * was not shown — no tools, no history, nothing to read but the references named. The reply's
 * remark (before the `=== document ===` line) reaches the person's screen only; the document
 * becomes a new `U` reference bound to the file the call is about, or to nothing. The planner
 * is given the reference and counts, never the bytes.
 */
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
import { refName } from "../policy/refs.ts";
import { approvePrivateEgress, processorInputs, storeAnswer } from "../policy/processors.ts";
import { DOCUMENT_MARKER, splitProcessorReply } from "../model/processor.ts";
import { ModelError } from "../model/types.ts";

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
    "instruction; its answer comes back as a new reference you are not shown, writable " +
    "(write_file contents_ref) only to the file the call is about.",
  routing,
  content,
  schema: toolSchema(routing, content),
  async handler(args, ctx) {
    const { policy, settings } = ctx;
    // Roughly what fits the processor's window, leaving room for the instruction and reply.
    const maxBytes = Math.floor(settings.contextWindow * 3 * 0.6);
    const inputs = await processorInputs(policy, args.reads, args.about, maxBytes);
    if (!inputs.ok) return failure(inputs.error);
    const egress = await approvePrivateEgress(
      policy,
      settings.processor,
      inputs.value.documents,
      args.instruction,
    );
    if (!egress.ok) return failure(egress.error);

    let reply: string;
    try {
      reply = await ctx.processor.complete(
        args.instruction,
        inputs.value.documents.map((d) => ({ name: d.name, text: d.text })),
        ctx.signal,
      );
    } catch (e) {
      // The endpoint's words may quote the documents: the person reads them, the planner is
      // told only the kind of failure (design.md §3).
      const error = e instanceof ModelError
        ? e
        : new ModelError("internal", {}, settings.processor.url, String(e));
      ctx.emit({ type: "notice", text: error.forPerson("processor") });
      return failure(`${error.forPlanner("processor")}; no answer was stored`);
    }
    const { remark, document } = splitProcessorReply(reply);
    // The remark is for the person's screen only: not stored, not returned to the planner.
    if (remark !== "") ctx.emit({ type: "remark", text: remark });
    if (document === null) {
      return failure(
        `the processor's reply had no '${DOCUMENT_MARKER}' line, so it names no document and ` +
          "nothing was stored (its reply was shown to the person); ask again, saying what document to produce",
      );
    }
    const ref = await storeAnswer(policy, document, inputs.value, settings.processor.url);
    const bound = inputs.value.aboutShown
      ? `bound to the file of ${inputs.value.aboutShown}: write it there with write_file ` +
        `{path_ref or path of that file, contents_ref: "${refName(ref)}"}`
      : "about no file: it can be written nowhere";
    return shown(
      `${refName(ref)}: processor answer, ${ref.lines} lines, ${ref.size} bytes, ${bound}`,
      TRUSTED_PUBLIC,
    );
  },
});
