import assert from "node:assert/strict";
import { plural } from "./plural.ts";

Deno.test("plural: one is singular, every other count plural", () => {
  assert.equal(plural(1, "line"), "1 line");
  assert.equal(plural(0, "line"), "0 lines");
  assert.equal(plural(2, "more line"), "2 more lines");
  assert.equal(plural(1, "entry", "entries"), "1 entry");
  assert.equal(plural(3, "entry", "entries"), "3 entries");
});
