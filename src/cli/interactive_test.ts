import assert from "node:assert/strict";
import { decisionLine } from "./interactive.ts";

Deno.test("screen: a rule's decision leaves out the reason its tool's result says already", () => {
  const refused = {
    tool: "ask_user",
    decision: "refused",
    by: "rule",
    reason: "asking has stopped",
  };
  assert.equal(decisionLine(refused, "error: asking has stopped"), "  ask_user: refused (rule)");
  assert.equal(
    decisionLine(refused, "error: something else"),
    "  ask_user: refused (rule: asking has stopped)",
  );
  assert.equal(decisionLine(refused), "  ask_user: refused (rule: asking has stopped)");
  assert.equal(
    decisionLine({ tool: "run", decision: "approved", by: "policy-file" }, "ok"),
    "  run: approved (policy-file)",
  );
  // The decision's words are escaped like everything else on the screen.
  assert.equal(
    decisionLine({ tool: "x\u202E", decision: "refused", by: "rule", reason: "a\x1b[2J" }),
    "  x⟦U+202E⟧: refused (rule: a⟦U+001B⟧[2J)",
  );
});
