/**
 * How a listing or a search words what it found for the planner: a trusted name shown so that
 * it cannot forge a line, a path below the directory the planner named, and the hints that stop
 * a planner from reading "nothing matched" as "it is not there". Plain text, decided by no rule:
 * the tools print with it, and so does the policy layer for the search result it keeps as a
 * reference (`util/search_text.ts`).
 */
import { hasBraces } from "./glob.ts";
import { escapeForScreen, hasHiddenCharacters } from "./escape.ts";

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
