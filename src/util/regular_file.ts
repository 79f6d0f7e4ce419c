/**
 * Reading a file the repository supplies, on the main thread, where no worker and no wall stand
 * between the read and the process (issue 21): the workspace's `.bravebot/config.json` before a
 * session exists, a vouched workspace program's bytes for `bravebot vouch list`. Whatever the
 * repository put at that name, the read neither hangs nor fills memory:
 *
 * - every component under the root is `lstat`ed and a symbolic link is refused, the last one
 *   included: a link to `/dev/zero`, to a FIFO, to a file outside, even to a regular file inside
 *   (refusing every link is the simplest rule that needs no second resolution);
 * - what the last `lstat` names must be a regular file, so a FIFO or a device is never opened;
 * - the file is opened with `O_NONBLOCK | O_NOFOLLOW` (a FIFO swapped in after the look opens at
 *   once instead of waiting for a writer), and the opened handle's `fstat` must be a regular file
 *   with the device and inode the `lstat` saw. Deno resolves a path's links itself before it
 *   opens (for its permission check), so `O_NOFOLLOW` alone does not refuse a link here: the
 *   identity check is what catches a swap between the look and the open;
 * - a read takes at most `maxBytes` (and one more, to know it was more); a hash reads in chunks.
 *
 * `node:fs` because `Deno.open` cannot open without blocking. Failures are values: what was
 * wrong, in words that never quote the file's contents.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { plural } from "./plural.ts";
import { escapeForScreen } from "./escape.ts";

export type RegularRead =
  | { kind: "read"; bytes: Uint8Array }
  | { kind: "missing" }
  /** Why the file was not read, as a sentence that follows its name. */
  | { kind: "refused"; why: string };

/** `O_NONBLOCK | O_NOFOLLOW` where the platform has them (not on Windows, which has no FIFOs). */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);
const CHUNK = 1024 * 1024;

function codeOf(e: unknown): string {
  return (e as { code?: string }).code ?? (e as Error).name ?? "error";
}

type Opened = { fd: number; size: number } | Exclude<RegularRead, { kind: "read" }>;

let beforeOpen: ((path: string) => void) | null = null;

/**
 * FOR TESTS ONLY: `fn` runs between the look (`lstat`) and the open, with the path about to be
 * opened, so a test can swap the file there. Nothing else calls this.
 */
export function setBeforeOpenHook(fn: ((path: string) => void) | null): void {
  beforeOpen = fn;
}

/** Opens `root/rel` as described above: the descriptor and size, or why not. */
function openRegular(root: string, rel: string): Opened {
  const parts = rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  let path = root;
  let seen: Stats | null = null;
  for (const [i, part] of parts.entries()) {
    path = join(path, part);
    try {
      seen = lstatSync(path);
    } catch (e) {
      if (codeOf(e) === "ENOENT" || codeOf(e) === "ENOTDIR") return { kind: "missing" };
      return { kind: "refused", why: `cannot be read (${codeOf(e)})` };
    }
    if (seen.isSymbolicLink()) {
      const why = i === parts.length - 1
        ? "is a symbolic link; it must be a regular file"
        : `is inside a symbolic link (${escapeForScreen(part)}/); it must be a regular file`;
      return { kind: "refused", why };
    }
  }
  if (!seen?.isFile()) return { kind: "refused", why: "is not a regular file" };
  beforeOpen?.(path);
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (e) {
    if (codeOf(e) === "ENOENT") return { kind: "missing" };
    return { kind: "refused", why: `cannot be read (${codeOf(e)})` };
  }
  let opened: Stats;
  try {
    opened = fstatSync(fd);
  } catch (e) {
    closeSync(fd);
    return { kind: "refused", why: `cannot be read (${codeOf(e)})` };
  }
  if (!opened.isFile() || opened.dev !== seen.dev || opened.ino !== seen.ino) {
    closeSync(fd);
    return { kind: "refused", why: "changed while it was opened; it must be a regular file" };
  }
  return { fd, size: opened.size };
}

/**
 * The bytes of the regular file `root/rel`, at most `maxBytes` of them; a larger file is
 * refused, not cut (a config read in part would mean something else).
 */
export function readRegularFile(root: string, rel: string, maxBytes: number): RegularRead {
  const opened = openRegular(root, rel);
  if (!("fd" in opened)) return opened;
  const tooLarge: RegularRead = {
    kind: "refused",
    why: `is larger than ${formatSize(maxBytes)}; it must be at most that`,
  };
  try {
    if (opened.size > maxBytes) return tooLarge;
    const buf = new Uint8Array(maxBytes + 1);
    let total = 0;
    while (total < buf.length) {
      const n = readSync(opened.fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
    }
    return total > maxBytes ? tooLarge : { kind: "read", bytes: buf.slice(0, total) };
  } catch (e) {
    return { kind: "refused", why: `cannot be read (${codeOf(e)})` };
  } finally {
    closeSync(opened.fd);
  }
}

/** The SHA-256 of the regular file `root/rel`, read a chunk at a time (hex), or why not. */
export function hashRegularFile(
  root: string,
  rel: string,
): { kind: "hash"; hex: string } | Exclude<RegularRead, { kind: "read" }> {
  const opened = openRegular(root, rel);
  if (!("fd" in opened)) return opened;
  try {
    const digest = createHash("sha256");
    const chunk = new Uint8Array(CHUNK);
    for (;;) {
      const n = readSync(opened.fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      digest.update(chunk.subarray(0, n));
    }
    return { kind: "hash", hex: digest.digest("hex") };
  } catch (e) {
    return { kind: "refused", why: `cannot be read (${codeOf(e)})` };
  } finally {
    closeSync(opened.fd);
  }
}

function formatSize(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : plural(bytes, "byte");
}
