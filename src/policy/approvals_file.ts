/**
 * The approval policy file of docs/cli.md#the-approval-policy-file: the person's decisions made in
 * advance for one run. Validated strictly — an unknown field or a wrong type is an error naming it,
 * before anything runs. It can pre-approve writes by glob and commands, never a file vouch.
 */
import { z } from "zod";
import { compileGlob } from "../util/glob.ts";
import { normaliseRuleDir } from "./trust_map.ts";
import { err, type Result } from "../util/result.ts";
import { parseJsonFile } from "../util/json_schema.ts";
import { type Shape, SHAPES } from "./shapes.ts";

/** `{argv}` or `{prefix}`: one strict object, so an unknown or mistyped field is named. */
const commandRule = z
  .strictObject({
    argv: z.array(z.string()).min(1).optional(),
    prefix: z.array(z.string()).min(1).optional(),
    /** Run outside the bwrap confinement (docs/contract.md §13.4); never part of a vouch (§8.2). */
    unconfined: z.boolean().optional(),
  })
  .refine((r) => (r.argv === undefined) !== (r.prefix === undefined), {
    message: 'give exactly one of "argv" (the exact command) or "prefix" (program and first args)',
  })
  .transform((r): ({ argv: string[] } | { prefix: string[] }) & { unconfined?: boolean } => ({
    ...(r.argv !== undefined ? { argv: r.argv } : { prefix: r.prefix! }),
    ...(r.unconfined ? { unconfined: true } : {}),
  }));

/** A trust-map folder as `bravebot trust add` takes it; a bad one is named, never dropped. */
const ruleDir = z.string().superRefine((dir, ctx) => {
  const normal = normaliseRuleDir(dir);
  if (!normal.ok) ctx.addIssue({ code: "custom", message: normal.error });
});

/** A shape's name (docs/contract.md §16.3); an unknown one is named, with the shapes there are. */
const shapeName = z.any().superRefine((name, ctx) => {
  if (typeof name !== "string") {
    ctx.addIssue({ code: "custom", message: `give a shape: one of ${SHAPES.join(", ")}` });
  } else if (!(SHAPES as readonly string[]).includes(name)) {
    ctx.addIssue({
      code: "custom",
      message: `unknown shape '${name.slice(0, 40)}'; the shapes are ${SHAPES.join(", ")}`,
    });
  }
}).transform((name) => name as Shape);

/**
 * `readOutput` (docs/cli.md#readoutput): `false`, `true` (every run's output), or a list of
 * `{ "answer": SHAPE }` entries, each a fixed rule in shapes.ts: never a pattern the file writes.
 */
const readOutput = z.union([z.boolean(), z.array(z.strictObject({ answer: shapeName }))], {
  error: 'expected true, false or a list of shapes such as [{ "answer": "version" }]',
});

export const approvalsSchema = z.strictObject({
  trust: z.array(ruleDir).optional(),
  untrust: z.array(ruleDir).optional(),
  writes: z.array(z.string()).optional(),
  run: z.array(commandRule).optional(),
  vouch: z.array(commandRule).optional(),
  readOutput: readOutput.optional(),
  quarantinedRead: z.enum(["keep", "untrusted"]).optional(),
});

export type ApprovalsFile = z.output<typeof approvalsSchema>;
export type CommandRule = z.output<typeof commandRule>;

export function parseApprovals(text: string, source: string): Result<ApprovalsFile> {
  return parseJsonFile(text, approvalsSchema, source);
}

/** The shapes the file asserts run output by, in its order (empty: none). */
export function readOutputShapes(file: ApprovalsFile | null): Shape[] {
  const r = file?.readOutput;
  return Array.isArray(r) ? r.map((e) => e.answer) : [];
}

/**
 * What the person is warned of, once, when a file is loaded: `readOutput: true` shows the
 * planner every run's output — whatever those commands read — where shapes are the narrow choice.
 */
export function approvalsWarnings(file: ApprovalsFile): string[] {
  return file.readOutput === true
    ? [
      'the approval policy file sets "readOutput": true: every run\'s output, and whatever the ' +
      "commands read, is shown to the planner as trusted; a list of shapes " +
      '([{ "answer": "version" }], …) asserts only short facts',
    ]
    : [];
}

export async function loadApprovals(path: string): Promise<Result<ApprovalsFile>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    return err(`cannot read the approval policy file ${path}: ${(e as Error).message}`);
  }
  return parseApprovals(text, path);
}

/**
 * Whether the file pre-approves a write to this real workspace-relative destination. Globs are
 * anchored at the workspace root: `README.md` pre-approves that file, not every README.
 */
export function writeAllowed(file: ApprovalsFile, rel: string): boolean {
  return (file.writes ?? []).some((g) => compileGlob(g, { anchored: true }).matches(rel));
}
