/**
 * The findInFiles op's messages (ops/search.ts): a search done in place inside the effect
 * worker, so that only counts, matching lines and hashes cross the wall, never a file's bytes.
 */
import type { OpenedFile } from "./opened.ts";

/**
 * Search files for a literal in place: only counts, the matching lines (at most maxLines in
 * the whole request) and matched files' hashes come back.
 */
export interface FindInFilesRequest {
  op: "findInFiles";
  /** Absolute paths the policy layer chose. */
  paths: string[];
  /** The literal, as UTF-8 bytes. */
  needle: Uint8Array;
  /** Files larger than this are not read. */
  maxBytes: number;
  /** Matching lines kept over the whole request; after that, the remaining paths are not read. */
  maxLines: number;
  /** Each kept line is cut to this many UTF-16 code units, and the cut said. */
  lineChars: number;
  /**
   * Per path, 1 when a match should come back with the SHA-256 of the bytes searched (the
   * policy layer asks only where a trust entry is bound to a hash: hashing costs as much as
   * reading).
   */
  hashWanted: Uint8Array;
}

/** What findInFiles did with each path, in the order given (see ops/search.ts). */
export const FIND = {
  /** Read and searched: no match. */
  none: 0,
  /** Read, searched, matched: its lines and hash are in `found`. */
  matched: 1,
  /** Read, but binary: a NUL in the first 8 KiB, or a match in bytes that are not UTF-8. */
  binary: 2,
  /** Not read: over the size limit. */
  tooBig: 3,
  /** Not read: not a file, or an error (named in `errors`). */
  unreadable: 4,
  /** Not looked at: the request's line cap was reached on an earlier path. */
  notReached: 5,
} as const;

export interface FoundFile {
  /** Index into the request's paths. */
  index: number;
  /** How many of the result's lines are this file's (they follow the previous file's). */
  lines: number;
  /** More matching lines followed the last one kept (the line cap was reached in this file). */
  more: boolean;
  /** SHA-256 of exactly the bytes searched, when it was wanted; null otherwise. */
  sha256: string | null;
  /** The file searched (see OpenedFile): what its lines and hash are of. */
  opened: OpenedFile;
}

export interface FindInFilesResult {
  /** One FIND code per path. */
  status: Uint8Array;
  found: FoundFile[];
  /** The kept lines of every matched file, in order, packed: their 1-based numbers... */
  lineNumbers: Float64Array;
  /**
   * ...and their texts joined by "\n" (a line never holds one), each without its end of line
   * and cut to lineChars code units (the cut said). One string crosses the wall, not an object
   * per line.
   */
  texts: string;
  errors: { index: number; name: string }[];
}
