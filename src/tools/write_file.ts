/**
 * write_file (docs/tools.md#write_file): the whole contents of a text file, from the planner
 * (`contents`) or from a reference it was never shown (`contents_ref`). The person approves every
 * write, seeing the real destination and a diff (or the new file); the write is atomic and refused
 * if the file changed after approval, unless the person approves the new state too. All of that is
 * decided in the policy layer (`ctx.decide.writeFile`); the tool validates and renders.
 */
import { z } from "zod";
import { defineTool, failure, shown, type ToolOutput } from "./tool.ts";
import type { WriteRefusal } from "../policy/api.ts";
import { exactlyOneTarget, pathField, refField } from "./fs_common.ts";
import { plural } from "../util/plural.ts";
import { escapeForScreen } from "../util/escape.ts";

const routing = z.strictObject({
  path: pathField.optional().describe("workspace-relative destination"),
  path_ref: refField.optional().describe("a reference to the file to write"),
});
const content = z.strictObject({
  contents: z.string({ error: "contents must be a string" }).optional().describe(
    "the complete new contents",
  ),
  contents_ref: z.string({ error: "contents_ref must be a string such as ref:3" }).max(64)
    .optional().describe("a reference whose content becomes the whole file"),
});

/** Exactly one target, and exactly one of contents and contents_ref. */
function refine(
  v: { path?: string; path_ref?: string; contents?: string; contents_ref?: string },
  ctx: z.RefinementCtx,
): void {
  exactlyOneTarget(v, ctx);
  if (v.contents !== undefined && v.contents_ref !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: "give either contents or contents_ref, never both",
    });
  } else if (v.contents === undefined && v.contents_ref === undefined) {
    ctx.addIssue({ code: "custom", message: "give contents (or contents_ref for a reference)" });
  }
}

/** A write or an edit that did not happen, as the planner sees it (edit_file renders it too). */
export function renderRefusal(r: WriteRefusal): ToolOutput {
  if (r.status === "failed") return failure(r.error);
  const out = failure(
    `the write to ${r.shownAs} was refused${r.reason ? `: ${r.reason}` : ""}; nothing was written`,
  );
  return { ...out, label: r.label };
}

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Write a whole UTF-8 text file (path, or path_ref for a referenced file). Give contents, " +
    "or contents_ref to write a reference's content unseen. The person approves every write.",
  routing,
  content,
  refine,
  async handler(args, ctx) {
    const done = await ctx.decide.writeFile(args);
    if (done.status !== "written") return renderRefusal(done);
    return shown(
      `${done.created ? "created" : "overwrote"} ${done.shownAs}: ${plural(done.bytes, "byte")}, ${
        plural(done.lines, "line")
      }`,
      done.label,
      `${done.created ? "created" : "overwrote"} ${escapeForScreen(done.shownAs)}, ${
        plural(done.lines, "line")
      }`,
    );
  },
});
