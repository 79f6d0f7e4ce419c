import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { askRefusal } from "./questions.ts";

Deno.test("ask_user: refusal is decided by count and taint alone", () => {
  fc.assert(fc.property(fc.nat(50), fc.boolean(), (count, tainted) => {
    const r = askRefusal(count, 4, tainted);
    assert.equal(r === null, !tainted && count <= 4);
  }));
});
