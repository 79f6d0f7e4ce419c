/**
 * The one function that turns a planner-supplied path into a real path inside the workspace,
 * or refuses with a reason the planner can act on (docs/tools.md, docs/contract.md §13.3). Every
 * tool's routing path goes through here; Deno's permissions on the effect worker stand behind it as
 * the second wall.
 */
import { dirname, join, relative, sep } from "node:path";
import { err, ok, type Result } from "../util/result.ts";
import { isControl, isInvisible } from "../util/escape.ts";
import { isWithin, type Workspace } from "./workspace.ts";
import type { FileId, OpenedFile, ResolvedFolder } from "../worker/protocol.ts";

/**
 * An entry the policy layer checked, and labels: its real path, and the identity (device and
 * inode) it had when checked; null when it did not exist, or for a walk's entry, which is known
 * by its path alone (the walk gives only paths reached through no link).
 */
export interface CheckedEntry {
  readonly abs: string;
  readonly id: FileId | null;
}

export interface ResolvedPath extends CheckedEntry {
  /** Workspace-relative, `/`-separated, of the real location; `.` for the root. */
  readonly rel: string;
  /** Absolute real path (for a new file: its real parent joined with its name). */
  readonly abs: string;
  readonly exists: boolean;
  readonly kind: "file" | "directory" | "other" | "missing";
}

/**
 * Whether what the effect worker opened is the entry that was checked and labelled
 * (docs/contract.md §3.2, §13.3: a label is true only of what it was computed for): the same real
 * path, and, where the entry's identity is known, the same device and inode. A file that became a
 * link, or was replaced, after the check fails here, and the read is refused; the one comparison of
 * the rule, for every read the policy layer labels.
 */
export function openedAsChecked(
  entry: CheckedEntry,
  opened: OpenedFile | null | undefined,
): boolean {
  if (!opened || opened.real !== entry.abs) return false;
  return entry.id === null || (opened.dev === entry.id.dev && opened.ino === entry.id.ino);
}

/** What the planner is told when a read was refused by {@link openedAsChecked}. */
export function changedWhileRead(shownAs: string): string {
  return `${shownAs} changed while it was being read (it was replaced, or became a link); ` +
    "nothing of it was used";
}

/** The identity of a stat, as a {@link CheckedEntry} keeps it. */
function idOf(info: Deno.FileInfo): FileId {
  return { dev: info.dev, ino: info.ino };
}

const MAX_PATH = 4096;
const MAX_SEGMENT_BYTES = 255;
const encoder = new TextEncoder();
/** Names Windows maps to devices whatever the folder or extension: `nul.txt` is NUL. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\.[^.]*)?$/i;

function codepoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Syntax checks that need no file system; returns the segments to walk. */
export function checkPathSyntax(input: unknown): Result<string[]> {
  if (typeof input !== "string") return err("a path must be a string");
  if (input === "") return err('the path is empty; use "." for the workspace root');
  if (input.length > MAX_PATH) return err(`the path is longer than ${MAX_PATH} characters`);
  if (!input.isWellFormed()) {
    return err("the path contains an unpaired UTF-16 surrogate, which no file name can hold");
  }
  for (const ch of input) {
    if (ch === "\0") return err("the path contains a NUL byte");
    if (isControl(ch)) return err(`the path contains the control character ${codepoint(ch)}`);
    if (isInvisible(ch)) {
      return err(`the path contains invisible or bidirectional Unicode (${codepoint(ch)})`);
    }
  }
  if (input.startsWith("/")) {
    return err("absolute paths are not accepted; give a path relative to the workspace root");
  }
  if (/^[A-Za-z]:/.test(input)) {
    return err("drive-letter paths are not accepted; give a path relative to the workspace root");
  }
  if (input.includes("\\")) return err("backslashes are not accepted; separate segments with /");
  if (input.startsWith("~")) {
    return err("~ is not expanded; give a path relative to the workspace root");
  }
  if (/%[0-9A-Fa-f]{2}/.test(input)) {
    return err("percent-encoded sequences are not decoded; write the characters themselves");
  }
  const segments: string[] = [];
  for (const segment of input.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") return err("'..' segments are not accepted; paths stay in the workspace");
    if (/[. ]$/.test(segment)) {
      return err(
        `the name '${segment}' ends with a dot or a space, which some file systems drop; name the file exactly`,
      );
    }
    if (encoder.encode(segment).length > MAX_SEGMENT_BYTES) {
      return err(`a name in the path is longer than ${MAX_SEGMENT_BYTES} bytes`);
    }
    if (WINDOWS_DEVICE.test(segment)) {
      return err(
        `the name '${segment}' is a reserved device name on Windows (CON, NUL, COM1, …); choose another name`,
      );
    }
    segments.push(segment);
  }
  return ok(segments);
}

/**
 * The refusal for a name with a case or normalisation twin on disk. The twin itself is not
 * quoted: it may sit in a directory nobody vouched for, and a name is content.
 */
function twinMessage(segment: string): string {
  return `'${segment}' differs only by case or Unicode normalisation from a name that exists ` +
    "there; use the exact name";
}

/** The name as a case-folding, normalising file system would compare it. */
export function folded(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

/**
 * Synchronous, as the resolver's other calls on the path are: every tool call resolves a path,
 * and each asynchronous hop cost more than the call it waited for (about 0.1 ms a call).
 */
function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    // A loop below this point is reported when its first link is resolved.
    if (
      e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory ||
      e instanceof Deno.errors.FilesystemLoop
    ) return null;
    throw e;
  }
}

async function namesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch { /* unreadable: nothing to collide with that we can see */ }
  return names;
}

function toRel(root: string, real: string): string {
  const rel = relative(root, real);
  if (rel === "") return ".";
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/**
 * Resolves `input` inside `ws`. A path that does not exist yet (a write) is resolved through
 * its nearest existing parent; a symlink at any depth is followed and must land inside.
 */
export async function resolvePath(ws: Workspace, input: unknown): Promise<Result<ResolvedPath>> {
  const syntax = checkPathSyntax(input);
  if (!syntax.ok) return syntax;
  const segments = syntax.value;
  try {
    // Find the deepest existing prefix, by lstat so that a dangling link counts as existing.
    // The calls on the path are synchronous: no wait between them for another task to run.
    let existing = segments.length;
    let found: Deno.FileInfo | null = null;
    while (existing > 0) {
      found = lstatOrNull(join(ws.root, ...segments.slice(0, existing)));
      if (found !== null) break;
      existing--;
    }
    const shown = segments.slice(0, existing).join("/");
    const base = join(ws.root, ...segments.slice(0, existing));
    let real: string;
    try {
      real = Deno.realPathSync(base);
    } catch (e) {
      if (e instanceof Deno.errors.FilesystemLoop) {
        return err(`'${shown}' is part of a loop of symbolic links`);
      }
      if (e instanceof Deno.errors.NotFound) {
        return err(`'${shown}' is a symbolic link whose target does not exist`);
      }
      throw e;
    }
    if (!isWithin(ws.root, real)) {
      return err(`'${shown}' leads outside the workspace through a symbolic link`);
    }
    if (ws.caseInsensitive) {
      // Every existing name must be spelled exactly as on disk, or trust could key on a twin.
      let dir = ws.root;
      for (const segment of segments.slice(0, existing)) {
        const names = await namesIn(dir);
        if (!names.includes(segment)) {
          return err(twinMessage(segment));
        }
        dir = join(dir, segment);
      }
    }
    const rest = segments.slice(existing);
    if (rest.length > 0 && !(await Deno.stat(real)).isDirectory) {
      return err(`'${shown}' is a file, not a directory; nothing can be inside it`);
    }
    if (rest.length > 0) {
      const siblings = await namesIn(real);
      if (siblings.some((n) => n !== rest[0] && folded(n) === folded(rest[0]))) {
        return err(twinMessage(rest[0]));
      }
    }
    const abs = rest.length > 0 ? join(real, ...rest) : real;
    for (const guarded of ws.protectedDirs) {
      const inside = ws.caseInsensitive
        ? isWithin(folded(guarded), folded(abs))
        : isWithin(guarded, abs);
      if (inside) {
        return err("that path names Brave Bot's state directory, which no tool may reach");
      }
    }
    if (rest.length > 0) {
      return ok({ rel: toRel(ws.root, abs), abs, exists: false, kind: "missing", id: null });
    }
    // The lstat of the whole path already describes `real` unless its last name is a link; then
    // `real` itself, not followed: a real path names no link, unless it changed since.
    const info = found !== null && !found.isSymlink ? found : Deno.lstatSync(real);
    if (info.isSymlink) return err("that path changed while it was being resolved; try again");
    const kind = info.isFile ? "file" : info.isDirectory ? "directory" : "other";
    return ok({ rel: toRel(ws.root, real), abs: real, exists: true, kind, id: idOf(info) });
  } catch (e) {
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
      return err("that path cannot be examined: permission denied");
    }
    // Only the kind: the message quotes the real path, which may be a name behind a link.
    return err(`that path cannot be resolved (${(e as Error).name})`);
  }
}

/**
 * Why a recorded path is no longer acted on ({@link resolveInPlace}). It quotes no name: the
 * caller names the path, to whoever may be told it.
 */
export const LEADS_ELSEWHERE = "no longer resolves to itself (a folder on its way became a " +
  "symbolic link, or it now lies where no tool may reach)";

/** A path resolved again just before the act, with the folder the act happens in. */
export interface InPlace extends ResolvedPath {
  /**
   * The deepest folder that exists at or above the entry (the entry itself when it is a folder),
   * as found just now: the worker acts only there (protocol.ts `ResolvedFolder`).
   */
  readonly folder: ResolvedFolder;
}

/**
 * A path decided on earlier (a write the person approved, a file the session changed), resolved
 * again by {@link resolvePath} just before it is written, removed or made: it must still resolve
 * to itself. A link set on its way since, by a run, the person or another process, would carry
 * the act onto a file nobody was shown under that name, or into a state directory inside the
 * workspace; the effect worker's own check only keeps it inside the workspace. Answers the
 * entry to act on, whose `abs` is the place to hand the worker, and its `folder`, which the worker
 * must find there still: a link or a folder put in its place after this look, before the
 * worker's, is refused by the worker.
 */
export async function resolveInPlace(ws: Workspace, rel: string): Promise<Result<InPlace>> {
  const where = await resolvePath(ws, rel);
  if (!where.ok || where.value.rel !== rel) return err(LEADS_ELSEWHERE);
  const folder = folderNow(
    ws,
    where.value.kind === "directory" ? where.value.abs : dirname(where.value.abs),
  );
  return folder === null ? err(LEADS_ELSEWHERE) : ok({ ...where.value, folder });
}

/**
 * The deepest existing folder at or above `abs` (a real path inside the workspace), which must
 * be its own real path and still the folder its stat found; null when it is not.
 */
function folderNow(ws: Workspace, abs: string): ResolvedFolder | null {
  for (let at = abs; isWithin(ws.root, at); at = dirname(at)) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(at);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound && at !== ws.root) continue;
      return null;
    }
    try {
      const there = Deno.lstatSync(at);
      if (!info.isDirectory || Deno.realPathSync(at) !== at) return null;
      return there.dev === info.dev && there.ino === info.ino ? { real: at, ...idOf(info) } : null;
    } catch {
      return null;
    }
  }
  return null;
}
