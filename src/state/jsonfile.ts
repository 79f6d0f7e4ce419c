/**
 * Reading and writing the small JSON state files. A file that cannot be parsed or validated
 * is renamed aside (never silently replaced, never trusted) and reported with its path.
 */
import { dirname } from "node:path";
import type { z } from "zod";
import { printErr } from "../util/output.ts";
import { parseJsonWith } from "../util/json_schema.ts";
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

/**
 * {@link currentStamp} for a file asked about before every decision (the trust map), keeping
 * the version last stamped open. While it is open its inode cannot be handed out again, so when
 * a stat of the path shows the same device and inode, the path names that very file: its first
 * bytes are read through the kept handle, without opening the path again. The stamp is the
 * same as {@link currentStamp}'s, from the same fields.
 */
export class StampReader {
  #file: Deno.FsFile | null = null;
  #dev = -1;
  #ino = -1;

  constructor(readonly path: string) {}

  current(): Stamp | null {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(this.path);
    } catch (e) {
      this.close();
      if (e instanceof Deno.errors.NotFound) return null;
      return `unreadable:${crypto.randomUUID()}`;
    }
    if (this.#file === null || info.dev !== this.#dev || info.ino !== this.#ino) {
      return this.#reopen();
    }
    try {
      const head = new Uint8Array(STAMP_HEAD_BYTES);
      this.#file.seekSync(0, Deno.SeekMode.Start);
      const n = this.#file.readSync(head) ?? 0;
      return stampOf(info, head.subarray(0, n));
    } catch {
      this.close();
      return `unreadable:${crypto.randomUUID()}`;
    }
  }

  /** Opens the path's present version, keeps it, and stamps it from its own handle. */
  #reopen(): Stamp | null {
    this.close();
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(this.path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      return `unreadable:${crypto.randomUUID()}`;
    }
    try {
      const info = file.statSync();
      const head = new Uint8Array(STAMP_HEAD_BYTES);
      const n = file.readSync(head) ?? 0;
      this.#file = file;
      this.#dev = info.dev;
      this.#ino = info.ino ?? -1;
      return stampOf(info, head.subarray(0, n));
    } catch {
      file.close();
      return `unreadable:${crypto.randomUUID()}`;
    }
  }

  /** Lets the kept version go; the next {@link current} opens the path again. */
  close(): void {
    try {
      this.#file?.close();
    } catch { /* already closed */ }
    this.#file = null;
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
    const parsed = parseJsonWith(text, schema);
    if (parsed.kind === "ok") return { status: "ok", value: parsed.value, stamp };
    if (parsed.kind !== "invalid") {
      return { status: "bad", why: `not valid JSON (${parsed.message})` };
    }
    const issue = parsed.error.issues[0];
    return { status: "bad", why: `${issue.path.join(".") || "(top level)"}: ${issue.message}` };
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
 * How long a state file's lock is waited for before the wait is said again (a change that must
 * be saved) or given up ({@link LockWait.fail}): a session's own changes hold it for
 * milliseconds, so ten seconds is a holder that is stopped or stuck, not a busy one.
 */
export const LOCK_WAIT_MS = 10_000;

/** How a caller waits for a lock another process (or another caller here) holds. */
export interface LockWait {
  /** The bound, in milliseconds ({@link LOCK_WAIT_MS}). */
  boundMs?: number;
  /**
   * Give up at the bound with a {@link LockTimeout}: only for a change whose loss is safe — one
   * asked for before anything was done (the trust command, first use, the input history). By
   * default the wait goes on, said again at each bound: the trust map's record of a write that
   * was made, or of a run's changes, must land, since a file without its entry is labelled by
   * its folder (a `U` write in a trusted folder would read as trusted).
   */
  fail?: boolean;
  /** Where the status lines go; by default where {@link reportLockWaits} said (stderr). */
  onWait?: (line: string) => void;
}

/** A lock not released within the bound; `pid` is the holder's, when its lock file says it. */
export class LockTimeout extends Error {
  override name = "LockTimeout";
  constructor(message: string, readonly pid: number | null) {
    super(message);
  }
}

const toStderr = (line: string) => printErr(`bravebot: ${line}`);
let lockReporter: (line: string) => void = toStderr;

/**
 * Where the lines about waiting for a lock go when the caller gave none: stderr unless a screen
 * that would be torn by it says otherwise (null: stderr again).
 */
export function reportLockWaits(report: ((line: string) => void) | null): void {
  lockReporter = report ?? toStderr;
}

/**
 * Runs `fn` holding an exclusive lock on `path.lock`, a sidecar that is never replaced: the
 * state file itself is replaced by rename, so a lock on it would be lost with the old inode.
 * Other processes (and other callers in this one) wait, as `wait` says: a line saying who holds
 * it, then at each bound either a failure naming the holder or the line again. The holder writes
 * its pid into the lock file while it holds it. A holder that dies releases the lock (the system
 * does, with its last descriptor); a lock still held is never broken, even when the pid it names
 * no longer runs here (a holder in another container or PID namespace that shares the state
 * folder, or an older Brave Bot that wrote no pid): the pid is only what the person is told.
 */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T>,
  wait: LockWait = {},
): Promise<T> {
  await ensurePrivateDir(dirname(path));
  const lockPath = `${path}.lock`;
  const bound = wait.boundMs ?? LOCK_WAIT_MS;
  const deadline = performance.now() + bound;
  const turn = await inProcessTurn(lockPath, wait, deadline);
  try {
    return await holding(lockPath, fn, wait, deadline);
  } finally {
    turn();
  }
}

/** Per lock file, the callers of this process in line for it (each waits for the one before). */
const inLine = new Map<string, Promise<void>>();

/**
 * Waits for this process's earlier callers of the same lock, without polling or a status line
 * (the one in front says what it waits for); returns the function that ends this caller's turn.
 * A caller that may give up does so at its bound here too.
 */
async function inProcessTurn(
  lockPath: string,
  wait: LockWait,
  deadline: number,
): Promise<() => void> {
  const before = inLine.get(lockPath) ?? Promise.resolve();
  let end!: () => void;
  const mine = new Promise<void>((resolve) => end = resolve);
  const tail = before.then(() => mine);
  inLine.set(lockPath, tail);
  const done = () => {
    end();
    if (inLine.get(lockPath) === tail) inLine.delete(lockPath);
  };
  if (!wait.fail) {
    await before;
    return done;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) =>
    timer = setTimeout(() => resolve("late"), Math.max(0, deadline - performance.now()))
  );
  const first = await Promise.race([before.then(() => "turn" as const), late]);
  clearTimeout(timer);
  if (first === "late") {
    done();
    throw new LockTimeout(timeoutMessage(lockPath, wait), holderPid(lockPath));
  }
  return done;
}

/** Runs `fn` holding the lock file's system lock, with this process's pid written in it. */
async function holding<T>(
  lockPath: string,
  fn: () => Promise<T>,
  wait: LockWait,
  deadline: number,
): Promise<T> {
  using lock = await Deno.open(lockPath, {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  await acquire(lock, lockPath, wait, deadline);
  try {
    await lock.truncate(0);
    await lock.seek(0, Deno.SeekMode.Start);
    await lock.write(new TextEncoder().encode(`${Deno.pid}\n`));
    return await fn();
  } finally {
    await lock.truncate(0).catch(() => {});
    await lock.unlock();
  }
}

/**
 * Takes the lock, polling: `tryLock` returns at once, where a blocking `lock` would leave a call
 * in a system thread that nothing can end, and keep the process from exiting.
 */
async function acquire(
  lock: Deno.FsFile,
  lockPath: string,
  wait: LockWait,
  firstDeadline: number,
): Promise<void> {
  if (await lock.tryLock(true)) return;
  const bound = wait.boundMs ?? LOCK_WAIT_MS;
  const say = wait.onWait ?? lockReporter;
  say(
    `waiting for ${lockPath}: ${holderText(lockPath)} holds it; ` +
      (wait.fail
        ? `giving up after ${seconds(bound)}`
        : "this change must be saved, so the wait goes on"),
  );
  let deadline = firstDeadline;
  let pause = 10;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(2 * pause, 200);
    if (await lock.tryLock(true)) return;
    if (performance.now() < deadline) continue;
    if (wait.fail) throw new LockTimeout(timeoutMessage(lockPath, wait), holderPid(lockPath));
    say(
      `still waiting for ${lockPath}: ${holderText(lockPath)} holds it; end that process for ` +
        "this session to go on",
    );
    deadline = performance.now() + bound;
  }
}

/** A bound as the person reads it: "10 s", "0.3 s". */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** The failure at the bound: who holds the lock, and that it is not broken. */
function timeoutMessage(lockPath: string, wait: LockWait): string {
  const bound = seconds(wait.boundMs ?? LOCK_WAIT_MS);
  return `${lockPath} is locked: ${holderText(lockPath)} held it for over ${bound}; ` +
    "end that process, or try again when it is done (a lock is never broken while it is held)";
}

/** The pid in a lock file, if it holds one (an older holder, or one just starting, may not). */
function holderPid(lockPath: string): number | null {
  try {
    using file = Deno.openSync(lockPath, { read: true });
    const head = new Uint8Array(24);
    const n = file.readSync(head) ?? 0;
    const text = new TextDecoder().decode(head.subarray(0, n));
    return /^\d{1,10}\n$/.test(text) ? Number(text.trim()) : null;
  } catch {
    return null;
  }
}

/**
 * Who holds a lock, for the person: the pid its lock file names. Not checked against the running
 * processes: a lock the system still holds has a live holder, whatever the pid says (one in
 * another PID namespace; after a holder killed before it could clear its pid, an older Brave Bot
 * that writes none), and Deno opens /proc only to a process with every permission.
 */
function holderText(lockPath: string): string {
  const pid = holderPid(lockPath);
  if (pid === null) return "a process that did not write its pid";
  if (pid === Deno.pid) return `process ${pid} (this one)`;
  return `process ${pid} (the pid its lock file names)`;
}

/**
 * Applies one change to a state file that more than one process may change: under the file's
 * lock it is read as it is now (never from a caller's memory), `change` is given that, and what
 * it returns replaces the file by rename (`undefined`: leave it as it is). So two sessions'
 * changes both land, and a removal is not undone by another session's older copy. A corrupt
 * file is set aside and reported to `change` as such. Returns what the file now holds, with
 * its stamp. `wait`: how a lock another process holds is waited for ({@link LockWait}).
 */
export async function updateJsonFile<T>(
  path: string,
  schema: z.ZodType<T>,
  change: (current: Loaded<T>) => T | undefined | Promise<T | undefined>,
  wait: LockWait = {},
): Promise<{ value: T | null; stamp: Stamp | null }> {
  return await withFileLock(path, async () => {
    const { loaded } = await loadHeld(path, schema);
    const next = await change(loaded);
    if (next !== undefined) await saveJsonFile(path, next);
    const value = next !== undefined ? next : loaded.status === "ok" ? loaded.value : null;
    // Taken under the lock, so it is the stamp of exactly what `value` describes.
    return { value, stamp: currentStamp(path) };
  }, wait);
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
 * same file can come between the check of the last byte and the write. For a file appended to
 * again and again, {@link JsonLineAppender} keeps the handle.
 */
export function appendJsonLine(path: string, value: unknown): Promise<void> {
  try {
    const line = JSON.stringify(value) + "\n";
    using file = openForAppend(path);
    writeLine(file, file.statSync().size, line);
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

function openForAppend(path: string): Deno.FsFile {
  return Deno.openSync(path, { append: true, create: true, read: true, mode: 0o600 });
}

/** Writes `line` at the end of `file` (now `size` bytes), after a newline if it ends torn. */
function writeLine(file: Deno.FsFile, size: number, line: string): void {
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
}

/**
 * {@link appendJsonLine} for one file appended to all session long (the audit log, the
 * transcript), through a handle kept open between appends: the open and the close were most of
 * an append's cost. Before each append the path is stat'ed, and when it no longer names the
 * kept file (replaced by rename, moved aside, removed) the path is opened again, so a line
 * always lands in the file the path names, as with a fresh open. The torn-line check is made
 * each time, as by {@link appendJsonLine}.
 */
export class JsonLineAppender {
  #file: Deno.FsFile | null = null;
  #dev = -1;
  #ino = -1;

  constructor(readonly path: string) {}

  /** Appends one line; written when the promise settles (the calls are synchronous). */
  append(value: unknown): Promise<void> {
    try {
      const line = JSON.stringify(value) + "\n";
      const { file, size } = this.#current();
      writeLine(file, size, line);
      return Promise.resolve();
    } catch (e) {
      this.close();
      return Promise.reject(e);
    }
  }

  /** The kept handle, if the path still names its file; else the path opened again. */
  #current(): { file: Deno.FsFile; size: number } {
    if (this.#file !== null) {
      let info: Deno.FileInfo | null = null;
      try {
        info = Deno.statSync(this.path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (info !== null && info.dev === this.#dev && info.ino === this.#ino) {
        return { file: this.#file, size: info.size };
      }
      this.close();
    }
    const file = openForAppend(this.path);
    try {
      const info = file.statSync();
      this.#file = file;
      this.#dev = info.dev;
      this.#ino = info.ino ?? -1;
      return { file, size: info.size };
    } catch (e) {
      file.close();
      throw e;
    }
  }

  /** Lets the handle go; a later append opens the path again. */
  close(): void {
    try {
      this.#file?.close();
    } catch { /* already closed */ }
    this.#file = null;
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
