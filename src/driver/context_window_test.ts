import assert from "node:assert/strict";
import fc from "fast-check";
import { COMPACTED_RESULT, estimateTokens, fitToWindow, replyReserve } from "./context_window.ts";
import type { ChatMessage } from "../model/types.ts";

const system: ChatMessage = { role: "system", content: "rules" };

function rounds(sizes: number[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "user", content: "task" }];
  sizes.forEach((n, i) => {
    out.push({
      role: "assistant",
      content: null,
      tool_calls: [{
        id: `c${i}`,
        type: "function",
        function: { name: "read_file", arguments: "{}" },
      }],
    });
    out.push({ role: "tool", tool_call_id: `c${i}`, content: "x".repeat(n) });
  });
  return out;
}

Deno.test("a fitted conversation keeps every message and role, and fits the budget", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 12 }),
      fc.integer({ min: 2048, max: 40_000 }),
      (sizes, window) => {
        const messages = rounds(sizes);
        const fit = fitToWindow(system, messages, [], window);
        if (!fit.ok) return /no longer fits/.test(fit.message);
        return fit.messages.length === messages.length + 1 &&
          fit.messages.every((m, i) => m.role === [system, ...messages][i].role) &&
          estimateTokens(fit.messages) <= window - replyReserve(window);
      },
    ),
  );
});

Deno.test("the oldest results go first; the newest round is never shortened", () => {
  const messages = rounds([9000, 9000, 9000]);
  const fit = fitToWindow(system, messages, [], 10_000);
  assert.ok(fit.ok);
  const tools = fit.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.equal(tools[0], COMPACTED_RESULT);
  assert.equal(tools[2].length, 9000);
});

Deno.test("what fits is sent unchanged", () => {
  const messages = rounds([10]);
  const fit = fitToWindow(system, messages, [], 32_768);
  assert.ok(fit.ok);
  assert.equal(fit.compacted, 0);
  assert.deepEqual(fit.messages, [system, ...messages]);
});
