import assert from "node:assert/strict";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { oneTarget } from "./routing.ts";

Deno.test("oneTarget: exactly one of path and path_ref, in the same words for the schemas and for route", async () => {
  assert.equal(oneTarget("a", undefined), null);
  assert.equal(oneTarget(undefined, "ref:0"), null);
  assert.equal(oneTarget("a", "ref:0"), "give either path or path_ref, not both");
  assert.equal(oneTarget(undefined, undefined), "give path (or path_ref for a referenced file)");
  await withPolicy({ files: { a: "" }, trust: { ".": true } }, async (fx) => {
    for (const [path, ref] of [["a", "ref:0"], [undefined, undefined]]) {
      const routed = await fx.policy.route(path, ref);
      assert.deepEqual(routed, { ok: false, error: oneTarget(path, ref) });
    }
  });
});
