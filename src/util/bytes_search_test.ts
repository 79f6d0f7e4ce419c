import assert from "node:assert/strict";
import fc from "fast-check";
import { compileInPlace, compileNeedle, rarePair } from "./bytes_search.ts";

function naive(hay: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = Math.max(0, from); i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

Deno.test("bytes search: finds the same first occurrence as a naive scan, from any offset", () => {
  // A tiny alphabet makes false candidates common, so the string-search hand-over runs too.
  const bytes = (max: number) => fc.uint8Array({ min: 0x61, max: 0x63, maxLength: max });
  fc.assert(
    fc.property(
      bytes(400),
      bytes(6).filter((n) => n.length > 0),
      fc.nat(400),
      (hay, needle, from) => {
        assert.equal(compileNeedle(needle)(hay, from), naive(hay, needle, from));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("bytes search: any byte values, including NUL and bytes that are not UTF-8", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ minLength: 1, maxLength: 4 }),
      (hay, needle) => {
        assert.equal(compileNeedle(needle)(hay, 0), naive(hay, needle, 0));
      },
    ),
  );
  const hay = new Uint8Array([0x80, 0x9d, 0xff, 0x00, 0x81]);
  assert.equal(compileNeedle(new Uint8Array([0xff, 0x00]))(hay, 0), 2);
  assert.equal(compileNeedle(new Uint8Array([0x9d]))(hay, 0), 1);
});

Deno.test("bytes search: a needle of common bytes over a long haystack is still found", () => {
  const text = new TextEncoder().encode("e".repeat(100_000) + "eeex" + "e".repeat(10));
  assert.equal(compileNeedle(new TextEncoder().encode("eeex"))(text, 0), 100_000);
  assert.equal(compileNeedle(new TextEncoder().encode("eeey"))(text, 0), -1);
});

Deno.test("bytes search: an empty needle is refused", () => {
  assert.throws(() => compileNeedle(new Uint8Array()), RangeError);
});

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
