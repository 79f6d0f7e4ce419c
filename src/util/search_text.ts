/**
 * A search's findings as text: one `path:line: text` per match, then the bracketed notes (counts,
 * truncation, why nothing may have matched). The search tool prints a result it is shown with it,
 * and the policy layer the result it keeps whole as one reference, so both are the same text.
 * Plain data and formatting only: what is shown or kept is the policy layer's (`policy/search.ts`).
 */
import { bracesHint, displayPath, regexHint, shownPath } from "./listing_text.ts";
import { plural } from "./plural.ts";

export interface SearchMatch {
  /** The file's path below the searched directory. */
  sub: string;
  line: number;
  text: string;
}

/** What a search counted: all a quarantined result lets the planner know. */
export interface SearchCounts {
  /** Matching lines kept (at most the limit). */
  lines: number;
  matchedFiles: number;
  searched: number;
  binary: number;
  oversized: number;
  unreadable: number;
  /** Whether the result stops at the line limit with more left. */
  truncated: boolean;
  /** Files the walk offered (after include), searched or not. */
  files: number;
}

export interface SearchFound extends SearchCounts {
  /** The searched directory as the planner spelled it, tidied: paths are shown below it. */
  base: string;
  matches: SearchMatch[];
}

/** What the planner asked for, as the notes speak of it. */
export interface SearchAsked {
  pattern: string;
  include?: string;
}

/** The limits the notes name. */
export interface SearchTextLimits {
  searchFileBytes: number;
  searchLines: number;
}

function sizeText(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}

/** The bracketed lines after the matches: counts, truncation, and why nothing may have matched. */
export function searchNotes(
  counts: SearchCounts,
  asked: SearchAsked,
  limits: SearchTextLimits,
): string[] {
  const said = [
    `${plural(counts.lines, "matching line")} in ${plural(counts.matchedFiles, "file")}`,
    `searched ${plural(counts.searched, "file")}`,
  ];
  if (counts.binary > 0) said.push(`skipped ${counts.binary} binary`);
  if (counts.oversized > 0) {
    said.push(`skipped ${counts.oversized} over ${sizeText(limits.searchFileBytes)}`);
  }
  if (counts.unreadable > 0) said.push(`${counts.unreadable} unreadable`);
  const out: string[] = [said.join("; ")];
  if (counts.truncated) {
    out.push(
      `truncated at ${limits.searchLines} matching lines: the result is incomplete; ` +
        "narrow it with directory or include",
    );
  }
  if (counts.lines === 0) {
    const hint = regexHint(asked.pattern);
    if (hint) out.push(hint);
    if (counts.files === 0) {
      const braces = bracesHint(asked.include);
      if (braces) out.push(braces);
    }
  }
  return out.map((n) => `[${n}]`);
}

/** The whole result as text: one `path:line: text` per match, then the notes. */
export function printSearch(
  found: SearchFound,
  asked: SearchAsked,
  limits: SearchTextLimits,
): string {
  const body = found.matches.map((m) =>
    `${shownPath(displayPath(found.base, m.sub))}:${m.line}: ${m.text}`
  );
  return [...body, ...searchNotes(found, asked, limits)].join("\n");
}
