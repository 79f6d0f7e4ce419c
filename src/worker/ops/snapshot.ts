/**
 * A snapshot of a tree for finding what a run changed (docs/contract.md §13.5): every entry below
 * a root, by `lstat`, keyed by device, inode, size, modification and change time. Taken before and
 * after a run, two snapshots say which files it created, changed and removed. A file-system watch is not used: it drops events silently under load.
 *
 * Links are recorded as links and never followed; folders named in `skip` (Brave Bot's state)
 * are not entered. Synchronous calls: each async hop costs more than the `lstat` it waits for.
 * The root must resolve inside the worker's roots, and every folder is checked after it is
 * listed (below).
 *
 * No blind spot: a folder the walk cannot list, one with an entry it cannot `lstat` (other than
 * one gone meanwhile), or one swapped while listed is **marked** — nothing beneath it is known,
 * and the caller must treat everything beneath it as touched. Memory stays bounded whatever the
 * tree holds (a run may create 300,000 files):
 * 1. the first `bounds.entries` entries are recorded in full;
 * 2. past them, up to `bounds.changes` more: folders (so that a folder made by a run can still be
 *    told apart from one it added a file to), and, with `since` (after a run), every entry whose
 *    change time is at or after it, which every write moves and no program can set back;
 * 3. past both, a folder holding an entry that step 2 would have recorded is marked whole, and
 *    so is a folder whose subfolders would make the walk's own queue longer than `bounds.queue`,
 *    and one that alone holds more entries to keep than both bounds; at most `bounds.marks` marks
 *    are kept, merged into their parents past it.
 *
 * Split over the pool (`part`): every entry belongs to exactly one part, named by its path alone
 * ({@link snapshotPartOf}), so that parts walked at once by different workers never record one
 * entry twice nor leave one out, whatever changes between their listings. Every part lists the
 * root and the folders directly beneath it (there are few) to find its own; it records only its
 * own entries there, and enters a folder two levels down only when that folder is its own: a
 * folder's entry and everything beneath it then come from one walk, and a folder a part cannot
 * see into is marked by that part. The bounds are each part's (the caller divides them).
 */
import type { SnapshotResult } from "../protocol.ts";
import { beforeAct, checkPath, folderOf, lstatInside } from "./wall.ts";

/** Fields per entry in {@link SnapshotResult.stats}. */
export const SNAPSHOT_FIELDS = 5;

/** The bounds of {@link snapshotTree}: see the module comment. */
export interface SnapshotBounds {
  entries: number;
  changes: number;
  marks: number;
  /** Folders waiting to be listed, at most (default: `entries + changes`). */
  queue?: number;
}

function kindCode(info: Deno.FileInfo): string {
  return info.isSymlink ? "l" : info.isFile ? "f" : info.isDirectory ? "d" : "o";
}

/** The folder holding `rel` ("" for the root's entries). */
function parentRel(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i < 0 ? "" : rel.slice(0, i);
}

/**
 * Folders marked whole ("" is the root): at most `max`, merged upwards past it, so that a tree
 * with more changed folders than that costs no more memory, only coarser marks.
 */
export class Marks {
  #set = new Set<string>();
  constructor(readonly max: number) {}

  /** Whether `rel` is a marked folder or lies beneath one. */
  covers(rel: string): boolean {
    if (this.#set.size === 0) return false;
    if (this.#set.has("")) return true;
    for (let at = rel; at !== ""; at = parentRel(at)) if (this.#set.has(at)) return true;
    return false;
  }

  add(rel: string): void {
    if (this.covers(rel)) return;
    this.#set.add(rel);
    if (this.#set.size > Math.max(1, this.max)) this.#merge();
  }

  /** Replaces every mark by its parent until at most half the bound are left. */
  #merge(): void {
    const target = Math.max(1, Math.floor(this.max / 2));
    while (this.#set.size > target) {
      const parents = [...this.#set].map((rel) => rel === "" ? "" : parentRel(rel));
      this.#set = new Set();
      // Shortest first, so that a parent is in before the marks beneath it are asked about.
      for (const rel of parents.sort((a, b) => a.length - b.length)) this.add(rel);
    }
  }

  /** The marks, none beneath another. */
  list(): string[] {
    const all = [...this.#set].sort((a, b) => a.length - b.length);
    const kept = new Marks(Infinity);
    for (const rel of all) kept.add(rel);
    return [...kept.#set];
  }
}

/** One listed entry, kept only as long as its folder's check is pending. */
interface Child {
  rel: string;
  kind: string;
  stats: [number, number, number, number, number];
  /** False for a folder another part records, which this part lists only to find its own. */
  record: boolean;
}

/** Which part of a walk split `of` ways holds the entry `rel` (a 32-bit FNV-1a of its path). */
export function snapshotPartOf(rel: string, of: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < rel.length; i++) h = Math.imul(h ^ rel.charCodeAt(i), 0x01000193);
  return (h >>> 0) % of;
}

/** A part of a split snapshot: `index` of `of` (see the module comment). */
export interface SnapshotPart {
  index: number;
  of: number;
}

/** How many '/' `rel` holds, up to two: its depth below the root's own entries. */
function slashes(rel: string): number {
  const first = rel.indexOf("/");
  if (first < 0) return 0;
  return rel.indexOf("/", first + 1) < 0 ? 1 : 2;
}

export function snapshotTree(
  root: string,
  skip: readonly string[],
  bounds: SnapshotBounds | number,
  since?: number,
  part?: SnapshotPart,
): SnapshotResult {
  // A number alone bounds the entries recorded in full; the others are the settings' defaults.
  const b = typeof bounds === "number"
    ? { entries: bounds, changes: 100_000, marks: 1_000 }
    : bounds;
  const { entries: maxEntries, changes: maxChanges, marks: maxMarks } = b;
  const maxQueue = b.queue ?? maxEntries + maxChanges;
  const paths: string[] = [];
  const kinds: string[] = [];
  const stats: number[] = [];
  let seen = 0;
  let unreadable = 0;
  /** Recorded past `maxEntries` (step 2). */
  let extra = 0;
  /** Some entry was neither recorded nor under a mark (past the bound, and not asked for). */
  let left = false;
  /** Before a run: some folder past the bound was not recorded. */
  let foldersLeft = false;
  const marks = new Marks(maxMarks);
  const entered: { rel: string; dev: number; ino: number }[] = [];
  const skipped = new Set(skip);
  // The root resolves inside the worker's roots (wall.ts); each folder below it is entered by
  // its name, never through a link, and is checked, after it was listed and its entries
  // lstat'ed, to be still the folder found (same device and inode), so a folder swapped for a
  // link meanwhile contributes nothing from outside — it is marked instead.
  const top = checkPath(root);
  const pending: { rel: string; dev: number; ino: number }[] = [{
    rel: "",
    dev: top.info.dev ?? 0,
    ino: top.info.ino ?? 0,
  }];
  /** Whether an entry changed at or after `since` (none does without one). */
  const changedSince = (ctimeMs: number) => since !== undefined && ctimeMs >= since;
  /** Whether an entry past the full bound is one to keep (step 2): a folder, or a change. */
  const wanted = (kind: string, ctimeMs: number) => kind === "d" || changedSince(ctimeMs);
  const of = part !== undefined && part.of > 1 ? part.of : 1;
  const mine = (rel: string) => snapshotPartOf(rel, of) === part!.index;
  /** Whether every part lists the folder `rel`: the root and the folders directly beneath it. */
  const sharedFolder = (rel: string) => of > 1 && (rel === "" || slashes(rel) === 0);
  /**
   * Of an entry in a folder every part lists: whether this part keeps it — its own entries, and
   * the root's folders, which every part enters.
   */
  const keeps = (rel: string, kind: string) => mine(rel) || (kind === "d" && slashes(rel) === 0);

  while (pending.length > 0) {
    const { rel, dev, ino } = pending.pop()!;
    if (marks.covers(rel)) continue;
    const dir = rel === "" ? root : `${root}/${rel}`;
    const here: Child[] = [];
    const shared = sharedFolder(rel);
    let blind = false;
    try {
      beforeAct("list", dir);
      for (const entry of Deno.readDirSync(dir)) {
        const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
        // Split: what is neither this part's own nor a folder it must enter is not looked at.
        if (shared && !entry.isDirectory && !mine(childRel)) continue;
        const abs = `${root}/${childRel}`;
        if (skipped.has(abs)) continue;
        let info: Deno.FileInfo;
        try {
          info = Deno.lstatSync(abs);
        } catch (e) {
          // Gone between the listing and the lstat: not there as far as we know. Anything else
          // (no search permission on the folder) hides what the entry is: the folder is marked.
          unreadable++;
          if (e instanceof Deno.errors.NotFound) continue;
          blind = true;
          break;
        }
        const kind = kindCode(info);
        if (shared && !keeps(childRel, kind)) continue;
        const ctimeMs = info.ctime?.getTime() ?? 0;
        // Entries that will be neither recorded nor queued are not kept while the folder is
        // listed, so that a folder of 300,000 files costs no memory beyond the bounds.
        const full = paths.length + here.length < maxEntries;
        if (!full && kind !== "d" && !wanted(kind, ctimeMs)) {
          seen++;
          left = true;
          continue;
        }
        here.push({
          rel: childRel,
          kind,
          stats: [info.dev ?? 0, info.ino ?? 0, info.size, info.mtime?.getTime() ?? 0, ctimeMs],
          record: !shared || mine(childRel),
        });
        // One folder holding more than both bounds (a run made 300,000 files in it) is marked
        // whole rather than held in memory.
        if (here.length >= maxEntries + maxChanges) {
          blind = true;
          break;
        }
      }
      if (!blind) {
        const now = rel === "" ? Deno.statSync(dir) : Deno.lstatSync(dir);
        if ((now.dev ?? 0) !== dev || (now.ino ?? 0) !== ino) blind = true;
      }
    } catch (e) {
      // A folder gone since it was found holds nothing; one that cannot be listed is marked.
      unreadable++;
      if (e instanceof Deno.errors.NotFound) continue;
      blind = true;
    }
    if (blind) {
      marks.add(rel);
      continue;
    }
    if (shared) entered.push({ rel, dev, ino });
    for (const child of here) {
      if (child.record) seen++;
      if (child.kind === "d") {
        if (pending.length >= maxQueue) {
          // The queue itself would grow past the bound: this folder is marked whole.
          marks.add(rel);
          break;
        }
        pending.push({ rel: child.rel, dev: child.stats[0], ino: child.stats[1] });
      }
      if (!child.record) continue;
      if (paths.length >= maxEntries) {
        if (!wanted(child.kind, child.stats[4])) {
          if (child.kind === "d") foldersLeft = true;
          left = true;
          continue;
        }
        if (extra >= maxChanges) {
          if (!changedSince(child.stats[4])) {
            foldersLeft = true; // a folder, unchanged: only whether it existed is lost
            left = true;
            continue;
          }
          marks.add(rel); // step 3: the rest of this folder is not looked at
          break;
        }
        extra++;
      }
      paths.push(child.rel);
      kinds.push(child.kind);
      stats.push(...child.stats);
    }
  }
  const blind = marks.list();
  return {
    paths: paths.join("\0"),
    kinds: kinds.join(""),
    stats: new Float64Array(stats),
    complete: !left && blind.length === 0,
    recordedAll: !left,
    foldersRecorded: !foldersLeft,
    blind,
    seen,
    unreadable,
    ...(of > 1 ? { entered } : {}),
  };
}

/**
 * The change time (ms) of each path, by `lstat`, or null where it cannot be had: how the policy
 * layer tells whether a file changed since an unconfined run began (its leftover watch).
 */
export function changeTimes(paths: readonly string[]): (number | null)[] {
  return paths.map((path) => {
    try {
      return lstatInside(path, folderOf).ctime?.getTime() ?? null;
    } catch {
      return null;
    }
  });
}
