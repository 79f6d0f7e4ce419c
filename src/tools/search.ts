/**
 * search (tools.md): a literal substring over workspace files. The policy layer walks, has
 * the effect workers search the files in place, and labels the result (policy/search.ts): it
 * is shown only when every file it touches (and every name in it) is trusted; otherwise the
 * whole result becomes one reference and the planner is shown counts. This prints it.
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import type { Limits, SearchCounts, SearchFound } from "../policy/api.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
import {
  bracesHint,
  displayPath,
  globField,
  pathField,
  regexHint,
  shownPath,
  typeError,
} from "./fs_common.ts";
import { plural } from "../util/plural.ts";
import { formatArgv } from "../util/escape.ts";

const routing = z.strictObject({
  directory: pathField.optional().describe("workspace-relative, defaults to ."),
  include: globField.optional().describe("optional glob limiting which files are searched"),
});
const content = z.strictObject({
  pattern: z.string({ error: typeError("pattern", "a string of literal text") }).min(
    1,
    "pattern is empty",
  )
    .max(1024, "pattern is longer than 1024 characters")
    .describe("literal text; not a regular expression"),
});

interface Args {
  include?: string;
  pattern: string;
}

function sizeText(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}

/** The bracketed lines after the matches: counts, truncation, and why nothing may have matched. */
function notes(counts: SearchCounts, args: Args, limits: Limits): string[] {
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
    const hint = regexHint(args.pattern);
    if (hint) out.push(hint);
    if (counts.files === 0) {
      const braces = bracesHint(args.include);
      if (braces) out.push(braces);
    }
  }
  return out.map((n) => `[${n}]`);
}

/** For the person: what was looked for and how much was found. */
function found(counts: SearchCounts, args: Args): string {
  return `searched for ${formatArgv([args.pattern])}: ${plural(counts.lines, "matching line")} in ${
    plural(counts.matchedFiles, "file")
  }${counts.truncated ? " (truncated)" : ""}`;
}

/** The whole result as text: one `path:line: text` per match, then the notes. */
function print(found: SearchFound, args: Args, limits: Limits): string {
  const body = found.matches.map((m) =>
    `${shownPath(displayPath(found.base, m.sub))}:${m.line}: ${m.text}`
  );
  return [...body, ...notes(found, args, limits)].join("\n");
}

export const searchTool = defineTool({
  name: "search",
  description:
    "Find a literal substring (not a regex) in workspace files; returns matching lines. " +
    "directory defaults to .; include: optional glob.",
  routing,
  content,
  async handler(args, ctx) {
    const limits = ctx.settings.limits;
    // The counts of a result shown whole, as printed for the planner (the person's summary).
    let printed: SearchCounts | null = null;
    const result = await ctx.decide.search({
      directory: args.directory,
      include: args.include,
      pattern: args.pattern,
      limits,
      print: (f) => print(printed = f, args, limits),
    });
    switch (result.kind) {
      case "error":
        return failure(result.message);
      case "shown":
        return shown(result.text, result.label, printed ? found(printed, args) : undefined);
      case "kept":
        return shown(
          [
            `the result touches files nobody vouched for, so it is quarantined as ref:${result.ref}; ` +
            `pass it to spawn_processor to work with it`,
            ...notes(result.counts, args, limits),
          ].join("\n"),
          TRUSTED_PUBLIC,
          `${found(result.counts, args)}, kept as ref:${result.ref}, not shown to the planner`,
        );
    }
  },
});
