/**
 * The directory walk shared by list_files and search (design.md §14): breadth first, one
 * worker round trip per directory level (readDirs for every directory of the level, readMany
 * for the level's `.gitignore` files), `.git` and Brave Bot's own state folder never entered,
 * symbolic links never followed.
 *
 * `.gitignore` rules apply below the listed directory, including those of its ancestors,
 * unless the listed directory is itself ignored (listing `node_modules/x` explicitly works);
 * then only the `.gitignore` files inside it count. A `.gitignore` nobody trusts may hide
 * entries only where names are references anyway: for an entry in a trusted directory only
 * trusted `.gitignore` files are consulted, so untrusted bytes cannot choose which trusted
 * names the planner sees.
 *
 * Each entry says whether its name may be shown: true only when every name from the listed
 * directory down to it lies in a trusted directory (a file name carries its directory's
 * integrity, design.md §3).
 */
import ignore, { type Ignore } from "ignore";
import type { Policy } from "../policy/core.ts";
import { isGitName } from "../policy/git_dir.ts";
import { labelOfBytes, personNamed } from "../policy/reads.ts";
import { isWithin } from "../policy/workspace.ts";

export type EntryKind = "file" | "directory" | "symlink" | "other";

export interface WalkEntry {
  /** Workspace-relative path. */
  rel: string;
  /** Path relative to the walked directory. */
  sub: string;
  kind: EntryKind;
  /** Workspace-relative directory holding the entry. */
  parent: string;
  /** Whether the planner may be told this entry's path (see the module comment). */
  nameShown: boolean;
  /** Index (in walk order) of the directory entry holding it; -1 for the walked directory. */
  parentIndex: number;
}

export interface WalkOptions {
  /** Which entries to return; directories are walked whether returned or not. */
  accept(entry: WalkEntry): boolean;
  /** Stop once this many entries were accepted plus one (so truncation can be said). */
  limit: number;
}

export interface WalkResult {
  /** Accepted entries, breadth first; at most `limit`. */
  entries: WalkEntry[];
  truncated: boolean;
  /** Directories that could not be read (permission, vanished). */
  unreadable: number;
}

interface Frame {
  /** Workspace-relative directory the `.gitignore` lies in. */
  dir: string;
  rules: Ignore;
  trusted: boolean;
}

const GITIGNORE_MAX_BYTES = 1024 * 1024;
const READDIRS_CHUNK = 256;

function joinRel(dir: string, name: string): string {
  return dir === "." ? name : `${dir}/${name}`;
}

function relativeTo(dir: string, rel: string): string {
  return dir === "." ? rel : rel.slice(dir.length + 1);
}

/**
 * Whether the frames (shallowest first) ignore `rel`. The deepest frame with an opinion wins,
 * as in git; untrusted frames are skipped for an entry whose directory is trusted.
 */
function ignoredBy(frames: readonly Frame[], rel: string, isDir: boolean, dirTrusted: boolean) {
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i];
    if (dirTrusted && !frame.trusted) continue;
    try {
      const r = frame.rules.test(relativeTo(frame.dir, rel) + (isDir ? "/" : ""));
      if (r.ignored) return true;
      if (r.unignored) return false;
    } catch { /* a name `ignore` cannot judge is not ignored */ }
  }
  return false;
}

async function loadFrames(policy: Policy, dirs: string[]): Promise<Map<string, Frame>> {
  const frames = new Map<string, Frame>();
  if (dirs.length === 0) return frames;
  const paths = dirs.map((d) => `${policy.workspace.root}/${joinRel(d, ".gitignore")}`);
  const read = await policy.worker.call({
    op: "readMany",
    paths,
    maxBytes: GITIGNORE_MAX_BYTES,
  });
  if (!read.ok) return frames;
  for (let i = 0; i < dirs.length; i++) {
    const bytes = read.value[i]?.bytes;
    if (!bytes) continue;
    const rel = joinRel(dirs[i], ".gitignore");
    const label = await labelOfBytes(policy, rel, bytes);
    let rules: Ignore;
    try {
      rules = ignore().add(new TextDecoder().decode(bytes));
    } catch {
      continue; // a .gitignore the library cannot read hides nothing
    }
    frames.set(dirs[i], { dir: dirs[i], rules, trusted: label.integrity === "T" });
  }
  return frames;
}

/** The ancestors' frames, unless the walked directory (or one above it) is itself ignored. */
async function ancestorFrames(policy: Policy, base: string): Promise<Frame[]> {
  if (base === ".") return [];
  const segments = base.split("/");
  const dirs = ["."];
  for (let i = 1; i < segments.length; i++) dirs.push(segments.slice(0, i).join("/"));
  const loaded = await loadFrames(policy, dirs);
  const frames: Frame[] = [];
  for (let i = 0; i < segments.length; i++) {
    const dir = i === 0 ? "." : segments.slice(0, i).join("/");
    const frame = loaded.get(dir);
    if (frame) frames.push(frame);
    const rel = segments.slice(0, i + 1).join("/");
    const dirTrusted = policy.nameLabel(dir).integrity === "T";
    if (ignoredBy(frames, rel, true, dirTrusted)) return [];
  }
  return frames;
}

/** Lists a level in chunks, so a wide level cannot exhaust the worker's file handles. */
async function readLevel(policy: Policy, paths: string[]) {
  const out: ({ entries: { name: string; kind: EntryKind }[] } | { error: string })[] = [];
  for (let i = 0; i < paths.length; i += READDIRS_CHUNK) {
    const chunk = paths.slice(i, i + READDIRS_CHUNK);
    const r = await policy.worker.call({ op: "readDirs", paths: chunk });
    if (r.ok) out.push(...r.value);
    else out.push(...chunk.map(() => ({ error: r.error.message })));
  }
  return out;
}

interface Pending {
  rel: string;
  frames: Frame[];
  nameShown: boolean;
  index: number;
}

/** Walks the directory `base` (workspace-relative, already resolved and checked). */
export async function walk(
  policy: Policy,
  base: string,
  options: WalkOptions,
): Promise<WalkResult> {
  const root = policy.workspace.root;
  // Brave Bot's own state (references' bytes, trust) may lie inside the workspace: never walked.
  const guarded = policy.workspace.protectedDirs;
  const entries: WalkEntry[] = [];
  let unreadable = 0;
  let level: Pending[] = [{
    rel: base,
    frames: await ancestorFrames(policy, base),
    nameShown: true,
    index: -1,
  }];
  // Every entry, accepted or not, gets an index so children can point at their directory.
  let seen = 0;
  const accepted = new Map<number, number>();
  while (level.length > 0) {
    const listed = await readLevel(
      policy,
      level.map((p) => p.rel === "." ? root : `${root}/${p.rel}`),
    );
    const withGitignore = level.filter((_, i) => {
      const r = listed[i];
      return "entries" in r && r.entries.some((e) => e.name === ".gitignore" && e.kind === "file");
    }).map((p) => p.rel);
    const own = await loadFrames(policy, withGitignore);
    const next: Pending[] = [];
    for (let i = 0; i < level.length; i++) {
      const dir = level[i];
      const r = listed[i];
      if ("error" in r) {
        unreadable++;
        continue;
      }
      const frame = own.get(dir.rel);
      const frames = frame ? [...dir.frames, frame] : dir.frames;
      const dirTrusted = policy.nameLabel(dir.rel).integrity === "T";
      const names = r.entries.filter((e) => !isGitName(e.name))
        .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      for (const e of names) {
        const rel = joinRel(dir.rel, e.name);
        const isDir = e.kind === "directory";
        if (isDir && guarded.some((g) => isWithin(g, `${root}/${rel}`))) continue;
        if (ignoredBy(frames, rel, isDir, dirTrusted)) continue;
        const entry: WalkEntry = {
          rel,
          sub: relativeTo(base, rel),
          kind: e.kind,
          parent: dir.rel,
          nameShown: (dir.nameShown && dirTrusted) || personNamed(policy, rel),
          parentIndex: dir.index === -1 ? -1 : accepted.get(dir.index) ?? -1,
        };
        const index = seen++;
        if (options.accept(entry)) {
          if (entries.length >= options.limit) return { entries, truncated: true, unreadable };
          accepted.set(index, entries.push(entry) - 1);
        }
        if (isDir) next.push({ rel, frames, nameShown: entry.nameShown, index });
      }
    }
    level = next;
  }
  return { entries, truncated: false, unreadable };
}
