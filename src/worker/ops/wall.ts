/**
 * The effect worker's own containment checks (docs/contract.md §13.3, the process wall). Deno
 * checks a permission against the path string, so a link inside the workspace reaches outside it;
 * every file operation of the worker therefore goes through this module first:
 *
 * 1. `stat` the path (following links): the identity, device and inode, of what it names now;
 * 2. `realPath` it, and refuse unless the real path lies inside the worker's roots and, looked at
 *    again without following a link, still names what step 1 found (so the identity and the
 *    place reported together belong to one file);
 * 3. act (open, list, create) on the real path;
 * 4. check that what was acted on is what was checked: the opened handle's `fstat`, or, where
 *    there is no handle (a listing, a folder made), a second `stat` of the real path, must have
 *    the identity of step 1.
 *
 * One change on disk at any moment — a file or a parent folder replaced by a link to outside,
 * before or during the operation — is caught by one of the steps: before 1, by 2; between 1 and
 * 2, by 2; between 2 and 3, by 4 (a different inode). A process that keeps changing the path
 * back and forth can still win (a link at 1 and 3, none at 2): docs/trust.md says so, and the
 * kernel wall (bwrap) is what stops it.
 *
 * **The roots are the worker's own Deno permissions.** A real path is inside when Deno grants
 * this thread read (for a write: write) permission on it. The main thread narrows the worker's
 * permissions to exactly the workspace and the scratch folder (permissions.ts), both real paths,
 * so the roots are those two and can never disagree with what Deno enforces, for any transport
 * that starts it behind narrowed permissions. What Deno's permissions cannot say is sent once,
 * before any request: the folders inside the roots that are refused all the same (Brave Bot's
 * state in a home-folder workspace, {@link setHidden}; a run of files in one folder is checked
 * through its folder, so a hidden folder's files are refused there too). A thread allowed to
 * read everywhere has no roots worth the name: the worker's entry (effect_worker.ts) then refuses
 * every path ({@link setRoots} with none). Tests that run the operations on the main thread (full
 * permissions) name their roots with {@link setRoots}.
 *
 * Refusals are {@link OutsideWall} errors, whose messages never carry the path.
 *
 * These checks keep the worker inside its roots; they cannot know which place inside them the
 * policy layer labelled. So every read also reports what it opened ({@link OpenedFile}: the
 * handle's device and inode, and the real path of step 2), and the policy layer compares that
 * with the entry it checked and labelled (`openedAsChecked`, policy/paths.ts).
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import type { OpenedFile, ResolvedFolder } from "../protocol.ts";

/** A path resolves outside the worker's roots, or changed between its check and its use. */
export class OutsideWall extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutsideWall";
  }
}

const OUTSIDE = "the path resolves outside the workspace and the scratch folder";
const SWAPPED = "the path changed between its check and its use";
const HIDDEN = "the path lies in Brave Bot's own state, which the effect worker may not reach";
const MOVED = "the folder is no longer the one resolved before the request (a link or another " +
  "folder took its place)";
const UNPLACED = "the request names no folder resolved for it";

/** Whether a real (link-free, absolute) path lies inside the roots, for reading or writing. */
type Roots = (real: string, write: boolean) => boolean;

function granted(name: "read" | "write", path: string): boolean {
  return Deno.permissions.querySync({ name, path }).state === "granted";
}

function parentOfReal(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i <= 0 ? path.slice(0, i + 1) || "/" : path.slice(0, i);
}

/** Folders known to be granted, by kind: the highest granted ancestor of a path once granted. */
const known = { read: [] as string[], write: [] as string[] };

/**
 * The roots Deno enforces for this thread: its read or write permission on the real path. A
 * grant covers everything below the granted folder, so once a path is granted, its highest
 * granted ancestor is remembered and later paths below it need no question to Deno (which
 * costs as much as a stat).
 */
const grantedRoots: Roots = (real, write) => {
  const name = write ? "write" : "read";
  const folders = known[name];
  for (const folder of folders) if (within(folder, real)) return true;
  if (!granted(name, real)) return false;
  let top = real;
  for (;;) {
    const up = parentOfReal(top);
    if (up === top || !granted(name, up)) break;
    top = up;
  }
  if (folders.length < 16) folders.push(top);
  return true;
};

let roots: Roots = grantedRoots;

function within(root: string, real: string): boolean {
  if (real === root) return true;
  const base = root.endsWith("/") || root.endsWith("\\") ? root : `${root}/`;
  return real.startsWith(base) ||
    (Deno.build.os === "windows" && real.startsWith(base.slice(0, -1) + "\\"));
}

/**
 * Names the roots explicitly (real paths; `[]`: none, every path is refused), or, with null,
 * goes back to the thread's own permissions. Called by the worker's entry when its permissions
 * are not narrowed, and by tests of these operations on the main thread.
 */
export function setRoots(paths: readonly string[] | null): void {
  roots = paths === null ? grantedRoots : (real) => paths.some((root) => within(root, real));
}

/** Folders inside the roots that are refused, and the places inside them that are not. */
let hidden: { hide: readonly string[]; open: readonly string[] } = { hide: [], open: [] };

/**
 * Names the folders inside the roots that no operation may reach (Brave Bot's state in a
 * home-folder workspace, permissions.ts `hiddenOf`): a real path in one is refused unless it lies
 * in an `open` place that is itself inside that folder (the session's scratch, in the state). The
 * same rule the kernel wall's box holds by covering them (kernel.ts `childArgv`); set once by the
 * worker's entry, before any request.
 */
export function setHidden(hide: readonly string[], open: readonly string[]): void {
  hidden = { hide: [...hide], open: [...open] };
}

/** Whether a real path lies in a hidden folder and in no place open inside it. */
export function isHidden(real: string): boolean {
  return hidden.hide.some((h) =>
    within(h, real) && !hidden.open.some((o) => within(h, o) && within(o, real))
  );
}

/** Where a swap hook is called: between a check and the act it guards. */
export type SwapStage = "real" | "open" | "list" | "create" | "mkdir";

let swapHook: ((stage: SwapStage, real: string) => void) | null = null;

/**
 * FOR TESTS ONLY: `fn` runs between every check and the act it guards (with the real path about
 * to be used), so a test can swap a file or folder for a link exactly there. No request can set
 * it; the worker's entry never calls this.
 */
export function setSwapHook(fn: ((stage: SwapStage, real: string) => void) | null): void {
  swapHook = fn;
}

/** The identity of a file: its device and inode (Deno's and node:fs's stat give the same). */
interface Identity {
  dev: number;
  ino: number | null;
}

function sameFile(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** What a path was when checked: its stat (links followed) and its real path, inside the roots. */
export interface Checked {
  real: string;
  info: Deno.FileInfo;
}

/**
 * Steps 1 and 2: the path's identity, then its real path, which must lie inside the roots.
 * Errors of the file system (NotFound, NotCapable, …) pass through as they are.
 */
export function checkPath(path: string, write = false): Checked {
  const info = Deno.statSync(path);
  swapHook?.("real", path);
  const real = Deno.realPathSync(path);
  if (!roots(real, write)) throw new OutsideWall(OUTSIDE);
  if (isHidden(real)) throw new OutsideWall(HIDDEN);
  // The stat and the real path are two looks: a link swapped in or out between them would pair
  // one file's identity with another's place (the link's target's bytes reported as opened at
  // the name the policy layer labelled). The real path must still name what the stat found.
  let there: Deno.FileInfo;
  try {
    there = Deno.lstatSync(real);
  } catch {
    throw new OutsideWall(SWAPPED);
  }
  if (!sameFile(there, info)) throw new OutsideWall(SWAPPED);
  return { real, info };
}

/** What was opened, for the policy layer: the handle's identity and the real path checked. */
export function openedOf(checked: Checked, info: Identity = checked.info): OpenedFile {
  return { dev: info.dev, ino: info.ino, real: checked.real };
}

/** A regular file opened for reading ({@link openChecked}), as a node:fs descriptor: close it once. */
export interface Opened {
  fd: number;
  /** The handle's size when it was opened. */
  size: number;
  /** Its permission bits as the handle's `fstat` gives them (`mode & 0o777`). */
  mode: number;
  opened: OpenedFile;
}

/** node:fs errors by code, named as Deno names them (the error names the policy layer sees). */
const ERROR_NAMES: Record<string, string> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
  EISDIR: "IsADirectory",
  ENOTDIR: "NotADirectory",
};

function denoNamed(e: unknown): unknown {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== "string" || !(e instanceof Error) || e.name !== "Error") return e;
  // The real path checked had no link in it: one there now was put there since.
  if (code === "ELOOP") return new OutsideWall(SWAPPED);
  const named = new Error("the file could not be opened");
  named.name = ERROR_NAMES[code] ?? "Unreadable";
  return named;
}

/** A checked path that is not a regular file: it is never opened. */
export function notAFile(): Error {
  const error = new Error("not a regular file");
  error.name = "NotAFile";
  return error;
}

/**
 * `O_NONBLOCK | O_NOFOLLOW | O_NOCTTY` where the platform has them (Windows has no FIFOs). On a
 * regular file `O_NONBLOCK` changes nothing; on a FIFO it makes the open return at once instead
 * of waiting for a writer.
 */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOFOLLOW ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Steps 3 and 4 for reading a regular file: the one way the worker opens a file it was handed
 * (every read, search, hash, and the hash of what a write or a removal replaces). Nothing a file
 * or a process racing the worker does makes it wait (docs/decisions.md, "A checked file is opened
 * without waiting"):
 *
 * - what the check found must be a regular file, so a FIFO or a device found there is never
 *   opened ({@link notAFile});
 * - the checked real path is opened with {@link READ_FLAGS}: a FIFO swapped in after the check
 *   opens at once rather than waiting for a writer that may never come (which would stall the
 *   worker, and with it every request after), and a link swapped in is not followed (where Deno
 *   does not resolve it itself first);
 * - the opened handle's `fstat` must be a regular file with the identity of step 1 (device and
 *   inode), so whatever was swapped in is closed unread ({@link OutsideWall}).
 *
 * A node:fs descriptor, not a Deno handle: `Deno.open` cannot open without waiting; and behind
 * narrowed permissions Deno's own handle `stat` resolves the file's path again on every call, so
 * its cost grows with the path's depth (13 µs two folders down, 124 µs 43 down), where node:fs's
 * `fstat` of the descriptor costs the same 14–16 µs at any depth (a search opens thousands).
 */
export function openChecked(checked: Checked): Opened {
  if (!checked.info.isFile) throw notAFile();
  swapHook?.("open", checked.real);
  let fd: number;
  try {
    fd = openSync(checked.real, READ_FLAGS);
  } catch (e) {
    throw denoNamed(e);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || !sameFile(info, checked.info)) throw new OutsideWall(SWAPPED);
    return { fd, size: info.size, mode: info.mode & 0o777, opened: openedOf(checked, info) };
  } catch (e) {
    closeSync(fd);
    throw denoNamed(e);
  }
}

/** Checks and opens `path` for reading: {@link checkPath} then {@link openChecked}. */
export function openInside(path: string): Opened {
  return openChecked(checkPath(path));
}

/** Step 4 where there is no handle: the real path still names what was checked. */
export function stillSame(checked: Checked): void {
  let now: Deno.FileInfo;
  try {
    now = Deno.statSync(checked.real);
  } catch {
    throw new OutsideWall(SWAPPED);
  }
  if (!sameFile(now, checked.info)) throw new OutsideWall(SWAPPED);
}

/**
 * A directory's entries, listed only once the directory is checked, and checked again after;
 * with the folder listed as the policy layer is told ({@link openedOf}: there is no handle).
 */
export function listInside(path: string): { entries: Deno.DirEntry[]; opened: OpenedFile } {
  const checked = checkPath(path);
  swapHook?.("list", checked.real);
  const entries = [...Deno.readDirSync(checked.real)];
  stillSame(checked);
  return { entries, opened: openedOf(checked) };
}

/** Calls the swap hook for an act this module does not do itself (the write's new file). */
export function beforeAct(stage: SwapStage, real: string): void {
  swapHook?.(stage, real);
}

/**
 * `lstat` of the path, its last component not followed: its folder (or, when the path is not a
 * link, the path itself) must resolve inside the roots, and still be what was checked after.
 */
export function lstatInside(path: string, parentOf: (path: string) => string): Deno.FileInfo {
  const info = Deno.lstatSync(path);
  const checked = checkPath(info.isSymlink ? parentOf(path) : path);
  // The path as it was lstat'ed must be what the check resolved (a link swapped in after the
  // lstat resolves elsewhere; a folder swapped above it changes the identity).
  if (!info.isSymlink && !sameFile(info, checked.info)) throw new OutsideWall(SWAPPED);
  return info;
}

/**
 * The folder an act happens in must be the folder the policy layer resolved just before asking
 * (protocol.ts {@link ResolvedFolder}): the same real path and the same device and inode. A link
 * or another folder put in its place after that look, and before the worker's own, passes every
 * containment check (it is inside the roots) yet is not where the act was decided. The one
 * comparison of the rule, for `write`, `remove` and `makeDir` (fs.ts). The protocol requires the
 * place; a message that comes without one (the type is not checked across the wall) is refused,
 * never acted on with only the containment check.
 */
export function asResolved(folder: Checked, place: ResolvedFolder): Checked {
  if (typeof place !== "object" || place === null || typeof place.real !== "string") {
    throw new OutsideWall(UNPLACED);
  }
  if (folder.real !== place.real || !sameFile(folder.info, place)) throw new OutsideWall(MOVED);
  return folder;
}

/**
 * Makes the missing folders of `dir` one at a time, each in a folder already checked, and checks
 * each after it is made. The deepest existing ancestor must be a folder inside the roots. A
 * folder swapped for a link between a check and a `mkdir` makes the new, empty folder land
 * outside: that is seen, the folder removed again (through the same path), and the write refused.
 * The deepest existing folder must be `place` ({@link asResolved}). Answers `dir`
 * as checked, once made.
 */
export function makeDirsInside(
  dir: string,
  parentOf: (path: string) => string,
  place: ResolvedFolder,
): Checked {
  const missing: string[] = [];
  let at = dir;
  let base: Checked;
  for (;;) {
    try {
      base = checkPath(at, true);
      break;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      const up = parentOf(at);
      if (up === at) throw e;
      missing.push(at.slice(up.length).replace(/^[\\/]/, ""));
      at = up;
    }
  }
  if (!base.info.isDirectory) throw new Deno.errors.NotADirectory("not a directory");
  asResolved(base, place);
  for (let i = missing.length - 1; i >= 0; i--) {
    const next = `${base.real}/${missing[i]}`;
    swapHook?.("mkdir", next);
    let madeHere = false;
    try {
      Deno.mkdirSync(next);
      madeHere = true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    try {
      stillSame(base);
      const made = checkPath(next, true);
      if (made.real !== next || !made.info.isDirectory) throw new OutsideWall(SWAPPED);
      base = made;
    } catch (e) {
      // The empty folder just made, wherever the swapped path put it (never a full one).
      if (madeHere) {
        try {
          Deno.removeSync(next);
        } catch { /* not empty, or gone */ }
      }
      throw e;
    }
  }
  return base;
}

/**
 * The checks for many files read in a row (readMany, a search), at a lower cost per file: a
 * request's paths come folder by folder, so each run of paths in the same folder checks that
 * folder once (steps 1 and 2: its identity, its real path inside the roots), then per file only
 * `lstat`s it in the checked real folder and compares the opened handle with that `lstat`; when
 * the run ends the folder is checked again (step 4). A folder swapped for a link while its files
 * were read fails that last check, and the caller then undoes what it read in the run. A file
 * that is itself a link gets the full check of {@link checkPath}.
 */
export class FolderRuns {
  #dir: string | null = null;
  #folder: Checked | null = null;
  #error: unknown = null;
  /** Whether the current folder's path is its real path (no link on the way). */
  #direct = false;

  /**
   * The check of `path` (a file of the current run, or the first of a new one: call
   * {@link end} first when `folderOf(path)` differs from {@link dir}). `linkFree`: whether the
   * path passes through no link at all.
   */
  check(path: string, dir: string): { checked: Checked; linkFree: boolean } {
    if (dir !== this.#dir) this.#begin(dir);
    if (this.#error !== null) throw this.#error;
    const name = path.slice(dir.length + 1);
    if (name === "" || name === "." || name === ".." || /[\\/]/.test(name)) {
      const checked = checkPath(path);
      return { checked, linkFree: checked.real === path };
    }
    const real = `${this.#folder!.real}/${name}`;
    const info = Deno.lstatSync(real);
    if (info.isSymlink) return { checked: checkPath(path), linkFree: false };
    return { checked: { real, info }, linkFree: this.#direct };
  }

  /** The current run's folder (null before the first). */
  get dir(): string | null {
    return this.#dir;
  }

  #begin(dir: string): void {
    this.#dir = dir;
    this.#folder = null;
    this.#error = null;
    try {
      this.#folder = checkPath(dir);
      this.#direct = this.#folder.real === dir;
    } catch (e) {
      this.#error = e;
    }
  }

  /** Ends the current run: false when its folder is no longer the folder checked. */
  end(): boolean {
    const folder = this.#folder;
    this.#dir = this.#folder = this.#error = null;
    if (folder === null) return true;
    try {
      stillSame(folder);
      return true;
    } catch {
      return false;
    }
  }
}

/** The folder part of an absolute path, as the worker's operations split it. */
export function folderOf(path: string): string {
  return parentOfReal(path);
}

/** The error a run's files get when their folder failed its last check. */
export function swappedError(): OutsideWall {
  return new OutsideWall(SWAPPED);
}
