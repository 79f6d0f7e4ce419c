import assert from "node:assert/strict";
import fc from "../../../test/support/fast_check.ts";
import { loadScan, plainScan, type Scan, SCAN_PAD } from "./simd_scan.ts";

function naiveFind(h: Uint8Array, p: number, n: number, b: number): number {
  for (let i = p; i < p + n; i++) if (h[i] === b) return i - p;
  return -1;
}

function naiveFind2(h: Uint8Array, p: number, n: number, a: number, c: number, d: number) {
  for (let i = p; i < p + n; i++) if (h[i] === a && h[i + d] === c) return i - p;
  return -1;
}

function naiveCount(h: Uint8Array, p: number, n: number, b: number): number {
  let k = 0;
  for (let i = p; i < p + n; i++) if (h[i] === b) k++;
  return k;
}

/** Puts `bytes` at the start of the scan's heap, with garbage after them (as a reused buffer has). */
function place(scan: Scan, bytes: Uint8Array, garbage: number): Uint8Array {
  scan.ensure(bytes.length + 4 * SCAN_PAD);
  const heap = scan.heap();
  heap.fill(garbage, 0, bytes.length + 4 * SCAN_PAD);
  heap.set(bytes);
  return heap;
}

Deno.test("simd scan: this engine runs the WebAssembly SIMD module", async () => {
  assert.equal((await loadScan()).simd, true);
});

Deno.test("simd scan: find, find2 and count agree with naive scans, in SIMD and in plain JavaScript", async () => {
  const scans = [await loadScan(), plainScan()];
  // A small alphabet: hits in every 16- and 64-byte lane position, and in the tails.
  const bytes = fc.uint8Array({ min: 0, max: 3, maxLength: 300 });
  fc.assert(
    fc.property(
      bytes,
      fc.nat(300),
      fc.nat(300),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 0, max: 3 }),
      (data, p0, n0, a, c, d, garbage) => {
        const p = Math.min(p0, data.length);
        const n = Math.min(n0, data.length - p);
        for (const scan of scans) {
          const heap = place(scan, data, garbage);
          const what = `${scan.simd ? "simd" : "plain"} p=${p} n=${n}`;
          assert.equal(scan.find(p, n, a), naiveFind(heap, p, n, a), what);
          assert.equal(scan.find2(p, n, a, c, d), naiveFind2(heap, p, n, a, c, d), what);
          assert.equal(scan.count(p, n, a), naiveCount(heap, p, n, a), what);
        }
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("simd scan: the heap grows on demand and keeps what it held", async () => {
  for (const scan of [await loadScan(), plainScan()]) {
    scan.ensure(10);
    scan.heap()[5] = 7;
    scan.ensure(3 * 1024 * 1024);
    assert.ok(scan.heap().length >= 3 * 1024 * 1024);
    assert.equal(scan.heap()[5], 7);
    scan.heap()[3 * 1024 * 1024 - 1] = 9;
    assert.equal(scan.find(0, 3 * 1024 * 1024, 9), 3 * 1024 * 1024 - 1);
  }
});
