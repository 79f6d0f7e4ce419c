/**
 * What the five filesystem tools share: the schema pieces for `path`/`path_ref` and the rule
 * that exactly one is given. How names and empty results are worded is `util/listing_text.ts`;
 * routing itself is the policy layer's (`routeFile` in policy/routing.ts, the tools' port
 * `route`).
 */
import { z } from "zod";
import { oneTarget } from "../policy/api.ts";

/** A type error that says "required" when the field is missing and "must be …" otherwise. */
export function typeError(field: string, what: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? `${field} is required (${what})` : `${field} must be ${what}`;
}

export const pathField = z.string({ error: "path must be a string" }).max(4096).describe(
  "workspace-relative path",
);
export const refField = z.string({ error: "path_ref must be a string such as ref:2" }).max(64)
  .describe("a reference to a file, e.g. ref:2");
export const globField = z.string({ error: "a glob must be a string" }).max(1024);

/** "path or path_ref, exactly one" ({@link oneTarget}) as a schema rule. */
export function exactlyOneTarget(
  value: { path?: string; path_ref?: string },
  ctx: z.RefinementCtx,
): void {
  const problem = oneTarget(value.path, value.path_ref);
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
}
