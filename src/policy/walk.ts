/**
 * The directory walk shared by list_files and search (docs/contract.md §14): breadth first, names
 * in code-unit order, directories listed by the worker in batches (readDirs, packed; readMany for
 * a batch's `.gitignore` files), `.git` and Brave Bot's own state folder never entered,
 * symbolic links never followed.
 *
 * `.gitignore` rules apply below the listed directory, including those of its ancestors,
 * unless the listed directory is itself ignored (listing `node_modules/x` explicitly works);
 * then only the `.gitignore` files inside it count. A `.gitignore` nobody trusts may hide
 * entries only where names are references anyway: for an entry in a trusted directory only
 * trusted `.gitignore` files are consulted, so untrusted bytes cannot choose which trusted
 * names the planner sees. A `.gitignore` counts only as a regular file reached through no link
 * (the ancestors' too, which no listing shows): a link to a file outside the workspace or in
 * an untrusted folder would otherwise be labeled as the trusted path it lies at.
 *
 * Each entry says whether its name may be shown, as `nameShown` (reads.ts) rules: every name
 * from the listed directory down to it lies in a trusted directory (a file name carries its
 * directory's integrity, docs/contract.md §3.2), or the person spelled it in a rule.
 */
import ignore, { type Ignore } from "ignore";
import type { FileLabels, WorkspaceFiles } from "./capabilities.ts";
import { isGitName } from "./git_dir.ts";
import { labelOfBytes, nameShown, namesShownIn } from "./reads.ts";
import { type CheckedEntry, openedAsChecked } from "./paths.ts";
import { isWithin } from "./workspace.ts";
import type { EffectWorker } from "../worker/client.ts";
import { fanout } from "../worker/pool.ts";

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
  /**
   * List directories on every worker of the pool, not just the first (list_files: the walk is
   * all its work). Search leaves this off: its other workers are busy searching.
   */
  wholePool?: boolean;
  /** The walked directory's identity when it was resolved: its listing must be of it. */
  baseId?: CheckedEntry["id"];
  /**
   * Asked before each listing is handled; a promise holds the walk until it settles. How a
   * caller slower than the walk (search) keeps it from running far ahead, each entry it found
   * held until used.
   */
  pace?(): Promise<void> | undefined;
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

function joinRel(dir: string, name: string): string {
  return dir === "." ? name : `${dir}/${name}`;
}

/** The absolute path of a workspace-relative one, as the walk hands it to the worker. */
function absOf(policy: WorkspaceFiles, rel: string): string {
  return rel === "." ? policy.workspace.root : `${policy.workspace.root}/${rel}`;
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

async function loadFrames(
  policy: FileLabels & WorkspaceFiles,
  dirs: string[],
): Promise<Map<string, Frame>> {
  const frames = new Map<string, Frame>();
  if (dirs.length === 0) return frames;
  const paths = dirs.map((d) => absOf(policy, joinRel(d, ".gitignore")));
  // A regular file, reached through no link (the worker skips one that is, or passes through,
  // a link): the label below is the label of the path read, never of a link's target outside
  // the workspace or in an untrusted folder. The worker's own checks keep it inside the roots.
  const read = await policy.worker.call({
    op: "readMany",
    paths,
    maxBytes: GITIGNORE_MAX_BYTES,
    followLinks: false,
  });
  if (!read.ok) return frames;
  for (let i = 0; i < dirs.length; i++) {
    const bytes = read.value[i]?.bytes;
    // Labelled as the path below only if read from it (no link: see openedAsChecked).
    if (!bytes || !openedAsChecked({ abs: paths[i], id: null }, read.value[i].opened)) continue;
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
async function ancestorFrames(policy: FileLabels & WorkspaceFiles, base: string): Promise<Frame[]> {
  if (base === ".") return [];
  const segments = base.split("/");
  const dirs = ["."];
  for (let i = 1; i < segments.length; i++) dirs.push(segments.slice(0, i).join("/"));
  const loaded = await loadFrames(policy, dirs);
  const frames: Frame[] = [];
  // Whether the walked directory is ignored decides which rules apply to its entries: for a
  // trusted one, only trusted `.gitignore` files may decide it.
  const baseTrusted = policy.nameLabel(base).integrity === "T";
  for (let i = 0; i < segments.length; i++) {
    const dir = i === 0 ? "." : segments.slice(0, i).join("/");
    const frame = loaded.get(dir);
    if (frame) frames.push(frame);
    const rel = segments.slice(0, i + 1).join("/");
    const dirTrusted = baseTrusted || policy.nameLabel(dir).integrity === "T";
    if (ignoredBy(frames, rel, true, dirTrusted)) return [];
  }
  return frames;
}

/** Directories per readDirs request: several stay in flight, so the worker lists while we sort. */
const BATCH_DIRS = 64;
/** Requests kept in flight per worker listing. */
const IN_FLIGHT_PER_WORKER = 3;

interface Pending {
  rel: string;
  frames: Frame[];
  nameShown: boolean;
  /** Position in the result of this directory's own entry; -1 when not returned (or the base). */
  accepted: number;
}

type Listing = Awaited<ReturnType<typeof listBatch>>;

/**
 * Sends one batch to the least busy of `workers`, ties going round the pool by `turn` (the
 * pool's fanout takes the first of the least busy, which left the first worker with three
 * listings in four and the other core idle half the time).
 */
function listBatch(workers: readonly EffectWorker[], paths: string[], turn: number) {
  const k = turn % workers.length;
  const order = k === 0 ? workers : [...workers.slice(k), ...workers.slice(0, k)];
  return fanout(order, { op: "readDirs", paths, packed: true });
}

/**
 * Walks the directory `base` (workspace-relative, already resolved and checked). Directories
 * are listed in batches, several requests in flight, but handled strictly in the order they
 * were found, so the result is the same breadth-first order as a level-by-level walk.
 */
export async function walk(
  policy: FileLabels & WorkspaceFiles,
  base: string,
  options: WalkOptions,
): Promise<WalkResult> {
  const root = policy.workspace.root;
  // Brave Bot's own state (references' bytes, trust) may lie inside the workspace: never walked.
  // A guarded folder neither inside nor around the workspace cannot hold anything listed here.
  const guarded = policy.workspace.protectedDirs.filter((g) =>
    isWithin(root, g) || isWithin(g, root)
  );
  const entries: WalkEntry[] = [];
  let unreadable = 0;
  const queue: Pending[] = [{
    rel: base,
    frames: await ancestorFrames(policy, base),
    nameShown: true,
    accepted: -1,
  }];
  const workers = options.wholePool ? policy.worker.pool : [policy.worker];
  const inFlightMax = IN_FLIGHT_PER_WORKER * workers.length;
  let requested = 0;
  let handled = 0;
  const inFlight: { count: number; reply: Promise<Listing> }[] = [];
  const send = () => {
    // Only whole replies release new directories, so a small tree takes one request per level.
    while (inFlight.length < inFlightMax && requested < queue.length) {
      const end = Math.min(queue.length, requested + BATCH_DIRS);
      const paths: string[] = [];
      for (let i = requested; i < end; i++) paths.push(absOf(policy, queue[i].rel));
      inFlight.push({
        count: end - requested,
        reply: listBatch(workers, paths, inFlight.length + handled),
      });
      requested = end;
    }
  };
  send();
  while (inFlight.length > 0) {
    const held = options.pace?.();
    if (held) await held;
    const { count, reply } = inFlight.shift()!;
    const listed = await reply;
    const first = handled;
    const dirs = queue.slice(handled, handled + count);
    handled += count;
    // A listing's names are labelled as the directory queued: only if it is what was listed, at
    // its path and through no link (a folder swapped for a link since is not it), and the walked
    // directory itself as it was resolved.
    const valid = dirs.map((dir, i) =>
      listed.ok && listed.value.errors[i] === null && openedAsChecked({
        abs: absOf(policy, dir.rel),
        id: first + i === 0 ? options.baseId ?? null : null,
      }, listed.value.opened[i])
    );
    const lists = dirs.map((_, i) => valid[i] ? listingOf(listed, i) : NO_LISTING);
    const withGitignore = dirs.filter((_, i) => hasGitignoreFile(lists[i])).map((p) => p.rel);
    const own = await loadFrames(policy, withGitignore);
    for (let d = 0; d < dirs.length; d++) {
      const dir = dirs[d];
      if (!valid[d]) {
        unreadable++;
        continue;
      }
      const frame = own.get(dir.rel);
      const frames = frame ? [...dir.frames, frame] : dir.frames;
      const dirTrusted = policy.nameLabel(dir.rel).integrity === "T";
      const shownHere = namesShownIn(policy, dir.rel, dir.nameShown);
      const prefix = dir.rel === "." ? "" : `${dir.rel}/`;
      const subPrefix = base === "." ? prefix : relativeTo(base, prefix);
      const { names, kinds } = lists[d];
      for (const name of names) {
        if (name.length === 4 && isGitName(name)) continue;
        const kind = kinds.get(name) ?? "file";
        const rel = prefix + name;
        const isDir = kind === "directory";
        if (isDir && guarded.length > 0 && guarded.some((g) => isWithin(g, `${root}/${rel}`))) {
          continue;
        }
        if (frames.length > 0 && ignoredBy(frames, rel, isDir, dirTrusted)) continue;
        const entry: WalkEntry = {
          rel,
          sub: base === "." ? rel : subPrefix + name,
          kind,
          parent: dir.rel,
          nameShown: nameShown(policy, rel, shownHere),
          parentIndex: dir.accepted,
        };
        let at = -1;
        if (options.accept(entry)) {
          if (entries.length >= options.limit) return { entries, truncated: true, unreadable };
          at = entries.push(entry) - 1;
        }
        if (isDir) queue.push({ rel, frames, nameShown: entry.nameShown, accepted: at });
      }
    }
    send();
  }
  return { entries, truncated: false, unreadable };
}

const KINDS: Record<string, EntryKind> = { f: "file", d: "directory", l: "symlink", o: "other" };

interface DirListing {
  /** Sorted in code-unit order by the worker: the walk's order within a directory. */
  names: string[];
  /** The kind of every entry that is not a plain file (few: most entries are files). */
  kinds: Map<string, EntryKind>;
}

const NO_LISTING: DirListing = { names: [], kinds: new Map() };

function listingOf(listed: Listing, i: number): DirListing {
  const kinds = new Map<string, EntryKind>();
  if (!listed.ok || listed.value.errors[i] !== null || listed.value.names[i] === "") {
    return { names: [], kinds };
  }
  const special = listed.value.kinds[i];
  if (special !== "") {
    const pairs = special.split("\0");
    for (let j = 0; j < pairs.length; j += 2) kinds.set(pairs[j], KINDS[pairs[j + 1]]);
  }
  return { names: listed.value.names[i].split("\0"), kinds };
}

function hasGitignoreFile({ names, kinds }: DirListing): boolean {
  return names.includes(".gitignore") && !kinds.has(".gitignore");
}
