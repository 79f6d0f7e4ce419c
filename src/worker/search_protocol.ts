/**
 * The findInFiles op's messages (ops/search.ts): a search done in place inside the effect
 * worker, so that only counts, matching lines and hashes cross the wall, never a file's bytes.
 */

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

export interface FoundLine {
  /** 1-based line number. */
  line: number;
  /** The line without its end of line, cut to the request's lineChars (and the cut said). */
  text: string;
}

export interface FoundFile {
  /** Index into the request's paths. */
  index: number;
  lines: FoundLine[];
  /** More matching lines followed the last one kept (the line cap was reached in this file). */
  more: boolean;
  /** SHA-256 of exactly the bytes searched, for hash-bound trust entries. */
  sha256: string;
}

export interface FindInFilesResult {
  /** One FIND code per path. */
  status: Uint8Array;
  found: FoundFile[];
  errors: { index: number; name: string }[];
}
