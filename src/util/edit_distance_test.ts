import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { editDistance } from "./edit_distance.ts";

/** The definition, as a whole table: what the three rolling rows must agree with. */
function byTable(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const steps = [
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      ];
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        steps.push(d[i - 2][j - 2] + 1);
      }
      d[i][j] = Math.min(...steps);
    }
  }
  return d[a.length][b.length];
}

Deno.test("edit distance: insertions, deletions, substitutions and swaps of neighbours", () => {
  assert.equal(editDistance("trsut", "trust"), 1);
  assert.equal(editDistance("commit-style", "comimt-stlye"), 2);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("abc", ""), 3);
  assert.equal(editDistance("", ""), 0);
  // Optimal string alignment: a swapped pair is not edited again ("ca" → "abc" is 3, not 2).
  assert.equal(editDistance("ca", "abc"), 3);
});

Deno.test("edit distance: property: the table's value, either way round", () => {
  const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "d"), maxLength: 9 });
  fc.assert(
    fc.property(word, word, (a, b) => {
      const d = editDistance(a, b);
      assert.equal(d, byTable(a, b));
      assert.equal(d, editDistance(b, a));
    }),
    { numRuns: 500 },
  );
});
