import assert from "node:assert/strict";
import { ServedWindow } from "./served_window.ts";
import type { ChatMessage, ModelClient, ModelReply } from "../model/types.ts";
import type { ServedContext } from "../model/served_context.ts";

const reply = (promptTokens?: number): ModelReply => ({
  text: "ok",
  toolCalls: [],
  finishReason: "stop",
  problems: [],
  ...(promptTokens === undefined ? {} : { usage: { promptTokens } }),
});

const served = (tokens: number | null, more: Partial<ServedContext> = {}): ServedContext => ({
  server: "llama.cpp",
  tokens,
  source: "/props",
  trained: null,
  provisional: false,
  servedName: null,
  anyName: false,
  ...more,
});

/** A planner whose server answers each question with the next of `answers`. */
function planner(answers: (ServedContext | null)[]): ModelClient & { asked: number } {
  const client = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    asked: 0,
    complete: () => Promise.reject(new Error("not sent")),
    servedContext: () => Promise.resolve(answers[client.asked++] ?? served(null)),
  };
  return client as unknown as ModelClient & { asked: number };
}

const msgs = (n: number): ChatMessage[] =>
  Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `m${i}` }));

Deno.test("served window: the config's window until the server says it serves less, said once", async () => {
  const notices: string[] = [];
  const w = new ServedWindow(32_000, (n) => notices.push(n));
  assert.deepEqual(w.window, { tokens: 32_000, by: "config", fit: 32_000 });
  await w.learn(planner([]), undefined);
  assert.equal(notices.length, 0, "nothing is learned before the first request asks");
  const p = planner([served(8_192)]);
  w.askAlongside(p);
  w.askAlongside(p);
  await w.learn(p, undefined);
  await w.learn(p, undefined);
  assert.equal(p.asked, 1, "asked once, alongside the first request");
  assert.deepEqual(w.window, { tokens: 8_192, by: "server", fit: 8_192 });
  assert.equal(notices.length, 1);
  assert.match(notices[0], /^context window: 8192 tokens — llama-server serves m with 8192/);
  assert.match(w.limitNote(), /^; llama-server serves only 8192 tokens: /);
  w.forget();
  assert.deepEqual(w.window, { tokens: 32_000, by: "config", fit: 32_000 });
  assert.equal(w.limitNote(), "");
});

Deno.test("served window: a provisional answer is asked again once after a reply", async () => {
  const w = new ServedWindow(32_000, () => {});
  const p = planner([served(4_096, { provisional: true }), served(16_384)]);
  w.askAlongside(p);
  await w.learn(p, undefined);
  await w.learn(p, undefined);
  assert.equal(p.asked, 2);
  assert.equal(w.window.tokens, 16_384);
});

Deno.test("served window: a count above the estimate shrinks the budget; a falling one is told once", () => {
  const notices: string[] = [];
  const w = new ServedWindow(10_000, (n) => notices.push(n));
  assert.equal(w.readUsage(msgs(1), 100, reply()), null, "no count, no fill");
  assert.equal(w.readUsage(msgs(2), 100, reply(200)), 200 / 10_000);
  assert.equal(w.window.fit, 5_000, "the server counts twice the estimate");
  assert.equal(w.window.tokens, 10_000);
  assert.equal(notices.length, 0);
  w.readUsage(msgs(3), 100, reply(150));
  w.readUsage(msgs(4), 100, reply(120));
  assert.equal(notices.length, 1, "told once a session");
  assert.match(notices[0], /cut the conversation to fit its context/);
  w.forgetSent();
  const quiet = new ServedWindow(10_000, (n) => notices.push(n));
  quiet.readUsage(msgs(3), 300, reply(300));
  quiet.forgetSent();
  quiet.readUsage(msgs(1), 100, reply(100));
  assert.equal(notices.length, 1, "after /clear a smaller count is no truncation");
});
