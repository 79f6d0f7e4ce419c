/**
 * list_files (docs/tools.md#list_files): a recursive listing. A file name is content, so each entry
 * under a directory nobody vouched for comes back as its own reference (kind and parent only),
 * never as a name; entries in trusted directories come back as paths the planner can pass on. The
 * policy layer walks and decides which is which (policy/list_files.ts); this renders it.
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import type { EntryKind, ListedEntry, ListedParent } from "../policy/api.ts";
import { globField, pathField } from "./fs_common.ts";
import { bracesHint, displayPath, shownPath } from "../util/listing_text.ts";
import { plural } from "../util/plural.ts";
import { escapeForScreen } from "../util/escape.ts";

const routing = z.strictObject({
  directory: pathField.optional().describe("workspace-relative; . for the root (default)"),
  pattern: globField.optional().describe(
    "optional glob relative to directory: *, ?, ** (no braces)",
  ),
});
const content = z.strictObject({});

function suffix(kind: EntryKind): string {
  return kind === "directory" ? "/" : kind === "symlink" ? "@" : "";
}

/** Where a referenced entry lies, in words. */
function whereIs(base: string, parent: ListedParent): string {
  if (parent === null) return "a directory below";
  if ("ref" in parent) return `ref:${parent.ref}`;
  return `${shownPath(displayPath(base, parent.sub) || ".")}/`;
}

function line(base: string, e: ListedEntry): string {
  return e.shown
    ? shownPath(displayPath(base, e.sub), suffix(e.kind))
    : `ref:${e.ref} (${e.entryType} in ${whereIs(base, e.parent)})`;
}

export const listFilesTool = defineTool({
  name: "list_files",
  description:
    "List files under a directory, recursively (directory defaults to .). pattern: glob with " +
    "*, ?, **. Entries under directories nobody vouched for come back as references.",
  routing,
  content,
  async handler(args, ctx) {
    const limit = ctx.settings.limits.listEntries;
    const listing = await ctx.decide.listFiles({
      directory: args.directory,
      pattern: args.pattern,
      limit,
    });
    if (listing.kind === "error") return failure(listing.message);
    const lines = listing.entries.map((e) => line(listing.base, e));
    const refs = listing.references;

    const summary: string[] = [];
    if (lines.length === 0) {
      summary.push(args.pattern === undefined ? "no entries" : "no entries matched the pattern");
      const hint = bracesHint(args.pattern);
      if (hint) summary.push(hint);
    } else {
      let count = plural(lines.length, "entry", "entries");
      if (refs > 0) count += `; ${refs} as references (names nobody vouched for)`;
      summary.push(count);
    }
    if (listing.truncated) {
      summary.push(
        `truncated: only the first ${limit} entries are listed; narrow with directory or pattern`,
      );
    }
    if (listing.unreadable > 0) {
      summary.push(`${plural(listing.unreadable, "directory", "directories")} could not be read`);
    }
    const forPerson = [
      `listed ${escapeForScreen(listing.base || ".")}/`,
      plural(lines.length, "entry", "entries"),
      ...(refs > 0 ? [`${refs} as references`] : []),
      ...(listing.truncated ? ["truncated"] : []),
    ].join(", ");
    return shown(
      [...lines, ...summary.map((s) => `[${s}]`)].join("\n"),
      listing.label,
      forPerson,
    );
  },
});
