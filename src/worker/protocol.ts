/**
 * The messages between the policy layer (main thread) and the effect worker. The worker only
 * acts: every request names an absolute path or argv the policy layer has already decided on.
 */

import type { FindInFilesRequest, FindInFilesResult } from "./search_protocol.ts";
import type { OpenedFile } from "./opened.ts";

export type { FileId, OpenedFile } from "./opened.ts";

/**
 * The folder an act (`write`, `remove`, `makeDir`) happens in, as the policy layer resolved it
 * just before asking (policy/paths.ts `resolveInPlace`): the deepest folder that existed at or
 * above the path (the path itself for a `makeDir` of a folder there), by real path and identity.
 * The worker refuses when the real folder it opens is not this one (ops/wall.ts `asResolved`):
 * its own checks keep it inside its roots, this keeps it at the place the policy layer decided.
 */
export type ResolvedFolder = OpenedFile;

export interface EntryInfo {
  name: string;
  kind: "file" | "directory" | "symlink" | "other";
}

export interface StatInfo {
  kind: "file" | "directory" | "symlink" | "other";
  size: number;
  mtimeMs: number | null;
}

/**
 * Many directories' listings, packed so that crossing the wall costs one string per directory
 * rather than one object per entry (cloning the objects was a large share of a walk).
 */
export interface PackedDirs {
  /**
   * Per directory, in request order: its entries' names joined by `\0` ("" when none), sorted
   * in UTF-16 code-unit order.
   */
  names: string[];
  /**
   * Per directory: the entries that are not plain files, as `name\0kind` pairs joined by `\0`
   * (kind: d directory, l symlink, o other); "" when every entry is a file.
   */
  kinds: string[];
  /** Per directory: why it could not be read, or null. */
  errors: (string | null)[];
  /** Per directory: the folder listed (as checked; see {@link OpenedFile}), or null on an error. */
  opened: (OpenedFile | null)[];
}

/** One directory of an unpacked listing. */
export type DirListing = { entries: EntryInfo[]; opened: OpenedFile } | { error: string };

/** A read's bytes and the file they came from. */
export interface ReadBytes {
  bytes: Uint8Array;
  opened: OpenedFile;
}

/** A file's stat and, when it is a regular file within the size asked for, its bytes. */
export interface StatRead {
  stat: StatInfo;
  bytes: Uint8Array | null;
  /** The file the bytes came from; null when none were read. */
  opened: OpenedFile | null;
}

export interface ReadManyItem {
  path: string;
  /** The bytes, when the file was read. */
  bytes?: Uint8Array;
  /** The file the bytes came from, with them. */
  opened?: OpenedFile;
  /** With `hashOnly`: the SHA-256 of the bytes read, which stay in the worker. */
  sha256?: string;
  /** With the bytes (or their hash): the file's permission bits (`mode & 0o777`). */
  mode?: number;
  /** Why it was not: too big (with its size), or the error's name. */
  skipped?: "too_big" | "not_file" | "error";
  size?: number;
  error?: string;
}

export interface SpawnStage {
  /** Absolute path of the program, resolved by the policy layer. */
  program: string;
  args: string[];
}

/**
 * Where an unconfined run's processes are gathered so that all of them end with it
 * (ops/cgroup.ts): a writable cgroup v2 folder, and the machine's programs that act on it.
 */
export interface SpawnCgroup {
  /** The folder the run's own folder is made in. */
  parent: string;
  sh: string;
  mkdir: string;
  rmdir: string;
}

export interface SpawnRequest {
  stages: SpawnStage[];
  /** Bytes for the first stage's stdin; null gives it an empty stream, never the terminal. */
  stdin: Uint8Array | null;
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Cap on stdout and on stderr each; beyond it the stage group is stopped and `truncated` set. */
  maxOutputBytes: number;
  /** Optional confinement wrapper argv prefix (e.g. bwrap …), already built by the policy layer. */
  wrapper?: string[];
  /**
   * With a wrapper that runs the command in a process group led by the wrapper's only child
   * (bwrap `--new-session` with a PID namespace), where a stop's signals go instead of the group
   * the wrapper itself leads: `reader` is a program of the machine that prints a file (`cat`),
   * by which that child is found in /proc.
   */
  wrapperGroup?: { reader: string };
  /** Runs every stage in a cgroup folder of its own, killed whole when the stages have exited. */
  cgroup?: SpawnCgroup;
  /**
   * How many bytes of output to send on as they come, for the person's screen
   * (docs/contract.md §15.3): the last stage's stdout and every stderr, in order of arrival, until
   * this many were sent.
   */
  streamBytes?: number;
}

/** A piece of a running pipeline's output, sent ahead of the reply (see `streamBytes`). */
export interface OutputChunk {
  stream: "stdout" | "stderr";
  bytes: Uint8Array;
}

export interface SpawnResult {
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** Exit code of the last stage (null when killed by a signal). */
  code: number | null;
  signal: string | null;
  /** Per stage, in order. */
  stages: { code: number | null; signal: string | null }[];
  durationMs: number;
  timedOut: boolean;
  truncated: boolean;
  /**
   * The signals a stop by the person sent, in order, before every stage had ended: empty when
   * nobody stopped it; `["SIGINT"]` when it ended on SIGINT; up to SIGTERM and SIGKILL.
   */
  stopSignals: string[];
  stdoutBytes: number;
  stderrBytes: number;
  /**
   * With `cgroup`: whether every process the run started is known to have ended (its folder was
   * killed and found empty). False when the folder could not be made or emptied.
   */
  cgroupEnded?: boolean;
}

/**
 * Every entry below a root (docs/contract.md §13.5, files a run changes), packed: paths relative
 * to the root joined by `\0`, one kind letter each (f file, d directory, l link, o other), and five
 * numbers each in `stats`: device, inode, size, modification and change time (ms).
 */
export interface SnapshotResult {
  paths: string;
  kinds: string;
  stats: Float64Array;
  /** False when anything was left out: an entry past the bounds, or a marked folder. */
  complete: boolean;
  /** Every entry seen outside the marked folders was recorded. */
  recordedAll: boolean;
  /** Every folder seen outside the marked folders was recorded (before a run, past the bound). */
  foldersRecorded: boolean;
  /**
   * Folders nothing beneath which is known ("" is the root): not listable, an entry not
   * `lstat`-able, swapped while listed, or marked whole past the bounds.
   */
  blind: string[];
  seen: number;
  /** Folders or entries that could not be read (gone, or no permission). */
  unreadable: number;
  /**
   * A part of a split snapshot: the folders every part lists (the root, "", and the folders
   * directly beneath it) that this part listed whole, with the device and inode it listed. A
   * folder some part did not list as the same folder is not known whole (policy/snapshot.ts).
   */
  entered?: { rel: string; dev: number; ino: number }[];
}

export type WorkerRequest =
  | { op: "stat"; path: string }
  | { op: "lstat"; path: string }
  /** A range of a file: at most `length` bytes from `offset`. */
  | { op: "read"; path: string; offset?: number; length: number }
  /**
   * A whole file, but never more than `maxBytes + 1` bytes of it: a reply longer than
   * `maxBytes` means the file is too big (it may have grown since any stat), and no more was read.
   */
  | { op: "read"; path: string; maxBytes: number }
  /**
   * One round trip for stat then read: the bytes only when the path (followed) is a regular
   * file of at most `maxBytes`; otherwise just the stat.
   */
  | { op: "read"; path: string; withStat: true; maxBytes: number }
  /**
   * Many files' bytes. With `followLinks: false`, a path that is a link or passes through one is
   * not read (skipped as `not_file`): what `.gitignore` files the walk reads.
   */
  /**
   * With `hashOnly`, each file's hash in place of its bytes: what `/undo` records of a file past
   * the session's budget, without carrying its bytes across the wall.
   */
  | { op: "readMany"; paths: string[]; maxBytes: number; followLinks?: false; hashOnly?: true }
  | FindInFilesRequest
  | { op: "readDirs"; paths: string[]; packed?: false }
  | { op: "readDirs"; paths: string[]; packed: true }
  /**
   * A file's SHA-256 (a regular file only); with `identify`, also the file hashed (a label may
   * depend on it) and its permission bits (`mode & 0o777`).
   */
  | { op: "hash"; path: string; identify?: true }
  | {
    op: "write";
    path: string;
    bytes: Uint8Array;
    /** The SHA-256 the file must still have (null: must not exist; undefined: no check). */
    expectSha256?: string | null;
    makeParents: boolean;
    /**
     * The permission bits to give it (`/undo` restores a file's mode); only `0o777` of them are
     * ever set. Without it, a file written over keeps its own, and a new one is 0644.
     */
    mode?: number;
    /**
     * Where the file's folder must be ({@link ResolvedFolder}). Required: without it the worker
     * could only keep the act inside its roots, not at the place the policy layer decided.
     */
    within: ResolvedFolder;
  }
  /**
   * Makes a folder, and any missing above it, each checked inside the wall (`/undo` of a run that
   * removed an empty folder). A folder already there is left as it is; anything else refuses.
   */
  | { op: "makeDir"; path: string; within: ResolvedFolder }
  /**
   * Removes a regular file (never through a link), only if it still has `expectSha256`: `/undo`
   * of a file the session created takes it away only while it holds what the session left.
   */
  | { op: "remove"; path: string; expectSha256: string; within: ResolvedFolder }
  | { op: "spawn"; request: SpawnRequest }
  | { op: "probe"; what: "read" | "write" | "net" | "env"; target: string }
  /**
   * Stop every running pipeline (Ctrl-C in a session): SIGINT, SIGTERM, SIGKILL, 2 s apart; a
   * second one goes straight to SIGKILL. Answers how many were running.
   */
  | { op: "stopSpawns" }
  /**
   * Every entry below `root` by lstat, not entering `skip`, recording `maxEntries` in full; past
   * them up to `maxChanges` more (folders, and with `since` entries changed at or after it),
   * then folders marked whole, at most `maxMarks` (snapshot.ts).
   */
  | {
    op: "snapshot";
    root: string;
    skip: string[];
    maxEntries: number;
    maxChanges?: number;
    maxMarks?: number;
    since?: number;
    /** One part of a snapshot split over the pool (snapshot.ts, `SnapshotPart`). */
    part?: { index: number; of: number };
  }
  /** Each path's change time (ms) by lstat, null where it cannot be had. */
  | { op: "changeTimes"; paths: string[] };

export type WorkerValue<R extends WorkerRequest> = R extends { op: "stat" | "lstat" } ? StatInfo
  : R extends { op: "read"; withStat: true } ? StatRead
  : R extends { op: "read" } ? ReadBytes
  : R extends { op: "readMany" } ? ReadManyItem[]
  : R extends { op: "readDirs"; packed: true } ? PackedDirs
  : R extends { op: "findInFiles" } ? FindInFilesResult
  : R extends { op: "readDirs" } ? DirListing[]
  : R extends { op: "hash"; identify: true } ? { sha256: string; opened: OpenedFile; mode: number }
  : R extends { op: "hash" } ? string
  : R extends { op: "write" } ? { sha256: string; created: boolean }
  : R extends { op: "remove" } ? { removed: true }
  : R extends { op: "makeDir" } ? { made: true }
  : R extends { op: "spawn" } ? SpawnResult
  : R extends { op: "probe" } ? { refused: boolean; error: string | null }
  : R extends { op: "stopSpawns" } ? { stopped: number }
  : R extends { op: "snapshot" } ? SnapshotResult
  : R extends { op: "changeTimes" } ? (number | null)[]
  : never;

/** An error crossing the wall keeps its name (`NotCapable`, `NotFound`, …) and message. */
export interface WorkerError {
  name: string;
  message: string;
  /** For a pipeline that could not start: which stage (0-based) failed. */
  stage?: number;
}

export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WorkerError };

/** Sent before a reply, for the request of the same id: a run's output as it comes. */
export interface WorkerProgress {
  id: number;
  progress: OutputChunk;
}
