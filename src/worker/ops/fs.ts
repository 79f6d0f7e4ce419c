/** File-system primitives of the effect worker. Each acts on an absolute path it is handed. */
import type { EntryInfo, PackedDirs, ReadManyItem, StatInfo, StatRead } from "../protocol.ts";

function kindOf(info: Deno.FileInfo): StatInfo["kind"] {
  if (info.isSymlink) return "symlink";
  if (info.isFile) return "file";
  if (info.isDirectory) return "directory";
  return "other";
}

export async function stat(path: string, follow: boolean): Promise<StatInfo> {
  const info = follow ? await Deno.stat(path) : await Deno.lstat(path);
  return { kind: kindOf(info), size: info.size, mtimeMs: info.mtime?.getTime() ?? null };
}

/** Reads `length` bytes from `offset` (the whole file when no length is given). */
export async function read(path: string, offset = 0, length?: number): Promise<Uint8Array> {
  if (offset === 0 && length === undefined) return await Deno.readFile(path);
  using file = await Deno.open(path, { read: true });
  if (offset > 0) await file.seek(offset, Deno.SeekMode.Start);
  const size = length ?? (await file.stat()).size - offset;
  const buffer = new Uint8Array(Math.max(0, size));
  let filled = 0;
  while (filled < buffer.length) {
    const n = await file.read(buffer.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

/**
 * Stat and read in one round trip (a tool call's cost is mostly round trips: issue 7). The
 * path is stat'ed first, so a FIFO or device is never opened and an oversized file never read.
 * Synchronous for the reason given at readMany.
 */
export function readWithStat(path: string, maxBytes: number): StatRead {
  const info = Deno.statSync(path);
  const stat: StatInfo = {
    kind: kindOf(info),
    size: info.size,
    mtimeMs: info.mtime?.getTime() ?? null,
  };
  if (stat.kind !== "file" || stat.size > maxBytes) return { stat, bytes: null };
  return { stat, bytes: Deno.readFileSync(path) };
}

/**
 * Reads many files in one round trip, skipping any over `maxBytes`. Synchronous on purpose:
 * this thread does nothing else meanwhile, and a blocking read skips the async-op hop per file,
 * which is most of the cost when a search reads thousands of small files.
 */
export function readMany(paths: string[], maxBytes: number): ReadManyItem[] {
  return paths.map((path): ReadManyItem => {
    try {
      const info = Deno.statSync(path);
      if (!info.isFile) return { path, skipped: "not_file" };
      if (info.size > maxBytes) return { path, skipped: "too_big", size: info.size };
      return { path, bytes: Deno.readFileSync(path), size: info.size };
    } catch (e) {
      return { path, skipped: "error", error: (e as Error).name };
    }
  });
}

/**
 * Lists many directories in one round trip; symlinks are reported as such, never followed.
 * Synchronous for the same reason as readMany: one async op per directory entry was most of
 * a large listing's cost (issue 7: 2× faster over 800-1,800 directories).
 */
export function readDirs(paths: string[]): ({ entries: EntryInfo[] } | { error: string })[] {
  return paths.map((path) => {
    try {
      const entries: EntryInfo[] = [];
      for (const e of Deno.readDirSync(path)) {
        entries.push({
          name: e.name,
          kind: e.isSymlink ? "symlink" : e.isFile ? "file" : e.isDirectory ? "directory" : "other",
        });
      }
      return { entries };
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
  for (const path of paths) {
    const here: string[] = [];
    const special: string[] = [];
    try {
      for (const e of Deno.readDirSync(path)) {
        here.push(e.name);
        // Most entries are files; a symbolic link is never also a file here (not followed).
        if (!e.isFile) special.push(e.name, e.isSymlink ? "l" : e.isDirectory ? "d" : "o");
      }
      errors.push(null);
    } catch (e) {
      here.length = special.length = 0;
      errors.push(`${(e as Error).name}: ${(e as Error).message}`);
    }
    // The default sort compares UTF-16 code units, as `<` does; names are unique.
    here.sort();
    names.push(here.join("\0"));
    kinds.push(special.join("\0"));
  }
  return { names, kinds, errors };
}

/** The project's one SHA-256, loaded on first use so a worker that never hashes starts faster. */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const { sha256 } = await import("../../util/hash.ts");
  return sha256(bytes);
}

export async function hash(path: string): Promise<string> {
  return await sha256Hex(await Deno.readFile(path));
}

function dirOf(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i <= 0 ? path.slice(0, i + 1) || "/" : path.slice(0, i);
}

/**
 * Writes atomically: a temporary file beside the target, then a rename over it. When
 * `expectSha256` is given, the current file must still have that hash (null: must not exist),
 * so a file that changed after the person approved is not overwritten.
 */
export async function write(
  path: string,
  bytes: Uint8Array,
  expectSha256: string | null | undefined,
  makeParents: boolean,
): Promise<{ sha256: string; created: boolean }> {
  let existing: Uint8Array | null = null;
  try {
    existing = await Deno.readFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (expectSha256 !== undefined) {
    const current = existing === null ? null : await sha256Hex(existing);
    if (current !== expectSha256) {
      const error = new Error(
        current === null
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
  if (makeParents) await Deno.mkdir(dir, { recursive: true });
  const mode = existing === null ? 0o644 : (await Deno.stat(path)).mode ?? 0o644;
  const tmp = `${dir}/.bravebot-${crypto.randomUUID()}.tmp`;
  try {
    // Permission bits only: a setuid or setgid bit never carries over to new content.
    await Deno.writeFile(tmp, bytes, { mode: mode & 0o777, createNew: true });
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  return { sha256: await sha256Hex(bytes), created: existing === null };
}
