/**
 * What the five filesystem tools share: the schema pieces for `path`/`path_ref` and the rule
 * that exactly one is given, how trusted names are shown, and the hints that stop a planner
 * from reading "nothing matched" as "it is not there". Routing itself is the policy layer's
 * (`routeFile` in policy/routing.ts, the tools' port `route`).
 */
import { z } from "zod";
import { oneTarget } from "../policy/api.ts";
import { hasBraces } from "../util/glob.ts";
import { escapeForScreen, hasHiddenCharacters } from "../util/escape.ts";

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

const REGEX_LOOK =
  /\\[dDwWsSbB.()[\]{}|*+?^$]|\.\*|\.\+|\[[^\]]*\]|\(\?|[^\\]\||^\^|[^\\]\$$|\w[*+]\)|\)[*+?]/;

/** Whether a literal pattern looks as if it was meant as a regular expression. */
export function looksLikeRegex(pattern: string): boolean {
  return REGEX_LOOK.test(pattern);
}

export function regexHint(pattern: string): string | null {
  return looksLikeRegex(pattern)
    ? "note: the pattern is matched as literal text and looks like a regular expression; " +
      "nothing matched it literally, which does not mean the text you meant is absent"
    : null;
}

export function bracesHint(glob: string | undefined): string | null {
  return glob !== undefined && hasBraces(glob)
    ? `note: braces are literal here, so '${glob}' was not expanded; ` +
      "give one pattern per call (e.g. *.ts, then *.tsx)"
    : null;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * A trusted name is shown as it is, unless it holds characters no path the planner sends may
 * hold (a newline could forge a listing line): then escaped, and marked so.
 */
export function shownPath(rel: string, suffix = ""): string {
  if (PRINTABLE_ASCII.test(rel)) return rel + suffix; // the usual case, decided at once
  return hasHiddenCharacters(rel)
    ? `${escapeForScreen(rel)}${suffix} (escaped: not addressable)`
    : rel + suffix;
}

/** `sub` (relative to the walked directory) as the planner should see it. */
export function displayPath(base: string, sub: string): string {
  return base === "" ? sub : sub === "" ? base : `${base}/${sub}`;
}
