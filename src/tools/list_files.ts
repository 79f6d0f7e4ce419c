/**
 * list_files (tools.md): a recursive listing. A file name is content, so each entry under a
 * directory nobody vouched for comes back as its own reference (kind and parent only), never
 * as a name; entries in trusted directories come back as paths the planner can pass on.
 */
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import type { Policy } from "../policy/core.ts";
import { resolvePath } from "../policy/paths.ts";
import { isGitPath } from "../policy/git_dir.ts";
import { type Label, sameLabel, TRUSTED_PUBLIC } from "../util/label.ts";
import { pathNameLabel } from "../policy/reads.ts";
import type { RefRecord } from "../policy/refs.ts";
import { compileGlob } from "../util/glob.ts";
import {
  bracesHint,
  displayBase,
  displayPath,
  globField,
  pathField,
  plural,
  shownPath,
} from "./fs_common.ts";
import { walk, type WalkEntry } from "./walk.ts";

const routing = z.strictObject({
  directory: pathField.optional().describe("workspace-relative; . for the root (default)"),
  pattern: globField.optional().describe(
    "optional glob relative to directory: *, ?, ** (no braces)",
  ),
});
const content = z.strictObject({});
const schema = toolSchema(routing, content);

function relativeSub(dir: string, rel: string): string {
  return dir === "." ? rel : rel.slice(dir.length + 1);
}

function suffix(kind: WalkEntry["kind"]): string {
  return kind === "directory" ? "/" : kind === "symlink" ? "@" : "";
}

/** Finds an earlier reference for the same entry, so listing twice does not mint new names. */
function refIndex(policy: Policy): Map<string, RefRecord> {
  const index = new Map<string, RefRecord>();
  for (const r of policy.refs.all()) {
    if (r.kind === "file_name" && r.path !== undefined) {
      index.set(`${r.entryType}\0${r.path}`, r);
    }
  }
  return index;
}

export const listFilesTool = defineTool({
  name: "list_files",
  description:
    "List files under a directory, recursively (directory defaults to .). pattern: glob with " +
    "*, ?, **. Entries under directories nobody vouched for come back as references.",
  routing,
  content,
  schema,
  async handler(args, ctx) {
    const policy = ctx.policy;
    const limit = ctx.settings.limits.listEntries;
    const given = args.directory ?? ".";
    const resolved = await resolvePath(policy.workspace, given);
    if (!resolved.ok) return failure(resolved.error);
    const dir = resolved.value;
    if (dir.kind === "missing") return failure(`${given} does not exist`);
    if (dir.kind !== "directory") {
      return failure(`${given} is a file, not a directory; use read_file to read a file`);
    }
    if (isGitPath(dir.rel)) return failure(".git is never listed");
    const base = displayBase(given);
    const glob = args.pattern !== undefined ? compileGlob(args.pattern) : null;
    // A shown name's line is made as its entry is accepted, while the workers list the next
    // directories; an accepted entry is the next in the result (or the walk stops at once).
    const shownLines: string[] = [];
    const result = await walk(policy, dir.rel, {
      accept: (e) => {
        if (glob !== null && !glob.matches(e.sub)) return false;
        shownLines.push(e.nameShown ? shownPath(displayPath(base, e.sub), suffix(e.kind)) : "");
        return true;
      },
      limit,
      wholePool: true,
    });

    // Parents sort before their children, so a child can point at its parent's reference.
    const order = result.entries.map((_, i) => i).sort((a, b) => {
      const x = result.entries[a].rel;
      const y = result.entries[b].rel;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const known = refIndex(policy);
    const refOf = new Map<number, RefRecord>();
    const lines: string[] = [];
    let named = 0;
    for (const i of order) {
      const e = result.entries[i];
      const label: Label = e.nameShown ? TRUSTED_PUBLIC : pathNameLabel(policy, e.rel, dir.rel);
      if (e.nameShown) {
        named++;
        lines.push(shownLines[i]);
        continue;
      }
      const entryType = e.kind === "directory" ? "directory" : "file";
      let ref = known.get(`${entryType}\0${e.rel}`);
      if (!ref || !sameLabel(ref.label, label)) {
        ref = await policy.refs.add({
          kind: "file_name",
          label,
          path: e.rel,
          entryType,
          tool: "list_files",
        });
        known.set(`${entryType}\0${e.rel}`, ref);
      }
      refOf.set(i, ref);
      const parent = e.parentIndex >= 0 ? result.entries[e.parentIndex] : null;
      const parentSub = e.parent === dir.rel ? "" : relativeSub(dir.rel, e.parent);
      const where = parent === null
        ? pathNameLabel(policy, e.parent, dir.rel).integrity === "T"
          ? `${shownPath(displayPath(base, parentSub) || ".")}/`
          : "a directory below"
        : parent.nameShown
        ? `${shownPath(displayPath(base, parent.sub))}/`
        : `ref:${refOf.get(e.parentIndex)?.id}`;
      lines.push(`ref:${ref.id} (${entryType} in ${where})`);
    }
    const refs = lines.length - named;
    await policy.record({
      tool: "list_files",
      routing: { directory: dir.rel, pattern: args.pattern ?? null },
      labels: {},
      decision: refs === 0 ? "shown (trusted names)" : `${refs} entries as references`,
      by: "rule",
    });

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
    if (result.truncated) {
      summary.push(
        `truncated: only the first ${limit} entries are listed; narrow with directory or pattern`,
      );
    }
    if (result.unreadable > 0) {
      summary.push(`${plural(result.unreadable, "directory", "directories")} could not be read`);
    }
    return shown([...lines, ...summary.map((s) => `[${s}]`)].join("\n"), TRUSTED_PUBLIC);
  },
});
