/**
 * A snapshot of a tree for finding what a run changed (design.md §13, "Files a run changes"):
 * every entry below a root, by `lstat`, keyed by device, inode, size, modification and change
 * time. Taken before and after a run, two snapshots say which files it created, changed and
 * removed. A file-system watch is not used: it drops events silently under load.
 *
 * Links are recorded as links and never followed; folders named in `skip` (Brave Bot's state)
 * are not entered. Past `maxEntries` the walk goes on without recording, so the caller knows
 * only that the tree was larger (and falls back to change times, which every write moves).
 * Synchronous calls: each async hop costs more than the `lstat` it waits for. The root must
 * resolve inside the worker's roots, and every folder is checked after it is listed (below).
 */
import type { SnapshotResult } from "../protocol.ts";
import { beforeAct, checkPath } from "./wall.ts";

/** Fields per entry in {@link SnapshotResult.stats}. */
export const SNAPSHOT_FIELDS = 5;

function kindCode(info: Deno.FileInfo): string {
  return info.isSymlink ? "l" : info.isFile ? "f" : info.isDirectory ? "d" : "o";
}

export function snapshotTree(
  root: string,
  skip: readonly string[],
  maxEntries: number,
): SnapshotResult {
  const paths: string[] = [];
  const kinds: string[] = [];
  const stats: number[] = [];
  let seen = 0;
  let unreadable = 0;
  // A folder that was not what it was when found (a race with a link): the snapshot is partial.
  let swapped = false;
  const skipped = new Set(skip);
  // The root resolves inside the worker's roots (wall.ts); each folder below it is entered by
  // its name, never through a link, and is checked, after it was listed and its entries
  // lstat'ed, to be still the folder found (same device and inode), so a folder swapped for a
  // link meanwhile contributes nothing from outside.
  const top = checkPath(root);
  const pending: { rel: string; found: Deno.FileInfo }[] = [{ rel: "", found: top.info }];
  while (pending.length > 0) {
    const { rel, found } = pending.pop()!;
    const dir = rel === "" ? root : `${root}/${rel}`;
    const here: { childRel: string; info: Deno.FileInfo }[] = [];
    try {
      beforeAct("list", dir);
      const names = [...Deno.readDirSync(dir)].map((e) => e.name);
      for (const name of names) {
        const childRel = rel === "" ? name : `${rel}/${name}`;
        const abs = `${root}/${childRel}`;
        if (skipped.has(abs)) continue;
        try {
          here.push({ childRel, info: Deno.lstatSync(abs) });
        } catch {
          unreadable++; // gone between the listing and the lstat: not there as far as we know
        }
      }
      const now = rel === "" ? Deno.statSync(dir) : Deno.lstatSync(dir);
      if (now.dev !== found.dev || now.ino !== found.ino) {
        swapped = true;
        unreadable++;
        continue;
      }
    } catch {
      unreadable++;
      continue;
    }
    for (const { childRel, info } of here) {
      seen++;
      if (info.isDirectory) pending.push({ rel: childRel, found: info });
      if (paths.length >= maxEntries) continue;
      paths.push(childRel);
      kinds.push(kindCode(info));
      stats.push(
        info.dev ?? 0,
        info.ino ?? 0,
        info.size,
        info.mtime?.getTime() ?? 0,
        info.ctime?.getTime() ?? 0,
      );
    }
  }
  return {
    paths: paths.join("\0"),
    kinds: kinds.join(""),
    stats: new Float64Array(stats),
    complete: !swapped && seen === paths.length,
    seen,
    unreadable,
  };
}
