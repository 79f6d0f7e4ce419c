import assert from "node:assert/strict";
import { cutPoint, isSummary, requestsIn, summaryMessage } from "./compaction.ts";
import type { ChatMessage } from "../util/chat.ts";

const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: "{}" } }],
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: "x" });

Deno.test("compaction: a cut never parts a call from its result, and spares the newest round", () => {
  const m: ChatMessage[] = [
    { role: "user", content: "task one" },
    call("a"),
    result("a"),
    call("b"),
    result("b"),
    call("c"),
    result("c"),
  ];
  assert.equal(cutPoint(m, () => true), 5, "up to the newest call, never into it");
  assert.equal(cutPoint(m, (j) => j <= 3), 3);
  assert.equal(cutPoint(m, () => false), null);
  for (let j = 1; j <= 6; j++) {
    const at = cutPoint(m, (k) => k <= j);
    if (at !== null) assert.notEqual(m[at].role, "tool", `cut ${at} would orphan a result`);
  }
});

Deno.test("compaction: the person's requests are kept verbatim across summaries", () => {
  const first = summaryMessage(
    "worked on it",
    requestsIn([
      { role: "user", content: 'do "this"\nand that' },
      call("a"),
    ]),
  );
  assert.ok(isSummary(first));
  const again = requestsIn([first, { role: "user", content: "then this" }]);
  assert.deepEqual(again, ['do "this"\nand that', "then this"]);
  assert.equal(
    cutPoint([first, call("x"), result("x")], () => true),
    null,
    "a summary alone stays",
  );
});
