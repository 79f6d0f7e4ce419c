/**
 * A literal byte-string search for `search`, over bytes already in a scan's heap: the scan looks
 * for the needle's two rarest bytes at their distance (a SIMD pair scan), and each candidate is
 * verified in place. Text rarely holds the rare pair, so most of the haystack is crossed at scan
 * speed. No string is decoded and no regular expression is built.
 */

/**
 * How common each byte is in source code and prose, roughly (higher: more common). Bytes not
 * listed count as rare. Only the order matters.
 */
const COMMON = " etaoinsrlcdhupmfgybwvkx_.,;()=\n\t\"'/-:{}[]0123456789ETAOINSRLCDHUPMFGYBWVKX";
const RANK = new Uint8Array(256);
for (let i = 0; i < COMMON.length; i++) RANK[COMMON.charCodeAt(i)] = COMMON.length - i;

/** The scans an in-place finder needs (the search op's SIMD module, or its fallback). */
export interface PairScan {
  heap(): Uint8Array;
  find(p: number, n: number, b: number): number;
  find2(p: number, n: number, a: number, c: number, d: number): number;
}

/**
 * The two positions of `needle` (a < c) whose bytes are rarest, so a scan for the pair
 * (byte a here, byte c that far on) meets few false candidates even in common words.
 */
export function rarePair(needle: Uint8Array): { a: number; c: number } {
  let first = 0;
  for (let i = 1; i < needle.length; i++) if (RANK[needle[i]] < RANK[needle[first]]) first = i;
  let second = -1;
  for (let i = 0; i < needle.length; i++) {
    if (i === first) continue;
    if (second === -1) {
      second = i;
      continue;
    }
    const better = RANK[needle[i]] < RANK[needle[second]] ||
      (RANK[needle[i]] === RANK[needle[second]] &&
        needle[second] === needle[first] && needle[i] !== needle[first]);
    if (better) second = i;
  }
  return { a: Math.min(first, second), c: Math.max(first, second) };
}

/**
 * A finder over bytes already in `scan`'s heap: `find(from, end)` is the offset of the first
 * occurrence lying wholly in [from, end), or -1. One-byte needles use the byte scan; longer
 * ones the pair scan, each candidate verified. The heap must hold needle.length + 64 bytes
 * past `end` (the pair scan reads ahead; what it reads there is never a match).
 */
export function compileInPlace(
  needle: Uint8Array,
  scan: PairScan,
): (from: number, end: number) => number {
  const n = needle.length;
  if (n === 0) throw new RangeError("the needle is empty");
  if (n === 1) {
    const b = needle[0];
    return (from, end) => {
      if (from >= end) return -1;
      const k = scan.find(from, end - from, b);
      return k === -1 ? -1 : from + k;
    };
  }
  const { a, c } = rarePair(needle);
  const ba = needle[a];
  const bc = needle[c];
  const d = c - a;
  return (from, end) => {
    const last = end - n; // the last start that fits
    let start = from;
    while (start <= last) {
      const k = scan.find2(start + a, last - start + 1, ba, bc, d);
      if (k === -1) return -1;
      const at = start + k;
      const heap = scan.heap();
      let i = 0;
      while (i < n && heap[at + i] === needle[i]) i++;
      if (i === n) return at;
      start = at + 1;
    }
    return -1;
  };
}
