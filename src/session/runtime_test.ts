import assert from "node:assert/strict";
import { repliesAfter } from "./runtime.ts";
import type { CompleteRequest, ModelClient, ModelReply } from "../model/types.ts";

const reply: ModelReply = { text: "hi", toolCalls: [], finishReason: "stop", problems: [] };

Deno.test("repliesAfter: the request goes at once, its reply is handed over only once the probe's lines are said", async () => {
  const asked: CompleteRequest[] = [];
  const client: ModelClient = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    complete: (r) => {
      asked.push(r);
      return Promise.resolve(reply);
    },
  };
  let say!: () => void;
  const said = new Promise<void>((r) => say = r);
  const held = repliesAfter(client, said);
  assert.equal(held.endpoint, client.endpoint);
  assert.equal(held.model, "m");
  assert.equal(held.servedContext, undefined);
  let got: ModelReply | null = null;
  const pending = held.complete({ messages: [] }).then((r) => got = r);
  assert.equal(asked.length, 1, "the request was made before the probe answered");
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.equal(got, null, "no reply before the lines are said");
  say();
  await pending;
  assert.equal(got, reply);
});

Deno.test("repliesAfter: a failed request too waits for the lines, then fails as it did", async () => {
  let say!: () => void;
  const said = new Promise<void>((r) => say = r);
  const held = repliesAfter({
    endpoint: "e",
    model: "m",
    complete: () => Promise.reject(new Error("unreachable")),
    servedContext: () => Promise.resolve({ tokens: 1 } as never),
  }, said);
  assert.ok(held.servedContext, "the client's servedContext is kept");
  let settled = false;
  const failing = held.complete({ messages: [] }).catch((e) => {
    settled = true;
    return e as Error;
  });
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.equal(settled, false);
  say();
  assert.equal((await failing as Error).message, "unreachable");
});

Deno.test("repliesAfter: a reply's streamed text too waits for the probe's lines, then comes in order", async () => {
  let stream!: (text: string) => void;
  let finish!: () => void;
  const client: ModelClient = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    complete: (r) => {
      stream = (text) => r.onText?.(text);
      return new Promise((resolve) => finish = () => resolve(reply));
    },
  };
  let say!: () => void;
  const said = new Promise<void>((r) => say = r);
  const held = repliesAfter(client, said);
  const shown: string[] = [];
  const pending = held.complete({ messages: [], onText: (t) => shown.push(t) });
  // The endpoint streams its answer before the probe has answered.
  stream("commands ");
  stream("ran.");
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.deepEqual(shown, [], "no text of the reply is shown before the lines are said");
  say();
  await said;
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.deepEqual(shown, ["commands ", "ran."], "held text comes once they are said, in order");
  stream(" More.");
  assert.deepEqual(shown, ["commands ", "ran.", " More."], "and later text at once");
  finish();
  assert.equal(await pending, reply);
});
