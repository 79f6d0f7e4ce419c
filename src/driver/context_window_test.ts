import assert from "node:assert/strict";
import fc from "fast-check";
import {
  COMPACTED_RESULT,
  estimateTokens,
  fitToWindow,
  onlyAdded,
  replyReserve,
  resultShareChars,
} from "./context_window.ts";
import { effectiveWindow, MAX_COUNT_RATIO } from "../util/window.ts";
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

Deno.test("window: the smaller of the config and what the server serves, and who set it", () => {
  assert.deepEqual(effectiveWindow(32_768, null), { tokens: 32_768, by: "config", fit: 32_768 });
  assert.deepEqual(effectiveWindow(32_768, 4_096), { tokens: 4_096, by: "server", fit: 4_096 });
  assert.deepEqual(effectiveWindow(8_192, 131_072), { tokens: 8_192, by: "config", fit: 8_192 });
  assert.deepEqual(effectiveWindow(8_192, 0), { tokens: 8_192, by: "config", fit: 8_192 });
  // A server that counts 1.6 times the estimate: the estimate's budget shrinks by as much, and
  // never by more than MAX_COUNT_RATIO, nor grows for a server that counts less.
  assert.deepEqual(effectiveWindow(32_768, 4_096, 1.6), {
    tokens: 4_096,
    by: "server",
    fit: 2_560,
  });
  assert.equal(effectiveWindow(8_192, null, 100).fit, Math.floor(8_192 / MAX_COUNT_RATIO));
  assert.equal(effectiveWindow(8_192, null, 0.5).fit, 8_192);
  assert.equal(effectiveWindow(8_192, null, NaN).fit, 8_192);
  // The results' share follows the window the server serves.
  const served = effectiveWindow(32_768, 4_096).tokens;
  assert.ok(resultShareChars(system, [], served) < resultShareChars(system, [], 32_768));
});

Deno.test("only added: a request that extends the one before, and what is not", () => {
  const before = [system, ...rounds([10, 20])];
  const after = [
    ...before.map((m) => ({ ...m })),
    { role: "user", content: "more" } as ChatMessage,
  ];
  assert.equal(onlyAdded(before, after), true);
  // The same request again, a shortened result, a cleared conversation, a changed system prompt.
  assert.equal(onlyAdded(before, before), false);
  const shortened = after.map((m) => m.role === "tool" ? { ...m, content: COMPACTED_RESULT } : m);
  assert.equal(onlyAdded(before, shortened), false);
  assert.equal(onlyAdded(before, [system, { role: "user", content: "new" }]), false);
  const otherSystem = [{ role: "system", content: "other" } as ChatMessage, ...after.slice(1)];
  assert.equal(onlyAdded(before, otherSystem), false);
  // A call's arguments compacted.
  const args = after.map((m) =>
    m.role === "assistant" && m.tool_calls
      ? {
        ...m,
        tool_calls: m.tool_calls.map((c) => ({
          ...c,
          function: { ...c.function, arguments: '{"_":1}' },
        })),
      }
      : m
  );
  assert.equal(onlyAdded(before, args), false);
});
