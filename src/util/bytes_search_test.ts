import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { compileInPlace, rarePair } from "./bytes_search.ts";

function naive(hay: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = Math.max(0, from); i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

Deno.test("bytes search in place: the pair scan finds the same first occurrence as a naive scan, within [from, end)", async () => {
  const { loadScan, plainScan, SCAN_PAD } = await import("../worker/ops/simd_scan.ts");
  const scans = [await loadScan(), plainScan()];
  const bytes = (max: number) => fc.uint8Array({ min: 0x61, max: 0x63, maxLength: max });
  fc.assert(
    fc.property(
      bytes(300),
      bytes(8).filter((n) => n.length > 0),
      fc.nat(300),
      fc.nat(300),
      fc.integer({ min: 0x61, max: 0x63 }),
      (hay, needle, from0, end0, garbage) => {
        const end = Math.min(end0, hay.length);
        const from = Math.min(from0, end);
        for (const scan of scans) {
          scan.ensure(hay.length + needle.length + SCAN_PAD);
          const heap = scan.heap();
          // What lies past the end (a reused buffer's old bytes) must never count.
          heap.fill(garbage, 0, hay.length + needle.length + SCAN_PAD);
          heap.set(hay);
          const expected = naive(hay.subarray(0, end), needle, from);
          assert.equal(compileInPlace(needle, scan)(from, end), expected);
        }
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("bytes search in place: the pair is two distinct positions, rarest bytes first", () => {
  assert.deepEqual(rarePair(new TextEncoder().encode("ab")), { a: 0, c: 1 });
  const p = rarePair(new TextEncoder().encode("eeZeeQ"));
  assert.deepEqual(p, { a: 2, c: 5 });
  const same = rarePair(new TextEncoder().encode("aaaa"));
  assert.ok(same.a < same.c);
});
