/**
 * findInFiles, the effect worker's half of `search`: each file is read into one reused buffer
 * (the SIMD scan's memory), sniffed for a NUL, and searched where it lies. Only counts, the
 * matching lines and a matched file's SHA-256 leave the worker, so a search of 300 MB moves
 * kilobytes across the wall and holds at most one file (≤ maxBytes) at a time. The worker
 * decides nothing: the policy layer chose the paths, and labels what comes back; the hash is
 * of exactly the bytes searched, so a hash-bound trust entry is judged on them.
 */
import { BINARY_SNIFF_BYTES } from "../../util/text.ts";
import { compileInPlace } from "../../util/bytes_search.ts";
import {
  FIND,
  type FindInFilesRequest,
  type FindInFilesResult,
  type FoundFile,
} from "../search_protocol.ts";
import type { OpenedFile } from "../protocol.ts";
import { loadScan, type Scan, SCAN_PAD } from "./simd_scan.ts";
import { closeSync, readSync } from "node:fs";
import { folderOf, FolderRuns, openChecked, swappedError } from "./wall.ts";

/**
 * docs/contract.md §14: a NUL in this many leading bytes makes a file binary (as reads.ts says).
 */
const NL = 0x0a;
const CR = 0x0d;

interface Tools {
  scan: Scan;
  isUtf8: (bytes: Uint8Array) => boolean;
  sha256: (bytes: Uint8Array) => string;
}

let loaded: Promise<Tools> | null = null;

/**
 * The scan and its memory, made once per worker and reused by every request; the engine's
 * UTF-8 check and hash are loaded with it, on the first search, so a worker that never
 * searches starts as fast as before.
 */
function tools(): Promise<Tools> {
  loaded ??= (async () => {
    const [scan, buffer, hash] = await Promise.all([
      loadScan(),
      import("node:buffer"),
      import("../../util/hash.ts"),
    ]);
    return { scan, isUtf8: (bytes) => buffer.isUtf8(bytes), sha256: hash.sha256 };
  })();
  return loaded;
}

/** Lines are decoded one by one from validated bytes; the BOM stays, as the tools show it. */
const lineDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** UTF-16 code units of valid UTF-8 bytes: one per sequence, two for a four-byte one. */
function utf16Length(bytes: Uint8Array): number {
  let units = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
  }
  return units;
}

/** A line's text, cut at `lineChars` code units with the cut said; always a string of its own. */
function lineText(bytes: Uint8Array, lineChars: number): string {
  if (bytes.length <= lineChars) return lineDecoder.decode(bytes);
  const units = utf16Length(bytes);
  if (units <= lineChars) return lineDecoder.decode(bytes);
  // Enough bytes for lineChars code units and then some; only the head is decoded.
  const head = lineDecoder.decode(bytes.subarray(0, 4 * lineChars + 4));
  return `${head.slice(0, lineChars)} … [line cut: ${units} characters]`;
}

/**
 * Reads the file at `path` into the heap: its length, or -1 when it is too big, and the file it
 * read (for the policy layer, which labels its lines). The wall's check (wall.ts) stats the path
 * first, so a file that is not a regular one is never opened (nor one swapped in after the check
 * waited on: `openChecked`) and one too big by that stat never read; the read is capped all the
 * same (a file may grow).
 */
function readInto(
  scan: Scan,
  runs: FolderRuns,
  path: string,
  maxBytes: number,
): { size: number; opened: OpenedFile | null } {
  const { checked } = runs.check(path, folderOf(path));
  if (checked.info.isDirectory) throw new Deno.errors.IsADirectory("is a directory");
  // Anything else not a regular file is refused by the open, unopened (NotAFile).
  if (checked.info.isFile && checked.info.size > maxBytes) return { size: -1, opened: null };
  const handle = openChecked(checked);
  try {
    const heap = scan.heap();
    const cap = maxBytes + 1;
    // One read asks for a byte more than the handle's size: fewer bytes back is the end of the
    // file, so a file that did not grow is read in one call, not two. A file that grew fills
    // the request and is read on, up to the cap, as before.
    const wanted = Math.min(cap, handle.size + 1);
    let filled = 0;
    while (filled < cap) {
      const end = filled < wanted ? wanted : cap;
      const n = readSync(handle.fd, heap, filled, end - filled, null);
      if (n === 0) break;
      filled += n;
      if (filled === handle.size && filled < wanted) break; // the end: the byte past it is not there
    }
    return filled > maxBytes ? { size: -1, opened: null } : { size: filled, opened: handle.opened };
  } finally {
    closeSync(handle.fd);
  }
}

/** Searches the paths in order; see FindInFilesRequest. */
export async function findInFiles(request: FindInFilesRequest): Promise<FindInFilesResult> {
  const { scan, isUtf8, sha256: hashOf } = await tools();
  const needle = request.needle;
  // Room for the largest file read, one byte more (to tell it is too big), and the scans' reach.
  scan.ensure(request.maxBytes + 1 + needle.length + SCAN_PAD);
  const find = compileInPlace(needle, scan);
  const status = new Uint8Array(request.paths.length);
  const found: FoundFile[] = [];
  const lineNumbers: number[] = [];
  const texts: string[] = [];
  const errors: { index: number; name: string }[] = [];
  let kept = 0;
  // Folder by folder (wall.ts, FolderRuns): when a run's folder changed while its files were
  // read, everything the run found is taken back and its files count as refused.
  const runs = new FolderRuns();
  let run = { index: 0, found: 0, lines: 0, errors: 0, kept: 0 };
  const endRun = (index: number) => {
    if (!runs.end()) {
      found.length = run.found;
      lineNumbers.length = texts.length = run.lines;
      errors.length = run.errors;
      kept = run.kept;
      for (let i = run.index; i < index; i++) {
        status[i] = FIND.unreadable;
        errors.push({ index: i, name: swappedError().name });
      }
    }
    run = { index, found: found.length, lines: lineNumbers.length, errors: errors.length, kept };
  };
  let index = 0;
  for (; index < request.paths.length; index++) {
    if (kept >= request.maxLines) break;
    const path = request.paths[index];
    if (folderOf(path) !== runs.dir) endRun(index);
    let size: number;
    let opened: OpenedFile;
    try {
      const read = readInto(scan, runs, path, request.maxBytes);
      if (read.opened === null) {
        status[index] = FIND.tooBig;
        continue;
      }
      size = read.size;
      opened = read.opened;
    } catch (e) {
      status[index] = FIND.unreadable;
      errors.push({ index, name: (e as Error).name });
      continue;
    }
    if (scan.find(0, Math.min(size, BINARY_SNIFF_BYTES), 0) !== -1) {
      status[index] = FIND.binary;
      continue;
    }
    const first = find(0, size);
    if (first === -1) continue; // FIND.none
    const heap = scan.heap();
    const bytes = heap.subarray(0, size);
    if (!isUtf8(bytes)) {
      status[index] = FIND.binary;
      continue;
    }
    const before = kept;
    let more = false;
    let at = first;
    let start = 0; // start of line lineNo
    let lineNo = 1;
    while (at !== -1) {
      if (kept >= request.maxLines) {
        more = true;
        break;
      }
      const passed = scan.count(start, at - start, NL);
      if (passed > 0) {
        lineNo += passed;
        let s = at - 1;
        while (heap[s] !== NL) s--;
        start = s + 1;
      }
      const k = scan.find(at, size - at, NL);
      const nl = k === -1 ? -1 : at + k;
      let end = nl === -1 ? size : nl;
      if (end > start && heap[end - 1] === CR) end--;
      lineNumbers.push(lineNo);
      texts.push(lineText(heap.subarray(start, end), request.lineChars));
      kept++;
      if (nl === -1) break;
      start = nl + 1;
      lineNo++;
      at = find(start, size);
    }
    status[index] = FIND.matched;
    const sha256 = request.hashWanted[index] === 1 ? hashOf(bytes) : null;
    found.push({ index, lines: kept - before, more, sha256, opened });
  }
  endRun(index);
  status.fill(FIND.notReached, index);
  return {
    status,
    found,
    lineNumbers: Float64Array.from(lineNumbers),
    texts: texts.join("\n"),
    errors,
  };
}
