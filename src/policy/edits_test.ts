import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { occurrences, replacePassage } from "./edits.ts";

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
