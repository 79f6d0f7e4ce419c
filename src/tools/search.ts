/**
 * search (docs/tools.md#search): a literal substring over workspace files. The policy layer walks,
 * has the effect workers search the files in place, and labels the result (policy/search.ts): it is
 * shown only when every file it touches (and every name in it) is trusted; otherwise the whole
 * result becomes one reference and the planner is shown counts. The policy layer gives back the
 * findings and their label; this prints them (`util/search_text.ts`).
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import { globField, pathField, typeError } from "./fs_common.ts";
import { printSearch, searchNotes } from "../util/search_text.ts";
import type { SearchCounts } from "../policy/api.ts";
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

/** For the person: what was looked for and how much was found. */
function found(counts: SearchCounts, args: { pattern: string }): string {
  return `searched for ${formatArgv([args.pattern])}: ${plural(counts.lines, "matching line")} in ${
    plural(counts.matchedFiles, "file")
  }${counts.truncated ? " (truncated)" : ""}`;
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
    const result = await ctx.decide.search({
      directory: args.directory,
      include: args.include,
      pattern: args.pattern,
      limits,
    });
    switch (result.kind) {
      case "error":
        return failure(result.message);
      case "shown":
        return shown(
          printSearch(result.found, args, limits),
          result.label,
          found(result.found, args),
        );
      case "kept":
        return shown(
          [
            `the result touches files nobody vouched for, so it is quarantined as ref:${result.ref}; ` +
            `pass it to spawn_processor to work with it`,
            ...searchNotes(result.counts, args, limits),
          ].join("\n"),
          result.label,
          `${found(result.counts, args)}, kept as ref:${result.ref}, not shown to the planner`,
        );
    }
  },
});
