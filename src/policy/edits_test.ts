import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { type EditFacts, evaluateEdit, occurrences, replacePassage } from "./edits.ts";
import { auditEntryOf } from "./verdict.ts";
import { TRUSTED_PRIVATE, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../util/label.ts";

Deno.test("edit_file: occurrences finds every non-overlapping match, as indexOf would", () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 40 }),
      fc.string({ minLength: 1, maxLength: 3 }),
      (hay, needle) => {
        const enc = new TextEncoder();
        const got = occurrences(enc.encode(hay), enc.encode(needle)).length;
        let expected = 0;
        for (
          let at = hay.indexOf(needle);
          at !== -1;
          at = hay.indexOf(needle, at + needle.length)
        ) expected++;
        assert.equal(got, expected);
      },
    ),
  );
});

Deno.test("edit_file: replacePassage replaces one occurrence, or all with replace_all, and never guesses", () => {
  const enc = new TextEncoder();
  const dec = (b: Uint8Array | null) => b === null ? null : new TextDecoder().decode(b);
  const once = replacePassage(enc.encode("a b a"), enc.encode("b"), enc.encode("cc"), false);
  assert.deepEqual({ found: once.found, text: dec(once.bytes) }, { found: 1, text: "a cc a" });
  const twice = replacePassage(enc.encode("a b a"), enc.encode("a"), enc.encode("x"), false);
  assert.deepEqual({ found: twice.found, text: dec(twice.bytes) }, { found: 2, text: null });
  const all = replacePassage(enc.encode("a b a"), enc.encode("a"), enc.encode(""), true);
  assert.deepEqual({ found: all.found, text: dec(all.bytes) }, { found: 2, text: " b " });
  const none = replacePassage(enc.encode("a b a"), enc.encode("z"), enc.encode("y"), true);
  assert.deepEqual({ found: none.found, text: dec(none.bytes) }, { found: 0, text: null });
});

Deno.test("evaluateEdit: a trusted text file and one occurrence; only the trust refusal is recorded", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const base: EditFacts = {
    shownAs: "ref:3",
    rel: "vendor/x.ts",
    viaRef: true,
    file: { bytes: enc("a b a\n"), label: TRUSTED_PUBLIC },
    plannerWords: TRUSTED_PUBLIC,
    edit: { old_text: "b", new_text: "c" },
  };
  const rows: {
    name: string;
    facts: Partial<EditFacts>;
    /** The new text, or the refusal's words (a pattern). */
    then: string | RegExp;
    label?: typeof TRUSTED_PUBLIC;
    audited?: boolean;
  }[] = [
    { name: "one occurrence is replaced", facts: {}, then: "a c a\n", label: TRUSTED_PUBLIC },
    {
      name: "the planner's words carry the context's label into the file's",
      facts: { plannerWords: TRUSTED_PRIVATE },
      then: "a c a\n",
      label: TRUSTED_PRIVATE,
    },
    {
      name: "replace_all replaces every one",
      facts: { edit: { old_text: "a", new_text: "x", replace_all: true } },
      then: "x b x\n",
      label: TRUSTED_PUBLIC,
    },
    { name: "a file gone", facts: { file: null }, then: /^ref:3 no longer exists$/ },
    {
      name: "an untrusted file is refused before any comparison, and recorded",
      facts: {
        file: { bytes: enc("a b a\n"), label: UNTRUSTED_PUBLIC },
        edit: { old_text: "nowhere", new_text: "" },
      },
      then: /requires a trusted file and ref:3 is not trusted/,
      audited: true,
    },
    {
      name: "not text",
      facts: { file: { bytes: new Uint8Array([0xff, 0x62]), label: TRUSTED_PUBLIC } },
      then: /is not UTF-8 text/,
    },
    {
      name: "no occurrence",
      facts: { edit: { old_text: "z", new_text: "y" } },
      then: /does not occur in ref:3/,
    },
    {
      name: "several, without replace_all",
      facts: { edit: { old_text: "a", new_text: "y" } },
      then: /occurs 2 times in ref:3/,
    },
  ];
  for (const row of rows) {
    const verdict = evaluateEdit({ ...base, ...row.facts });
    assert.ok(verdict.kind !== "ask", row.name);
    const entry = auditEntryOf(verdict);
    if (typeof row.then === "string") {
      assert.ok(verdict.kind === "allow", row.name);
      assert.equal(new TextDecoder().decode(verdict.grants.bytes), row.then, row.name);
      assert.equal(verdict.grants.label, row.label, row.name);
      assert.equal(entry, null, row.name);
      continue;
    }
    assert.ok(verdict.kind === "refuse", row.name);
    assert.match(verdict.refusal, row.then, row.name);
    assert.deepEqual(
      entry,
      row.audited
        ? {
          tool: "edit_file",
          routing: { path: "vendor/x.ts", via_ref: true },
          labels: { file: UNTRUSTED_PUBLIC },
          decision: "refused: file not trusted",
          by: "rule",
        }
        : null,
      row.name,
    );
  }
});
