/**
 * The kernel wall's module cache (issue 24). Under `deno run`, the wall's child gets an empty,
 * read-only `DENO_DIR`, so every child transpiled and compiled the worker's modules again: about
 * 0.3 s a child. Here that work is done once per program version and source, by us, outside the
 * wall, into a folder of the state directory that each child then gets read-only.
 *
 * Who could write it, as an attacker would look:
 * - the child: the folder is bound read-only over `/deno-dir`, and a folder that lies inside the
 *   workspace or the scratch folder (or holds one of them), which the child may write through its
 *   own binds, is not used at all ({@link usableCache});
 * - a confined run stage: the whole state directory is behind a tmpfs in its box (sandbox.ts
 *   `bwrapArgs`, `protectedDirs`);
 * - the warm-up itself: it runs our own modules from the program's source folder with no
 *   permission at all (no read, no write, no run) and reads nothing of the workspace;
 * - another user: every folder from the state directory down is checked to be a real folder
 *   (not a link), owned by this user and writable by nobody else, and every folder above it to
 *   be this user's or root's and writable by no one else unless sticky, before each use.
 * What is left is this user's own processes, which could equally rewrite the program's source or
 * Deno's own cache that the main process loads: the cache is trusted no more than those.
 * A folder that fails a check is not used (the child compiles in memory, slow but sound).
 */
import { createHash } from "node:crypto";

/**
 * The child's `deno run` and its flags but its permissions (kernel.ts `childArgv`): the warm-up
 * runs the same, so that what it caches is what the child looks for.
 */
export const CHILD_RUN = [
  "run",
  "--no-prompt",
  "--no-config",
  "--no-lock",
  "--no-npm",
  "--no-remote",
] as const;

/** The folder under the state directory that holds one cache per key. */
export const CACHE_FOLDER = "kernel-modules";

/** The source folders the child's modules come from (kernel_child.ts imports nothing else). */
export const CHILD_SOURCE_FOLDERS = ["worker", "util"];

/**
 * The key of a cache: the program's version, Deno's, and a hash of the child's source files
 * (every `.ts` under {@link CHILD_SOURCE_FOLDERS} of `root`, tests left out), so an edited
 * checkout gets a cache of its own. Deno checks each cached file against its source anyway; the
 * key keeps versions apart and an old cache from being mistaken for a warm one.
 */
export function cacheKey(version: string, root: string): string {
  const h = createHash("sha256");
  h.update(`${version}\0${Deno.version.deno}\0`);
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) files.push(path);
    }
  };
  for (const folder of CHILD_SOURCE_FOLDERS) walk(`${root}/${folder}`);
  for (const path of files.sort()) {
    h.update(`${path.slice(root.length)}\0`);
    h.update(Deno.readFileSync(path));
    h.update("\0");
  }
  return `${version.replace(/[^0-9A-Za-z.-]/g, "_")}-${h.digest("hex").slice(0, 24)}`;
}

/** Whether `child` is `parent` or lies below it (both absolute, normalised). */
function within(parent: string, child: string): boolean {
  return child === parent || child.startsWith(`${parent.replace(/\/+$/, "")}/`);
}

const parentOf = (path: string) => path.slice(0, path.lastIndexOf("/")) || "/";

/**
 * Why `dir` must not be a child's cache, or null when it may be: it is a real path of the form
 * `STATE/kernel-modules/KEY`; it, `kernel-modules` and the state directory are each a real
 * folder (no link), owned by `uid` and writable by no group and no one else; each folder above
 * the state directory is `uid`'s or root's, writable by no one else unless sticky; and it neither lies
 * inside nor holds one of `places` (the workspace and the scratch folder, which the child may
 * write through its own binds). Asked where a child's command line is made (kernel.ts
 * `childArgv`), each time.
 */
export function usableCache(dir: string, places: readonly string[], uid: number): string | null {
  if (!dir.startsWith("/") || parentOf(dir).split("/").pop() !== CACHE_FOLDER) {
    return "the module cache is not a key folder of the state directory's cache";
  }
  for (const p of places) {
    if (within(p, dir) || within(dir, p)) {
      return "the module cache overlaps a folder the effect worker may write";
    }
  }
  try {
    if (Deno.realPathSync(dir) !== dir) return "the module cache's path goes through a link";
  } catch {
    return "the module cache is missing";
  }
  for (const d of [dir, parentOf(dir), parentOf(parentOf(dir))]) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(d);
    } catch {
      return "a folder of the module cache cannot be read";
    }
    if (!info.isDirectory) return "a folder of the module cache is not a folder";
    if (info.uid !== uid) return "a folder of the module cache belongs to another user";
    if (((info.mode ?? 0) & 0o022) !== 0) {
      return "a folder of the module cache is writable by others";
    }
  }
  // Above the state directory: whoever may write one of these folders may move the checked cache
  // away before the child's bind and put theirs in its place. This user's or root's, and writable
  // by no one else unless sticky (/tmp: no one renames there what is not theirs).
  for (let d = parentOf(parentOf(parentOf(dir)));; d = parentOf(d)) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(d);
    } catch {
      return "a folder above the state directory cannot be read";
    }
    const mode = info.mode ?? 0;
    if (
      !info.isDirectory || (info.uid !== uid && info.uid !== 0) ||
      ((mode & 0o022) !== 0 && (mode & 0o1000) === 0)
    ) return "a folder above the state directory may be changed by another user";
    if (d === "/") return null;
  }
}

export type CacheResult = { dir: string } | { dir: null; why: string };

export interface PrepareOptions {
  /** The state directory (made private when missing). */
  stateDir: string;
  version: string;
  /** The child's entry module and the source folder (the kernel plan's `module`). */
  module: { entry: string; root: string };
  uid: number;
}

/** Caches in flight in this process, by folder: two sessions opened at once warm it once. */
const preparing = new Map<string, Promise<CacheResult>>();

/**
 * The child's module cache for this version and source: the one already there when it passes
 * {@link usableCache}, else a new one warmed now ({@link warm}) in a fresh private folder and
 * moved into place whole, so no child sees one half written. Never throws: a cache that cannot be
 * made is `dir: null` and why.
 */
export function moduleCache(options: PrepareOptions): Promise<CacheResult> {
  let key: string;
  try {
    key = cacheKey(options.version, options.module.root);
  } catch (e) {
    return Promise.resolve({ dir: null, why: `the child's sources: ${(e as Error).message}` });
  }
  let running = preparing.get(`${options.stateDir}\0${key}`);
  if (!running) {
    running = prepare(options, key);
    preparing.set(`${options.stateDir}\0${key}`, running);
  }
  return running;
}

async function prepare(options: PrepareOptions, key: string): Promise<CacheResult> {
  let base: string;
  try {
    await Deno.mkdir(options.stateDir, { recursive: true, mode: 0o700 });
    base = `${await Deno.realPath(options.stateDir)}/${CACHE_FOLDER}`;
    await Deno.mkdir(base, { recursive: true, mode: 0o700 });
  } catch (e) {
    return { dir: null, why: `the module cache could not be made: ${(e as Error).message}` };
  }
  const dir = `${base}/${key}`;
  const check = () => usableCache(dir, [], options.uid);
  if (check() === null) {
    // Its time of last use, which removeStale goes by.
    await Deno.utime(dir, new Date(), new Date()).catch(() => {});
    return { dir };
  }
  try {
    const fresh = await Deno.makeTempDir({ dir: base, prefix: ".warming-" });
    try {
      const why = await warm(options.module.entry, fresh);
      if (why) return { dir: null, why };
      try {
        await Deno.rename(fresh, dir);
      } catch {
        // Another process moved its own into place first: use that one (checked below).
      }
    } finally {
      await Deno.remove(fresh, { recursive: true }).catch(() => {});
    }
  } catch (e) {
    return { dir: null, why: `the module cache could not be made: ${(e as Error).message}` };
  }
  const why = check();
  if (!why) await removeStale(base, dir);
  return why ? { dir: null, why } : { dir };
}

/** A key's folder unused this long is removed when another is made; a warm-up left this long. */
export const STALE_MS = { key: 7 * 24 * 3_600_000, warming: 3_600_000 };

/**
 * Removes, best effort, the other keys' folders of `base` not used in {@link STALE_MS} (an edited
 * checkout makes a new one, about 3 MB) and warm-ups left behind by a process that died. A session
 * still running on a removed one keeps its children; one it starts later binds no cache
 * (`usableCache`: missing) and compiles in memory.
 */
export async function removeStale(base: string, keep: string, now = Date.now()): Promise<void> {
  try {
    for await (const e of Deno.readDir(base)) {
      const path = `${base}/${e.name}`;
      if (path === keep || !e.isDirectory) continue;
      try {
        const used = (await Deno.lstat(path)).mtime?.getTime() ?? now;
        const limit = e.name.startsWith(".warming-") ? STALE_MS.warming : STALE_MS.key;
        if (now - used > limit) await Deno.remove(path, { recursive: true });
      } catch { /* gone meanwhile, or not ours to remove */ }
    }
  } catch { /* the folder cannot be listed: nothing removed */ }
}

/**
 * Fills `denoDir` with what the child loads: `deno run` of the child's entry in its `--warm`
 * mode, which imports every module the child uses and exits, with no permission at all and an
 * empty environment. Twice: Deno's cache databases get their query statistics only when a run
 * finds them already there, and a database without them is not used read-only (the child then
 * took as long as with no cache: 100–115 ms of CPU against 62–73, medians of 9, measured in the
 * box). Null when it worked, else why.
 */
export async function warm(entry: string, denoDir: string): Promise<string | null> {
  for (let round = 0; round < 2; round++) {
    const why = await warmOnce(entry, denoDir);
    if (why) return why;
  }
  return null;
}

async function warmOnce(entry: string, denoDir: string): Promise<string | null> {
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...CHILD_RUN, entry, "--warm"],
      clearEnv: true,
      env: { DENO_DIR: denoDir },
      cwd: "/",
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return out.code === 0 ? null : `warming the module cache failed (exit ${out.code})`;
  } catch (e) {
    return `warming the module cache failed: ${(e as Error).message}`;
  }
}
