/**
 * The search prototype's worker: reads each file into one reused buffer (WebAssembly memory),
 * skips binary and oversized files, and finds the needle in place, so only counts leave it.
 * `simd` chooses the scan: the SIMD module, or compileNeedle (the search tool's own).
 */
/// <reference lib="deno.worker" />
import { compileNeedle } from "../../../src/util/bytes_search.ts";
import { loadScan } from "./simd_scan.ts";

export interface Job {
  paths: string[];
  needle: string;
  maxBytes: number;
  simd: boolean;
}

export interface Counts {
  matched: number;
  binary: number;
  big: number;
  bytes: number;
}

const scan = await loadScan();
scan.ensure(1 << 20);

/** The needle's rarest byte by the same frequency idea as compileNeedle: not a letter if possible. */
function rareIndex(needle: Uint8Array): number {
  const common = " etaoinsrlcdhupmfgybwvkx_.,;()=\n\t\"'/-:{}[]0123456789";
  let best = 0;
  let bestRank = Infinity;
  for (let i = 0; i < needle.length; i++) {
    const rank = common.indexOf(String.fromCharCode(needle[i]));
    const r = rank === -1 ? -1 : common.length - rank;
    if (r < bestRank) [best, bestRank] = [i, r];
  }
  return best;
}

function search(job: Job): Counts {
  const needle = new TextEncoder().encode(job.needle);
  const pick = rareIndex(needle);
  const rare = needle[pick];
  const finder = compileNeedle(needle);
  const counts: Counts = { matched: 0, binary: 0, big: 0, bytes: 0 };
  for (const path of job.paths) {
    try {
      using file = Deno.openSync(path);
      const info = file.statSync();
      if (!info.isFile) continue;
      if (info.size > job.maxBytes) {
        counts.big++;
        continue;
      }
      scan.ensure(info.size);
      const heap = scan.heap();
      let filled = 0;
      while (filled < info.size) {
        const n = file.readSync(heap.subarray(filled, info.size));
        if (!n) break;
        filled += n;
      }
      counts.bytes += filled;
      if (scan.find(0, Math.min(filled, 8192), 0) !== -1) {
        counts.binary++;
        continue;
      }
      if (!job.simd) {
        if (finder(heap.subarray(0, filled), 0) !== -1) counts.matched++;
        continue;
      }
      for (let from = pick; from < filled;) {
        const k = scan.find(from, filled - from, rare);
        if (k === -1) break;
        const start = from + k - pick;
        let j = 0;
        while (j < needle.length && heap[start + j] === needle[j]) j++;
        if (j === needle.length) {
          counts.matched++;
          break;
        }
        from += k + 1;
      }
    } catch { /* unreadable: skipped, as the tool counts it */ }
  }
  return counts;
}

self.onmessage = (event: MessageEvent<Job>) => self.postMessage(search(event.data));
