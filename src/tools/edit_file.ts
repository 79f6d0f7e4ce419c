/**
 * edit_file (docs/tools.md#edit_file): replace an exact passage, matched byte for byte, in a
 * trusted file. Whether the edit may be made (a trusted file, old_text found exactly once unless
 * replace_all) is the policy layer's decision; the tool validates, asks and renders.
 */
import { z } from "zod";
import { defineTool, shown } from "./tool.ts";
import { exactlyOneTarget, pathField, refField, typeError } from "./fs_common.ts";
import { plural } from "../util/plural.ts";
import { renderRefusal } from "./write_file.ts";
import { escapeForScreen } from "../util/escape.ts";

const routing = z.strictObject({
  path: pathField.optional(),
  path_ref: refField.optional(),
});
const content = z.strictObject({
  old_text: z.string({ error: typeError("old_text", "a string") }).min(1, "old_text is empty")
    .describe("the exact text to replace"),
  new_text: z.string({ error: typeError("new_text", "a string") }).describe(
    "what goes in its place",
  ),
});
const modifiers = z.strictObject({
  replace_all: z.boolean({ error: "replace_all must be true or false" }).optional().describe(
    "replace every occurrence instead of requiring exactly one",
  ),
});

/** Exactly one target, and an edit that changes something. */
function refine(
  v: { path?: string; path_ref?: string; old_text: string; new_text: string },
  ctx: z.RefinementCtx,
): void {
  exactlyOneTarget(v, ctx);
  if (v.old_text === v.new_text) {
    ctx.addIssue({
      code: "custom",
      message: "new_text is the same as old_text; nothing to change",
    });
  }
}

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace old_text (exact, byte for byte) with new_text in a trusted file; it must occur " +
    "exactly once unless replace_all. The person approves the diff.",
  routing,
  content,
  modifiers,
  refine,
  async handler(args, ctx) {
    const done = await ctx.decide.editFile(args);
    if (done.status !== "edited") return renderRefusal(done);
    return shown(
      `edited ${done.shownAs}: replaced ${plural(done.replaced, "occurrence")}`,
      done.label,
      `edited ${escapeForScreen(done.shownAs)}, ${plural(done.replaced, "replacement")}`,
    );
  },
});
