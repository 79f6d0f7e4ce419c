import assert from "node:assert/strict";
import { waitUntil } from "../../test/support/run_main.ts";
import { ModelWorker, netTarget, WorkerModelClient } from "./worker_client.ts";
import { ModelError } from "./types.ts";
import { startMockModel } from "../../scripts/mock-model.ts";

const FAST = { attempts: 2, baseDelayMs: 5, maxDelayMs: 10, totalMs: 2000 };
const USER = [{ role: "user" as const, content: "hi" }];

Deno.test("netTarget names host:port, with the scheme's default port", () => {
  assert.equal(netTarget("http://127.0.0.1:11434/v1"), "127.0.0.1:11434");
  assert.equal(netTarget("https://models.example/v1"), "models.example:443");
  assert.equal(netTarget("http://[::1]:8080/v1"), "[::1]:8080");
});

Deno.test("the model worker streams text, retries and answers like the client it runs", async () => {
  const mock = await startMockModel({
    script: { replies: [{ fault: { status: 500 } }, { text: "hello there", chunk: 3 }] },
  });
  const worker = new ModelWorker([mock.url]);
  try {
    const client = new WorkerModelClient(worker, {
      endpoint: mock.url,
      model: "m",
      timeoutMs: 5000,
      retry: FAST,
    });
    const pieces: string[] = [];
    const retries: string[] = [];
    const reply = await client.complete({
      messages: USER,
      onText: (t) => pieces.push(t),
      onRetry: (why) => retries.push(why),
    });
    assert.equal(reply.text, "hello there");
    assert.equal(pieces.join(""), "hello there");
    assert.deepEqual(retries, ["HTTP 500: mock fault: HTTP 500"]);
  } finally {
    worker.terminate();
    await mock.stop();
  }
});

Deno.test("the model worker cannot reach a host that is not a configured endpoint", async () => {
  const allowed = await startMockModel({ script: { replies: [] } });
  const other = await startMockModel({ script: { replies: [{ text: "should never be asked" }] } });
  const worker = new ModelWorker([allowed.url]);
  try {
    const client = new WorkerModelClient(worker, {
      endpoint: other.url,
      model: "m",
      timeoutMs: 5000,
      retry: FAST,
    });
    await assert.rejects(() => client.complete({ messages: USER }), (e) => {
      assert.ok(e instanceof ModelError);
      assert.match(e.forPerson("planner"), /net access/i);
      return true;
    });
    assert.equal(other.requests.length, 0);
  } finally {
    worker.terminate();
    await allowed.stop();
    await other.stop();
  }
});

Deno.test("a stopped request ends as aborted, and the worker goes on serving", async () => {
  const mock = await startMockModel({
    script: { replies: [{ text: "x", fault: { never_end: true } }, { text: "next" }] },
  });
  const worker = new ModelWorker([mock.url]);
  try {
    const client = new WorkerModelClient(worker, {
      endpoint: mock.url,
      model: "m",
      timeoutMs: 10_000,
      retry: FAST,
    });
    const controller = new AbortController();
    const pending = client.complete({ messages: USER, signal: controller.signal });
    // Stopped while the reply streams, not before it was sent: a bounded wait that fails loudly.
    await waitUntil(() => (mock.requests[0]?.streamed ?? 0) >= 1, 400, "the reply streaming");
    controller.abort();
    await assert.rejects(() => pending, (e) => e instanceof ModelError && e.kind === "aborted");
    assert.equal((await client.complete({ messages: USER })).text, "next");
  } finally {
    worker.terminate();
    await mock.stop();
  }
});

Deno.test("the server's token count and tool_choice cross the worker boundary", async () => {
  const bodies: Record<string, unknown>[] = [];
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    bodies.push(await req.json());
    return new Response(
      chunk({ choices: [{ index: 0, delta: { content: "sum" }, finish_reason: "stop" }] }) +
        chunk({ choices: [], usage: { prompt_tokens: 4096, completion_tokens: 7 } }) +
        "data: [DONE]\n\n",
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  const url = `http://127.0.0.1:${server.addr.port}/v1`;
  const worker = new ModelWorker([url]);
  try {
    const client = new WorkerModelClient(worker, { endpoint: url, model: "m", timeoutMs: 5000 });
    const reply = await client.complete({ messages: USER, toolChoice: "none" });
    assert.equal(reply.text, "sum");
    assert.deepEqual(reply.usage, { promptTokens: 4096, completionTokens: 7 });
    assert.equal(bodies[0].tool_choice, "none", "a compaction's tool_choice reaches the server");
    // The run's meter adds every reply's count (the one-shot summary's `usage`).
    await client.complete({ messages: USER });
    assert.deepEqual(worker.usage.total, { prompt_tokens: 8192, completion_tokens: 14 });
  } finally {
    worker.terminate();
    await server.shutdown();
  }
});

Deno.test("a warmed worker says when the endpoint begins to answer, once a try, before its text", async () => {
  const mock = await startMockModel({
    script: { replies: [{ fault: { status: 500 } }, { text: "hello there", chunk: 3 }] },
  });
  const worker = new ModelWorker([mock.url]);
  try {
    worker.warm(); // started before its first request, as a one-shot run does
    const client = new WorkerModelClient(worker, {
      endpoint: mock.url,
      model: "m",
      timeoutMs: 5000,
      retry: FAST,
    });
    const seen: string[] = [];
    const reply = await client.complete({
      messages: USER,
      onText: () => seen.push("text"),
      onRetry: () => seen.push("retry"),
      onAnswering: () => seen.push("answering"),
    });
    assert.equal(reply.text, "hello there");
    const texts = seen.filter((s) => s === "text").length;
    assert.ok(texts > 0);
    assert.deepEqual(seen, ["answering", "retry", "answering", ...Array(texts).fill("text")]);
    assert.equal(mock.requests.length, 2);
  } finally {
    worker.terminate();
    await mock.stop();
  }
});
