/**
 * list_files's decision (docs/contract.md §3.2, §14): which entries of a walk the planner is told
 * by name, and which only as references. A name is content: an entry whose name may not be shown
 * becomes its own `file_name` reference (kind and parent only); listing the same entry again
 * hands back the same reference. The tool renders the entries it is given.
 */
import type { FileLabels, Recording, References, WorkspaceFiles } from "./capabilities.ts";
import { pathNameLabel } from "./reads.ts";
import type { RefRecord } from "./refs.ts";
import { routeDirectory } from "./routing.ts";
import { type EntryKind, walk } from "./walk.ts";
import { compileGlob } from "../util/glob.ts";
import { type Label, sameLabel } from "../util/label.ts";
import { ownWordsLabel } from "./driver_labels.ts";
import { plural } from "../util/plural.ts";
import { recordDone } from "./verdict.ts";

export type { EntryKind };

export interface ListRequest {
  directory?: string;
  pattern?: string;
  /** The most entries listed. */
  limit: number;
}

/** Where a referenced entry lies, as the planner may be told. */
export type ListedParent =
  /** A directory whose name may be shown: its path below the listed directory. */
  | { sub: string }
  /** A directory listed as a reference. */
  | { ref: number }
  /** A directory whose name may not be shown and that is not in the listing. */
  | null;

export type ListedEntry =
  /** `sub` is the path below the listed directory. */
  | { shown: true; sub: string; kind: EntryKind }
  | { shown: false; ref: number; entryType: "file" | "directory"; parent: ListedParent };

export type Listing =
  | {
    kind: "listed";
    /** The listed directory as the planner spelled it, tidied: paths are shown below it. */
    base: string;
    /** In path order, so a parent comes before its children. */
    entries: ListedEntry[];
    /** How many of the entries are references. */
    references: number;
    truncated: boolean;
    /** Directories that could not be read. */
    unreadable: number;
    /**
     * What the listing carries: the names shown are only those a name's own label lets through
     * as trusted text (`pathNameLabel`), the rest are references and counts, Brave Bot's words.
     */
    label: Label;
  }
  | { kind: "error"; message: string };

function relativeSub(dir: string, rel: string): string {
  return dir === "." ? rel : rel.slice(dir.length + 1);
}

/** Finds an earlier reference for the same entry, so listing twice does not mint new names. */
function refIndex(policy: References): Map<string, RefRecord> {
  const index = new Map<string, RefRecord>();
  for (const r of policy.refs.all()) {
    if (r.kind === "file_name" && r.path !== undefined) {
      index.set(`${r.entryType}\0${r.path}`, r);
    }
  }
  return index;
}

/** Decides a list_files call: the walk, a reference for each name not shown, the audit entry. */
export async function decideListFiles(
  policy: FileLabels & Recording & WorkspaceFiles & References,
  request: ListRequest,
): Promise<Listing> {
  const routed = await routeDirectory(policy, request.directory, {
    notDirectory: (given) => `${given} is a file, not a directory; use read_file to read a file`,
    git: ".git is never listed",
  });
  if (!routed.ok) return { kind: "error", message: routed.error };
  const { dir, base } = routed.value;
  const glob = request.pattern !== undefined ? compileGlob(request.pattern) : null;
  const result = await walk(policy, dir.rel, {
    accept: (e) => glob === null || glob.matches(e.sub),
    limit: request.limit,
    wholePool: true,
    baseId: dir.id,
  });

  // Parents sort before their children, so a child can point at its parent's reference.
  const order = result.entries.map((_, i) => i).sort((a, b) => {
    const x = result.entries[a].rel;
    const y = result.entries[b].rel;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const known = refIndex(policy);
  const refOf = new Map<number, RefRecord>();
  const entries: ListedEntry[] = [];
  let references = 0;
  for (const i of order) {
    const e = result.entries[i];
    if (e.nameShown) {
      entries.push({ shown: true, sub: e.sub, kind: e.kind });
      continue;
    }
    const label = pathNameLabel(policy, e.rel, dir.rel);
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
    const where: ListedParent = parent === null
      ? pathNameLabel(policy, e.parent, dir.rel).integrity === "T"
        ? { sub: e.parent === dir.rel ? "" : relativeSub(dir.rel, e.parent) }
        : null
      : parent.nameShown
      ? { sub: parent.sub }
      : { ref: refOf.get(e.parentIndex)!.id };
    entries.push({ shown: false, ref: ref.id, entryType, parent: where });
    references++;
  }
  await recordDone(policy, {
    tool: "list_files",
    routing: { directory: dir.rel, pattern: request.pattern ?? null },
    labels: {},
    decision: references === 0
      ? "shown (trusted names)"
      : `${plural(references, "entry", "entries")} as references`,
    by: "rule",
  });
  return {
    kind: "listed",
    base,
    entries,
    references,
    truncated: result.truncated,
    unreadable: result.unreadable,
    label: ownWordsLabel(),
  };
}
