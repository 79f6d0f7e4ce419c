import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  formatLabel,
  isPrivate,
  isTrusted,
  joinLabels,
  type Label,
  label,
  parseLabel,
  sameLabel,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
  UNTRUSTED_PUBLIC,
} from "./label.ts";

const anyLabel: fc.Arbitrary<Label> = fc.record({
  integrity: fc.constantFrom("T" as const, "U" as const),
  confidentiality: fc.constantFrom("pub" as const, "priv" as const),
});

/** a ≤ b in the lattice: b is at least as untrusted and at least as private. */
function below(a: Label, b: Label): boolean {
  return (a.integrity === "T" || b.integrity === "U") &&
    (a.confidentiality === "pub" || b.confidentiality === "priv");
}

Deno.test("label: the joinLabels table of docs/contract.md §3.1", () => {
  assert.deepEqual(joinLabels(TRUSTED_PUBLIC, UNTRUSTED_PUBLIC), UNTRUSTED_PUBLIC);
  assert.deepEqual(joinLabels(TRUSTED_PUBLIC, TRUSTED_PRIVATE), TRUSTED_PRIVATE);
  assert.deepEqual(joinLabels(UNTRUSTED_PUBLIC, TRUSTED_PRIVATE), UNTRUSTED_PRIVATE);
  assert.deepEqual(joinLabels(TRUSTED_PUBLIC, TRUSTED_PUBLIC), TRUSTED_PUBLIC);
  assert.deepEqual(joinLabels(), TRUSTED_PUBLIC, "the empty joinLabels is the bottom, (T,pub)");
});

Deno.test("label (property): joinLabels is commutative", () => {
  fc.assert(
    fc.property(anyLabel, anyLabel, (a, b) => sameLabel(joinLabels(a, b), joinLabels(b, a))),
  );
});

Deno.test("label (property): joinLabels is associative", () => {
  fc.assert(
    fc.property(
      anyLabel,
      anyLabel,
      anyLabel,
      (a, b, c) => sameLabel(joinLabels(joinLabels(a, b), c), joinLabels(a, joinLabels(b, c))),
    ),
  );
});

Deno.test("label (property): joinLabels is idempotent", () => {
  fc.assert(fc.property(anyLabel, (a) => sameLabel(joinLabels(a, a), a)));
});

Deno.test("label (property): joinLabels is monotone and an upper bound; nothing washes U or priv", () => {
  fc.assert(
    fc.property(anyLabel, anyLabel, anyLabel, (a, b, c) => {
      assert.ok(below(a, joinLabels(a, b)) && below(b, joinLabels(a, b)), "upper bound");
      if (below(a, b)) assert.ok(below(joinLabels(a, c), joinLabels(b, c)), "monotone");
      if (!isTrusted(a)) assert.equal(joinLabels(a, b).integrity, "U");
      if (isPrivate(a)) assert.equal(joinLabels(a, b).confidentiality, "priv");
    }),
  );
});

Deno.test("label (property): n-ary joinLabels equals folding the binary join", () => {
  fc.assert(
    fc.property(fc.array(anyLabel, { maxLength: 8 }), (ls) => {
      const folded = ls.reduce((acc, l) => joinLabels(acc, l), TRUSTED_PUBLIC);
      return sameLabel(joinLabels(...ls), folded);
    }),
  );
});

Deno.test("label: written (T,pub) and read back exactly; anything else is undefined", () => {
  for (const l of [TRUSTED_PUBLIC, TRUSTED_PRIVATE, UNTRUSTED_PUBLIC, UNTRUSTED_PRIVATE]) {
    assert.equal(parseLabel(formatLabel(l)), l);
  }
  assert.equal(formatLabel(UNTRUSTED_PRIVATE), "(U,priv)");
  for (const bad of ["(T,public)", "T,pub", "(t,pub)", "(T, pub)", "(X,pub)", ""]) {
    assert.equal(parseLabel(bad), undefined, bad);
  }
});

Deno.test("label: constants are frozen, so no caller can wash a shared label", () => {
  assert.ok(Object.isFrozen(UNTRUSTED_PRIVATE));
  assert.throws(() => {
    (UNTRUSTED_PRIVATE as { integrity: string }).integrity = "T";
  });
  assert.equal(label("U", "priv"), UNTRUSTED_PRIVATE);
});
