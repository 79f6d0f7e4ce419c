/**
 * What the five filesystem tools share: routing a `path`/`path_ref` without ever echoing a
 * name the planner was not shown, the schema pieces for those fields, and the hints that stop
 * a planner from reading "nothing matched" as "it is not there".
 */
import { z } from "zod";
import type { Policy, Routed } from "../policy/core.ts";
import { refName } from "../policy/refs.ts";
import { hasBraces } from "../util/glob.ts";
import { checkPathSyntax } from "../policy/paths.ts";
import { checkDestination } from "../policy/writes.ts";
import { escapeForScreen, hasHiddenCharacters } from "../util/escape.ts";
import { ok, type Result } from "../util/result.ts";

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

export interface RoutedFile {
  routed: Routed;
  /** How the planner may be told about the target: its own path, or `ref:N`. */
  shownAs: string;
}

/**
 * Routes exactly one of path and path_ref through the policy layer (whose failures about a
 * reference name the reference, never the path behind it).
 */
export async function routeFile(
  policy: Policy,
  path: string | undefined,
  pathRef: string | undefined,
): Promise<Result<RoutedFile>> {
  const routed = await policy.route(path, pathRef);
  if (!routed.ok) return routed;
  // The planner is told its own spelling, never where a symbolic link led.
  const shownAs = routed.value.viaRef
    ? refName(routed.value.viaRef)
    : displayBase(path ?? ".") || ".";
  return ok({ routed: routed.value, shownAs });
}

/** Routes the destination of a write or an edit: the file, then the rules for a destination. */
export async function routeDestination(
  policy: Policy,
  path: string | undefined,
  pathRef: string | undefined,
): Promise<Result<RoutedFile>> {
  const target = await routeFile(policy, path, pathRef);
  if (!target.ok) return target;
  const dest = checkDestination(target.value.routed, target.value.shownAs);
  return dest.ok ? target : dest;
}

/** "path or path_ref, exactly one" as a schema rule with a clear message. */
export function exactlyOneTarget(
  value: { path?: string; path_ref?: string },
  ctx: z.RefinementCtx,
): void {
  if (value.path !== undefined && value.path_ref !== undefined) {
    ctx.addIssue({ code: "custom", message: "give either path or path_ref, not both" });
  } else if (value.path === undefined && value.path_ref === undefined) {
    ctx.addIssue({ code: "custom", message: "give path (or path_ref for a referenced file)" });
  }
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

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
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

/**
 * The planner's own path, tidied (`./a//b` → `a/b`, the root → ""): what results are shown
 * under, so a symbolic link's target — chosen by whoever made the link — is never revealed.
 */
export function displayBase(given: string): string {
  const syntax = checkPathSyntax(given);
  return syntax.ok ? syntax.value.join("/") : given;
}

/** `sub` (relative to the walked directory) as the planner should see it. */
export function displayPath(base: string, sub: string): string {
  return base === "" ? sub : sub === "" ? base : `${base}/${sub}`;
}
