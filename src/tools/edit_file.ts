/**
 * edit_file (tools.md): replace an exact passage, matched byte for byte, in a trusted file.
 * Locating a passage is a comparison, and a comparison is a decision, so a file nobody vouched
 * for is refused before its bytes are compared with anything. The edit refuses rather than
 * guesses: zero or several occurrences (without replace_all) say which.
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import { joinLabels, TRUSTED_PUBLIC } from "../util/label.ts";
import { decodeText, labelOfBytes } from "../policy/reads.ts";
import {
  exactlyOneTarget,
  pathField,
  plural,
  refField,
  routeDestination,
  typeError,
} from "./fs_common.ts";
import { approveAndWrite } from "./write_file.ts";

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
  replace_all: z.boolean({ error: "replace_all must be true or false" }).optional().describe(
    "replace every occurrence instead of requiring exactly one",
  ),
});
const schema = toolSchema(routing, content).superRefine((v, ctx) => {
  exactlyOneTarget(v, ctx);
  if (v.old_text === v.new_text) {
    ctx.addIssue({
      code: "custom",
      message: "new_text is the same as old_text; nothing to change",
    });
  }
});

/** Offsets of every occurrence of `needle`, non-overlapping, left to right. */
export function occurrences(hay: Uint8Array, needle: Uint8Array): number[] {
  const buf = Buffer.from(hay.buffer, hay.byteOffset, hay.byteLength);
  const out: number[] = [];
  for (let at = buf.indexOf(needle); at !== -1; at = buf.indexOf(needle, at + needle.length)) {
    out.push(at);
  }
  return out;
}

function splice(hay: Uint8Array, at: number[], oldLen: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(hay.length + at.length * (insert.length - oldLen));
  let from = 0;
  let to = 0;
  for (const a of at) {
    out.set(hay.subarray(from, a), to);
    to += a - from;
    out.set(insert, to);
    to += insert.length;
    from = a + oldLen;
  }
  out.set(hay.subarray(from), to);
  return out;
}

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace old_text (exact, byte for byte) with new_text in a trusted file; it must occur " +
    "exactly once unless replace_all. The person approves the diff.",
  routing,
  content,
  schema,
  async handler(args, ctx) {
    const policy = ctx.policy;
    const target = await routeDestination(policy, args.path, args.path_ref);
    if (!target.ok) return failure(target.error);
    const { routed, shownAs } = target.value;
    if (!routed.path.exists) {
      return failure(
        `${shownAs} does not exist; edit_file changes an existing file (write_file creates one)`,
      );
    }
    const rel = routed.path.rel;
    const oldBytes = new TextEncoder().encode(args.old_text);
    const newBytes = new TextEncoder().encode(args.new_text);
    let replaced = 0;
    const done = await approveAndWrite(policy, {
      tool: "edit_file",
      rel,
      abs: routed.path.abs,
      viaRef: routed.viaRef !== null,
      shownAs,
      async produce(current) {
        if (current === null) return `${shownAs} no longer exists`;
        const fileLabel = await labelOfBytes(policy, rel, current);
        if (fileLabel.integrity !== "T") {
          await policy.record({
            tool: "edit_file",
            routing: { path: rel, via_ref: routed.viaRef !== null },
            labels: { file: fileLabel },
            decision: "refused: file not trusted",
            by: "rule",
          });
          return `edit_file requires a trusted file and ${shownAs} is not trusted; to change a ` +
            "file you may not read, use spawn_processor and then write_file with contents_ref";
        }
        if (decodeText(current) === null) {
          return `${shownAs} is not UTF-8 text; it cannot be edited`;
        }
        const at = occurrences(current, oldBytes);
        if (at.length === 0) {
          return `old_text does not occur in ${shownAs} (matched byte for byte: check whitespace and indentation); nothing was changed`;
        }
        if (at.length > 1 && !args.replace_all) {
          return `old_text occurs ${at.length} times in ${shownAs}; include more surrounding text to make it unique, or set replace_all; nothing was changed`;
        }
        replaced = at.length;
        // The unchanged bytes keep the file's label; new_text carries the planner context's.
        return {
          bytes: splice(current, at, oldBytes.length, newBytes),
          label: joinLabels(fileLabel, policy.contextLabel),
        };
      },
    });
    if ("content" in done) return done;
    return shown(
      `edited ${shownAs}: replaced ${plural(replaced, "occurrence")}`,
      TRUSTED_PUBLIC,
    );
  },
});
