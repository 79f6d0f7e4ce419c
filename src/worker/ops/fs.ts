/**
 * File-system primitives of the effect worker. Each acts on an absolute path it is handed, and
 * only once wall.ts has checked that the path resolves inside the worker's roots and that what
 * is opened is what was checked (an `OutsideWall` error otherwise). Every read reports, with its
 * bytes, the file it opened (`OpenedFile`), for the policy layer to compare with what it labelled.
 */
import { createHash } from "node:crypto";
import { closeSync, read as readFd, readSync } from "node:fs";
import { promisify } from "node:util";
import type {
  DirListing,
  EntryInfo,
  OpenedFile,
  PackedDirs,
  ReadBytes,
  ReadManyItem,
  ResolvedFolder,
  StatInfo,
  StatRead,
} from "../protocol.ts";
import {
  asResolved,
  beforeAct,
  type Checked,
  checkPath,
  folderOf,
  FolderRuns,
  listInside,
  lstatInside,
  makeDirsInside,
  notAFile,
  openChecked,
  type Opened,
  openInside,
  OutsideWall,
  stillSame,
} from "./wall.ts";

function kindOf(info: Deno.FileInfo): StatInfo["kind"] {
  if (info.isSymlink) return "symlink";
  if (info.isFile) return "file";
  if (info.isDirectory) return "directory";
  return "other";
}

/**
 * The path's stat (links followed) or lstat (its last component not followed). Synchronous, as
 * the checks are: the stat of a path is the check's own first step.
 */
export function stat(path: string, follow: boolean): StatInfo {
  const info = follow ? checkPath(path).info : lstatInside(path, dirOf);
  return { kind: kindOf(info), size: info.size, mtimeMs: info.mtime?.getTime() ?? null };
}

/**
 * Reads `length` bytes from `offset`, or, given `maxBytes` instead, the whole file up to
 * `maxBytes + 1` bytes: one byte more than allowed tells the caller it is too big, and nothing
 * past that is read however large the file is, or has grown since anyone looked at it.
 */
export function read(
  path: string,
  bound: { offset?: number; length: number } | { maxBytes: number },
): ReadBytes {
  if ("maxBytes" in bound) return readCapped(path, bound.maxBytes);
  const { fd, opened } = openInside(path);
  try {
    const offset = Math.max(0, bound.offset ?? 0);
    const buffer = new Uint8Array(Math.max(0, bound.length));
    let filled = 0;
    while (filled < buffer.length) {
      const n = readSync(fd, buffer, filled, buffer.length - filled, offset + filled);
      if (n === 0) break;
      filled += n;
    }
    return { bytes: buffer.subarray(0, filled), opened };
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's bytes, at most `maxBytes + 1` of them, read through one handle into a buffer that
 * starts at the size the file had when opened and grows only up to the cap. Synchronous for the
 * reason given at readMany.
 */
export function readCapped(path: string, maxBytes: number, sizeHint?: number): ReadBytes {
  return readHandle(openInside(path), maxBytes, sizeHint);
}

/** The capped read of an opened handle, which it closes, with what it was. */
function readHandle(handle: Opened, maxBytes: number, sizeHint?: number): ReadBytes {
  const { fd, size, opened } = handle;
  try {
    return { bytes: readOpened(fd, maxBytes, sizeHint ?? size), opened };
  } finally {
    closeSync(fd);
  }
}

/** The capped read of readCapped, from a handle already opened and checked. */
function readOpened(fd: number, maxBytes: number, hint: number): Uint8Array {
  const cap = Math.max(0, Math.floor(maxBytes)) + 1;
  let buffer = new Uint8Array(Math.min(cap, hint + 1));
  let filled = 0;
  while (filled < cap) {
    if (filled === buffer.length) {
      const larger = new Uint8Array(Math.min(cap, Math.max(64 * 1024, buffer.length * 2)));
      larger.set(buffer);
      buffer = larger;
    }
    const n = readSync(fd, buffer, filled, buffer.length - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

/**
 * Stat and read in one round trip (a tool call's cost is mostly round trips). The
 * path is stat'ed first, so a FIFO or device is never opened and an oversized file never read;
 * the read is capped too, so a file that grew after the stat is reported too big (its stat's
 * size then at least the bytes seen), not read whole.
 */
export function readWithStat(path: string, maxBytes: number): StatRead {
  const checked = checkPath(path);
  const info = checked.info;
  const stat: StatInfo = {
    kind: kindOf(info),
    size: info.size,
    mtimeMs: info.mtime?.getTime() ?? null,
  };
  if (stat.kind !== "file" || stat.size > maxBytes) return { stat, bytes: null, opened: null };
  const { bytes, opened } = readChecked(checked, maxBytes);
  if (bytes.length > maxBytes) {
    return { stat: { ...stat, size: bytes.length }, bytes: null, opened: null };
  }
  return { stat, bytes, opened };
}

/**
 * Reads many files in one round trip, skipping any over `maxBytes` (by the stat, or by the
 * capped read when one grew after it). Synchronous on purpose: this thread does nothing else
 * meanwhile, and a blocking read skips the async-op hop per file, which is most of the cost
 * when a search reads thousands of small files.
 */
export function readMany(paths: string[], maxBytes: number, followLinks = true): ReadManyItem[] {
  // Folder by folder (wall.ts, FolderRuns): a run whose folder changed while its files were
  // read is undone, each of its files then refused.
  const runs = new FolderRuns();
  const items: ReadManyItem[] = [];
  let runStart = 0;
  const endRun = () => {
    if (!runs.end()) {
      for (let i = runStart; i < items.length; i++) {
        items[i] = { path: items[i].path, skipped: "error", error: "OutsideWall" };
      }
    }
    runStart = items.length;
  };
  for (const path of paths) {
    const dir = folderOf(path);
    if (dir !== runs.dir) endRun();
    items.push(readOne(runs, path, dir, maxBytes, followLinks));
  }
  endRun();
  return items;
}

function readOne(
  runs: FolderRuns,
  path: string,
  dir: string,
  maxBytes: number,
  followLinks: boolean,
): ReadManyItem {
  try {
    const { checked, linkFree } = runs.check(path, dir);
    const info = checked.info;
    // Not following links: a path that is, or passes through, a link is not a file here.
    if (!info.isFile || (!followLinks && !linkFree)) return { path, skipped: "not_file" };
    if (info.size > maxBytes) return { path, skipped: "too_big", size: info.size };
    const { bytes, opened } = readChecked(checked, maxBytes);
    if (bytes.length > maxBytes) return { path, skipped: "too_big", size: bytes.length };
    return { path, bytes, opened, size: bytes.length, mode: (info.mode ?? 0o644) & 0o777 };
  } catch (e) {
    return { path, skipped: "error", error: (e as Error).name };
  }
}

/** The items of a read, each file's bytes replaced by their hash (`hashOnly`). */
export function hashedItems(items: ReadManyItem[]): ReadManyItem[] {
  return items.map(({ bytes, ...item }) =>
    bytes === undefined
      ? item
      : { ...item, sha256: createHash("sha256").update(bytes).digest("hex") }
  );
}

/** A checked path's bytes, at most `maxBytes + 1`, through a handle that is what was checked. */
function readChecked(checked: Checked, maxBytes: number): ReadBytes {
  return readHandle(openChecked(checked), maxBytes, checked.info.size);
}

/**
 * Lists many directories in one round trip; symlinks are reported as such, never followed.
 * Synchronous for the same reason as readMany: one async op per directory entry was most of
 * a large listing's cost (2× faster over 800-1,800 directories).
 */
export function readDirs(paths: string[]): DirListing[] {
  return paths.map((path) => {
    try {
      const entries: EntryInfo[] = [];
      const listed = listInside(path);
      for (const e of listed.entries) {
        entries.push({
          name: e.name,
          kind: e.isSymlink ? "symlink" : e.isFile ? "file" : e.isDirectory ? "directory" : "other",
        });
      }
      return { entries, opened: listed.opened };
    } catch (e) {
      return { error: `${(e as Error).name}: ${(e as Error).message}` };
    }
  });
}

/**
 * readDirs, packed (see PackedDirs): one string per directory instead of one object per entry,
 * the names sorted here, so that the main thread, which labels and formats, has less to do.
 */
export function readDirsPacked(paths: string[]): PackedDirs {
  const names: string[] = [];
  const kinds: string[] = [];
  const errors: (string | null)[] = [];
  const opened: (OpenedFile | null)[] = [];
  for (const path of paths) {
    const here: string[] = [];
    const special: string[] = [];
    try {
      const listed = listInside(path);
      for (const e of listed.entries) {
        here.push(e.name);
        // Most entries are files; a symbolic link is never also a file here (not followed).
        if (!e.isFile) special.push(e.name, e.isSymlink ? "l" : e.isDirectory ? "d" : "o");
      }
      errors.push(null);
      opened.push(listed.opened);
    } catch (e) {
      here.length = special.length = 0;
      errors.push(`${(e as Error).name}: ${(e as Error).message}`);
      opened.push(null);
    }
    // The default sort compares UTF-16 code units, as `<` does; names are unique.
    here.sort();
    names.push(here.join("\0"));
    kinds.push(special.join("\0"));
  }
  return { names, kinds, errors, opened };
}

/** The project's one SHA-256, loaded on first use so a worker that never hashes starts faster. */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const { sha256 } = await import("../../util/hash.ts");
  return sha256(bytes);
}

/**
 * A file's SHA-256, read a chunk at a time: hashing a large file never holds it whole; with the
 * file hashed, since a hash-bound label is true only of it, and its permission bits. Opened as
 * every read is ({@link openChecked}: a regular file only, never waiting in its open).
 */
export async function hash(
  path: string,
): Promise<{ sha256: string; opened: OpenedFile; mode: number }> {
  const handle = openInside(path);
  return { sha256: await hashOpened(handle), opened: handle.opened, mode: handle.mode };
}

const readChunk = promisify(readFd);

/** The SHA-256 of an opened handle's bytes, which it closes: read a chunk at a time. */
async function hashOpened(handle: Opened): Promise<string> {
  try {
    const digest = createHash("sha256");
    const chunk = new Uint8Array(1024 * 1024);
    for (;;) {
      const { bytesRead } = await readChunk(handle.fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      digest.update(chunk.subarray(0, bytesRead));
    }
    return digest.digest("hex");
  } finally {
    closeSync(handle.fd);
  }
}

function dirOf(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i <= 0 ? path.slice(0, i + 1) || "/" : path.slice(0, i);
}

/**
 * Writes atomically: a temporary file beside the target, then a rename over it. When
 * `expectSha256` is given, the current file must still have that hash (null: must not exist),
 * so a file that changed after the person approved is not overwritten.
 *
 * The wall's checks: the current file is hashed through a checked handle (a link to outside is
 * refused, not followed); the folder, each folder made, and the temporary file are checked
 * before any byte is written, and the rename names both ends through the checked real folder,
 * so a folder swapped for a link after the check makes the rename fail rather than land outside.
 * The rename replaces a link at the target itself; it never writes through it.
 */
export async function write(
  path: string,
  bytes: Uint8Array,
  expectSha256: string | null | undefined,
  makeParents: boolean,
  givenMode: number | undefined,
  within: ResolvedFolder,
): Promise<{ sha256: string; created: boolean }> {
  // The current file is hashed in chunks, never held whole, whatever its size.
  let existing: string | null = null;
  let mode = 0o644;
  let current: Checked | null = null;
  try {
    current = checkPath(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (current !== null) {
    // Opened as every read is: a regular file only, never waiting in its open.
    const handle = openChecked(current);
    mode = current.info.mode ?? 0o644;
    existing = await hashOpened(handle);
  }
  if (givenMode !== undefined) mode = givenMode;
  if (expectSha256 !== undefined) {
    if (existing !== expectSha256) {
      const error = new Error(
        existing === null
          ? "the file was removed after it was approved"
          : expectSha256 === null
          ? "a file appeared at that path after the write was approved"
          : "the file changed after the write was approved",
      );
      error.name = "Changed";
      throw error;
    }
  }
  const dir = dirOf(path);
  const name = path.slice(dir.length).replace(/^[\\/]/, "");
  if (name === "" || name === "." || name === "..") throw new OutsideWall("not a file name");
  // The folder the file is made in: the one the policy layer resolved, or made below it.
  const folder = makeParents
    ? makeDirsInside(dir, dirOf, within)
    : asResolved(checkPath(dir, true), within);
  if (!folder.info.isDirectory) throw new Deno.errors.NotADirectory("not a directory");
  const tmp = `${folder.real}/.bravebot-${crypto.randomUUID()}.tmp`;
  const target = `${folder.real}/${name}`;
  beforeAct("create", tmp);
  // createNew: the temporary name is never a link followed (O_EXCL), and always a new file.
  const file = Deno.openSync(tmp, { write: true, createNew: true, mode: mode & 0o777 });
  try {
    try {
      // Permission bits only: a setuid or setgid bit never carries over to new content.
      if (Deno.build.os !== "windows") Deno.chmodSync(tmp, mode & 0o777);
      // The folder the file was made in is the folder checked; only then are bytes written.
      stillSame(folder);
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    } finally {
      file.close();
    }
    Deno.renameSync(tmp, target);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* gone, or its folder swapped away: nothing of ours to remove */ }
    throw e;
  }
  return { sha256: await sha256Hex(bytes), created: existing === null };
}

/**
 * Makes the folder at `path` and any missing above it, each made in a checked folder and checked
 * after (`makeDirsInside`); a folder already there is left as it is, anything else refuses.
 */
export function makeDir(path: string, within: ResolvedFolder): { made: true } {
  makeDirsInside(path, dirOf, within);
  return { made: true };
}

/**
 * Removes the regular file at `path` if it still hashes to `expectSha256`. A link is never
 * followed (it is refused as not a regular file); the file is hashed through a checked handle,
 * and unlinked by its name in the checked real folder, so a folder swapped after the check makes
 * the unlink miss rather than land outside.
 */
export async function remove(
  path: string,
  expectSha256: string,
  within: ResolvedFolder,
): Promise<{ removed: true }> {
  const info = lstatInside(path, dirOf);
  if (!info.isFile) throw notAFile();
  if (await hashOpened(openInside(path)) !== expectSha256) {
    const error = new Error("the file changed since");
    error.name = "Changed";
    throw error;
  }
  const dir = dirOf(path);
  const name = path.slice(dir.length).replace(/^[\\/]/, "");
  if (name === "" || name === "." || name === "..") throw new OutsideWall("not a file name");
  const folder = asResolved(checkPath(dir, true), within);
  stillSame(folder);
  Deno.removeSync(`${folder.real}/${name}`);
  return { removed: true };
}
