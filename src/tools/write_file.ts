/**
 * write_file (tools.md): the whole contents of a text file, from the planner (`contents`) or
 * from a reference it was never shown (`contents_ref`). The person approves every write,
 * seeing the real destination and a diff (or the new file); the write is atomic and refused
 * if the file changed after approval, unless the person approves the new state too.
 */
import { z } from "zod";
import { defineTool, failure, shown, type ToolOutput, toolSchema } from "./tool.ts";
import { type Label, TRUSTED_PRIVATE, TRUSTED_PUBLIC } from "../util/label.ts";
import {
  approveWrite,
  commitWrite,
  contentFromRef,
  MAX_WRITE_BYTES,
  renderDiff,
  renderNewFile,
  type WriteTool,
} from "../policy/writes.ts";
import type { Policy } from "../policy/core.ts";
import type { Decider } from "../policy/audit.ts";
import { decodeText, readAtMost, tooBigMessage } from "../policy/reads.ts";
import { sha256 } from "../util/hash.ts";
import { pathField, plural, refField, routeDestination } from "./fs_common.ts";

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

const schema = toolSchema(routing, content).superRefine((v, ctx) => {
  if (v.path !== undefined && v.path_ref !== undefined) {
    ctx.addIssue({ code: "custom", message: "give either path or path_ref, not both" });
  } else if (v.path === undefined && v.path_ref === undefined) {
    ctx.addIssue({ code: "custom", message: "give path (or path_ref for a referenced file)" });
  }
  if (v.contents !== undefined && v.contents_ref !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: "give either contents or contents_ref, never both",
    });
  } else if (v.contents === undefined && v.contents_ref === undefined) {
    ctx.addIssue({ code: "custom", message: "give contents (or contents_ref for a reference)" });
  }
});

/** A refusal as the planner sees it; the person's own reason is their words, (T,priv). */
export function refused(shownAs: string, by: Decider, reason: string | undefined): ToolOutput {
  const out = failure(
    `the write to ${shownAs} was refused${reason ? `: ${reason}` : ""}; nothing was written`,
  );
  return by === "person" && reason ? { ...out, label: TRUSTED_PRIVATE } : out;
}

export interface PlannedWrite {
  tool: WriteTool;
  rel: string;
  abs: string;
  viaRef: boolean;
  shownAs: string;
  /** The new bytes, given the current ones (null: no file); an error string refuses. */
  produce(current: Uint8Array | null): Promise<{ bytes: Uint8Array; label: Label } | string>;
}

/**
 * Ask, then write, checked by hash: if the file changed between the approval and the write,
 * the person is asked once more about the new state; a second change refuses.
 */
export async function approveAndWrite(
  policy: Policy,
  plan: PlannedWrite,
): Promise<ToolOutput | { bytes: number; created: boolean }> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = await policy.worker.call({ op: "lstat", path: plan.abs });
    let current: Uint8Array | null = null;
    if (now.ok) {
      if (now.value.kind !== "file") return failure(`${plan.shownAs} is not a regular file`);
      // The file being replaced is read for its diff and hash, and bounded like the new content.
      const read = await readAtMost(policy, plan.abs, MAX_WRITE_BYTES, now.value.size);
      if (!read.ok) {
        return failure(
          read.tooBig
            ? `${tooBigMessage(plan.shownAs, read, MAX_WRITE_BYTES)}; nothing was written`
            : `${plan.shownAs} cannot be read (${read.error})`,
        );
      }
      current = read.bytes;
    } else if (now.error.name !== "NotFound") {
      return failure(`${plan.shownAs} cannot be examined (${now.error.name})`);
    }
    const produced = await plan.produce(current);
    if (typeof produced === "string") return failure(produced);
    const after = decodeText(produced.bytes);
    if (after === null) return failure("the new contents are not UTF-8 text");
    const before = current === null ? null : decodeText(current);
    const preview = current === null
      ? renderNewFile(plan.rel, after)
      : before === null
      ? `replaces a binary file of ${current.length} bytes with:\n${renderNewFile(plan.rel, after)}`
      : renderDiff(plan.rel, before, after);
    const decision = await approveWrite(policy, {
      tool: plan.tool,
      rel: plan.rel,
      viaRef: plan.viaRef,
      isNew: current === null,
      preview,
      label: produced.label,
    });
    if (!decision.approved) return refused(plan.shownAs, decision.by, decision.reason);
    const outcome = await commitWrite(
      policy,
      plan.tool,
      plan.rel,
      produced.bytes,
      current === null ? null : sha256(current),
      produced.label,
    );
    if (outcome.status === "written") {
      return { bytes: produced.bytes.length, created: outcome.created };
    }
    if (outcome.status === "failed") {
      // Only the error's name: its message may hold the real path behind a path_ref.
      return failure(`${plan.shownAs} could not be written (${outcome.name}); nothing changed`);
    }
    policy.person.notice(
      `${plan.tool} ${plan.rel}: ${outcome.message}; ${attempt === 0 ? "asking again" : "refused"}`,
    );
  }
  return failure(
    `${plan.shownAs} changed again after it was approved; nothing was written — try again`,
  );
}

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Write a whole UTF-8 text file (path, or path_ref for a referenced file). Give contents, " +
    "or contents_ref to write a reference's content unseen. The person approves every write.",
  routing,
  content,
  schema,
  async handler(args, ctx) {
    const policy = ctx.policy;
    const target = await routeDestination(policy, args.path, args.path_ref);
    if (!target.ok) return failure(target.error);
    const { routed, shownAs } = target.value;
    const rel = routed.path.rel;

    let source: { bytes: Uint8Array; label: Label };
    if (args.contents_ref !== undefined) {
      const found = policy.refs.lookup(args.contents_ref);
      if (!found.ok) return failure(found.error);
      const from = await contentFromRef(policy, found.value, rel);
      if (!from.ok) return failure(from.error);
      source = from.value;
    } else {
      // What the planner writes carries the planner context's label (design.md §3).
      source = { bytes: new TextEncoder().encode(args.contents!), label: policy.contextLabel };
    }
    const done = await approveAndWrite(policy, {
      tool: "write_file",
      rel,
      abs: routed.path.abs,
      viaRef: routed.viaRef !== null,
      shownAs,
      produce: () => Promise.resolve(source),
    });
    if ("content" in done) return done;
    const lines = new TextDecoder().decode(source.bytes).split("\n").length -
      (source.bytes.at(-1) === 0x0a ? 1 : 0);
    return shown(
      `${done.created ? "created" : "overwrote"} ${shownAs}: ${plural(done.bytes, "byte")}, ${
        plural(source.bytes.length === 0 ? 0 : lines, "line")
      }`,
      TRUSTED_PUBLIC,
    );
  },
});
