import assert from "node:assert/strict";
import { UsageMeter } from "./usage.ts";

Deno.test("usage: the server's counts summed; a count no reply carried is null, never zero", () => {
  const m = new UsageMeter();
  assert.deepEqual(m.total, { prompt_tokens: null, completion_tokens: null });
  m.add(undefined);
  m.add({ promptTokens: 100 });
  assert.deepEqual(m.total, { prompt_tokens: 100, completion_tokens: null });
  m.add({ promptTokens: 50, completionTokens: 7 });
  m.add({ promptTokens: -1, completionTokens: Number.NaN });
  assert.deepEqual(m.total, { prompt_tokens: 150, completion_tokens: 7 });
});
