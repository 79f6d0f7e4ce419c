/**
 * Reading and writing the small JSON state files. A file that cannot be parsed or validated
 * is renamed aside (never silently replaced, never trusted) and reported with its path.
 */
import { dirname } from "node:path";
import type { z } from "zod";
import { ensurePrivateDir } from "./dirs.ts";

export type Loaded<T> =
  | { status: "missing" }
  | { status: "ok"; value: T }
  | { status: "corrupt"; problem: string };

/**
 * What one version of a state file looks like from outside: device, inode, size, times and its
 * first bytes. Writers replace a file by rename, so a new version has a new inode; a writer that
 * keeps a generation counter near the top (the trust map) makes the first bytes differ too, even
 * when the file system hands a freed inode out again.
 */
export type Stamp = string;

const STAMP_HEAD_BYTES = 64;

function stampOf(info: Deno.FileInfo, head: Uint8Array): Stamp {
  const text = new TextDecoder().decode(head.subarray(0, STAMP_HEAD_BYTES));
  return [info.dev, info.ino, info.size, info.mtime?.getTime(), info.ctime?.getTime(), text]
    .join(":");
}

/**
 * The stamp of the file at `path` as it is now, or null when there is none: one open, a stat and
 * a short read, cheap enough to ask before every decision. A file that cannot be read gets a
 * stamp that equals no other, so the caller reads it again and meets the problem there.
 */
export function currentStamp(path: string): Stamp | null {
  try {
    using file = Deno.openSync(path, { read: true });
    const info = file.statSync();
    const head = new Uint8Array(STAMP_HEAD_BYTES);
    const n = file.readSync(head) ?? 0;
    return stampOf(info, head.subarray(0, n));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    return `unreadable:${crypto.randomUUID()}`;
  }
}

/** A file's text and the stamp of exactly that version (one open file: one inode). */
async function readVersion(path: string): Promise<{ text: string; stamp: Stamp }> {
  using file = await Deno.open(path, { read: true });
  const info = await file.stat();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const buf = new Uint8Array(Math.max(64 * 1024, (info.size ?? 0) + 1 - total));
    const n = await file.read(buf);
    if (n === null) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { text: new TextDecoder().decode(bytes), stamp: stampOf(info, bytes) };
}

type Read<T> =
  | { status: "missing" }
  | { status: "ok"; value: T; stamp: Stamp }
  | { status: "bad"; why: string };

async function readParsed<T>(path: string, schema: z.ZodType<T>): Promise<Read<T>> {
  try {
    const { text, stamp } = await readVersion(path);
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return { status: "ok", value: parsed.data, stamp };
      const issue = parsed.error.issues[0];
      return { status: "bad", why: `${issue.path.join(".") || "(top level)"}: ${issue.message}` };
    } catch (e) {
      return { status: "bad", why: `not valid JSON (${(e as Error).message})` };
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { status: "missing" };
    // A folder or an unreadable file in its place is no more trustworthy than bad JSON.
    return { status: "bad", why: `unreadable (${(e as Error).message})` };
  }
}

/** Reads `path` while holding its lock: a bad file is set aside at once, since no writer can be in the middle. */
async function loadHeld<T>(
  path: string,
  schema: z.ZodType<T>,
): Promise<{ loaded: Loaded<T>; stamp: Stamp | null }> {
  const read = await readParsed(path, schema);
  const usable = usableRead(read);
  if (usable) return usable;
  const why = read.status === "bad" ? read.why : "unreadable";
  const problem = await setAside(path, `was corrupt (${why})`);
  return { loaded: { status: "corrupt", problem }, stamp: null };
}

/** A read that needs nothing more (a good file, or none), as a load; null for a corrupt one. */
function usableRead<T>(read: Read<T>): { loaded: Loaded<T>; stamp: Stamp | null } | null {
  if (read.status === "ok") {
    return { loaded: { status: "ok", value: read.value }, stamp: read.stamp };
  }
  if (read.status === "missing") return { loaded: read, stamp: null };
  return null;
}

/** Loads and validates `path`; a corrupt file is moved to `path.corrupt-<time>` and reported. */
export async function loadJsonFile<T>(path: string, schema: z.ZodType<T>): Promise<Loaded<T>> {
  return (await loadJsonFileStamped(path, schema)).loaded;
}

/**
 * {@link loadJsonFile}, with the stamp of the version read (null when there is none), for a
 * reader that later asks {@link currentStamp} whether to read again. No lock is taken to read:
 * writers replace the file by rename, so a reader sees one whole version. A file that looks
 * corrupt is looked at again under the lock before it is set aside, so a good version a writer
 * just put in its place is never the one moved away.
 */
export async function loadJsonFileStamped<T>(
  path: string,
  schema: z.ZodType<T>,
): Promise<{ loaded: Loaded<T>; stamp: Stamp | null }> {
  const usable = usableRead(await readParsed(path, schema));
  return usable ?? await withFileLock(path, () => loadHeld(path, schema));
}

/**
 * Runs `fn` holding an exclusive lock on `path.lock`, a sidecar that is never replaced: the
 * state file itself is replaced by rename, so a lock on it would be lost with the old inode.
 * Other processes (and other callers in this one) wait; a holder that dies releases it.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  await ensurePrivateDir(dirname(path));
  using lock = await Deno.open(`${path}.lock`, {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  await lock.lock(true);
  try {
    return await fn();
  } finally {
    await lock.unlock();
  }
}

/**
 * Applies one change to a state file that more than one process may change: under the file's
 * lock it is read as it is now (never from a caller's memory), `change` is given that, and what
 * it returns replaces the file by rename (`undefined`: leave it as it is). So two sessions'
 * changes both land, and a removal is not undone by another session's older copy. A corrupt
 * file is set aside and reported to `change` as such. Returns what the file now holds, with
 * its stamp.
 */
export async function updateJsonFile<T>(
  path: string,
  schema: z.ZodType<T>,
  change: (current: Loaded<T>) => T | undefined | Promise<T | undefined>,
): Promise<{ value: T | null; stamp: Stamp | null }> {
  return await withFileLock(path, async () => {
    const { loaded } = await loadHeld(path, schema);
    const next = await change(loaded);
    if (next !== undefined) await saveJsonFile(path, next);
    const value = next !== undefined ? next : loaded.status === "ok" ? loaded.value : null;
    // Taken under the lock, so it is the stamp of exactly what `value` describes.
    return { value, stamp: currentStamp(path) };
  });
}

/**
 * Moves a state file that cannot be used to `path.corrupt-<time>`, so the person can inspect
 * it and nothing later writes over it; returns the sentence that reports it.
 */
export async function setAside(path: string, what: string): Promise<string> {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  try {
    await Deno.rename(path, aside);
  } catch (e) {
    return `${path} ${what}; it could not be moved aside (${
      (e as Error).message
    }) and was not used`;
  }
  return `${path} ${what}; it was moved to ${aside}`;
}

/**
 * Writes JSON atomically: a temporary file in the same folder, then a rename over the old one.
 * For a file other processes change too, use {@link updateJsonFile}, which holds the lock.
 */
export async function saveJsonFile(path: string, value: unknown): Promise<void> {
  await ensurePrivateDir(dirname(path));
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/**
 * Appends one JSON line. If the file ends in a torn line (a kill mid-write), a newline goes
 * first, so the new record is never glued onto the broken one. The few system calls are made
 * synchronously: each async hop cost 30-100 µs, and every tool call appends to the audit log
 * and the transcript (an append went from ~120 µs to ~20 µs). No other append to the
 * same file can come between the check of the last byte and the write.
 */
export function appendJsonLine(path: string, value: unknown): Promise<void> {
  try {
    const line = JSON.stringify(value) + "\n";
    using file = Deno.openSync(path, { append: true, create: true, read: true, mode: 0o600 });
    const size = file.statSync().size;
    let prefix = "";
    if (size > 0) {
      const last = new Uint8Array(1);
      file.seekSync(size - 1, Deno.SeekMode.Start);
      file.readSync(last);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    const bytes = new TextEncoder().encode(prefix + line);
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Reads a JSON-lines file written by {@link appendJsonLine}. A torn last line (a kill mid-write)
 * is dropped and reported; a bad line elsewhere is reported and skipped; a file that cannot be
 * read at all (a folder in its place) is set aside and reported.
 */
export async function readJsonLines(
  path: string,
): Promise<{ rows: unknown[]; problems: string[] }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { rows: [], problems: [] };
    return {
      rows: [],
      problems: [await setAside(path, `was unreadable (${(e as Error).message})`)],
    };
  }
  const rows: unknown[] = [];
  const problems: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      rows.push(JSON.parse(line));
    } catch {
      const torn = i === lines.length - 1;
      problems.push(
        `${path}: line ${i + 1} ${torn ? "was cut off (dropped)" : "is not JSON (skipped)"}`,
      );
    }
  });
  return { rows, problems };
}
