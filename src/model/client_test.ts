import assert from "node:assert/strict";
import { OpenAIModelClient } from "./client.ts";
import { ModelError } from "./types.ts";
import { type MockReply, startMockModel } from "../../scripts/mock-model.ts";
import type { RetryPolicy } from "./retry.ts";

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 10, maxDelayMs: 50, totalMs: 5_000 };
const USER = [{ role: "user" as const, content: "hello" }];

async function withMock(
  replies: MockReply[],
  fn: (
    client: OpenAIModelClient,
    mock: Awaited<ReturnType<typeof startMockModel>>,
  ) => Promise<void>,
  options: { timeoutMs?: number; apiKey?: string } = {},
) {
  const mock = await startMockModel({ script: { replies } });
  try {
    const client = new OpenAIModelClient({
      endpoint: mock.url,
      model: "m",
      timeoutMs: options.timeoutMs ?? 10_000,
      apiKey: options.apiKey,
      retry: FAST,
    });
    await fn(client, mock);
  } finally {
    await mock.stop();
  }
}

async function modelError(p: Promise<unknown>): Promise<ModelError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ModelError, `expected a ModelError, got ${e}`);
    return e;
  }
  assert.fail("expected the call to fail");
}

Deno.test("streamed text reaches onText piece by piece and the whole reply is assembled", async () => {
  await withMock([{ text: "The quick brown fox jumps over the lazy dog", chunk: 5 }], async (c) => {
    const pieces: string[] = [];
    const reply = await c.complete({ messages: USER, onText: (t) => pieces.push(t) });
    assert.equal(reply.text, "The quick brown fox jumps over the lazy dog");
    assert.ok(pieces.length > 3);
    assert.equal(pieces.join(""), reply.text);
    assert.deepEqual(reply.toolCalls, []);
  });
});

Deno.test("tool calls streamed in pieces are assembled, and a whole JSON body is read too", async () => {
  await withMock([
    {
      tool_calls: [{ name: "read_file", arguments: { path: "a.txt" } }, {
        name: "list_files",
        arguments: { directory: "." },
      }],
    },
    { stream: false, text: "done", tool_calls: [{ name: "todo_write", arguments: { todos: [] } }] },
  ], async (c) => {
    const r1 = await c.complete({ messages: USER, tools: [] });
    assert.deepEqual(r1.toolCalls.map((t) => [t.function.name, JSON.parse(t.function.arguments)]), [
      ["read_file", { path: "a.txt" }],
      ["list_files", { directory: "." }],
    ]);
    assert.equal(new Set(r1.toolCalls.map((t) => t.id)).size, 2);
    const r2 = await c.complete({ messages: USER, tools: [] });
    assert.equal(r2.text, "done");
    assert.equal(r2.toolCalls[0].function.name, "todo_write");
  });
});

Deno.test("429 and 500 are retried, and the retry is reported", async () => {
  await withMock([
    { fault: { status: 429, retry_after: 0 } },
    { fault: { status: 503 } },
    { text: "ok" },
  ], async (c, mock) => {
    const retries: string[] = [];
    const reply = await c.complete({ messages: USER, onRetry: (why) => retries.push(why) });
    assert.equal(reply.text, "ok");
    // A 503 is a server still loading its model (llama-server's answer while it loads).
    assert.match(retries[0], /^HTTP 429: mock fault/);
    assert.match(retries[1], /the server is loading the model/);
    assert.equal(mock.requests.length, 3);
  });
});

Deno.test("an endpoint that stays down ends in an error naming it, after a bounded number of tries", async () => {
  await withMock([{ fault: { status: 500 }, times: 100 }], async (c, mock) => {
    const e = await modelError(c.complete({ messages: USER }));
    assert.equal(e.kind, "unreachable");
    assert.match(e.forPerson("planner"), new RegExp(mock.url.replace(/[.]/g, "\\.")));
    assert.match(e.message, /3 tries/);
    assert.equal(mock.requests.length, FAST.attempts);
  });
});

Deno.test("a refused connection is retried and then named", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const c = new OpenAIModelClient({
    endpoint: `http://127.0.0.1:${port}/v1`,
    model: "m",
    timeoutMs: 5000,
    retry: FAST,
  });
  const e = await modelError(c.complete({ messages: USER }));
  assert.equal(e.kind, "unreachable");
  assert.match(e.forPerson("planner"), new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.match(e.forPerson("planner"), /nothing is listening at/);
});

Deno.test("a stream cut mid-way is asked again; cut every time, it ends in an error", async () => {
  await withMock([{ text: "partial reply here", chunk: 3, fault: { cut_after: 2 } }, {
    text: "whole",
  }], async (c) => {
    const retries: string[] = [];
    const reply = await c.complete({ messages: USER, onRetry: (w) => retries.push(w) });
    assert.equal(reply.text, "whole");
    assert.match(retries[0], /cut off/);
  });
  await withMock(
    [{ text: "partial reply", chunk: 3, fault: { cut_after: 2 }, times: 10 }],
    async (c) => {
      const e = await modelError(c.complete({ messages: USER }));
      assert.equal(e.kind, "unreachable");
      assert.match(e.forPerson("planner"), /cut off/);
    },
  );
});

Deno.test("invalid JSON in the stream is a clear error, not a crash", async () => {
  await withMock([{ text: "abc", fault: { invalid_json: true } }], async (c) => {
    const e = await modelError(c.complete({ messages: USER }));
    assert.equal(e.kind, "not_json");
    assert.match(e.message, /not JSON/);
  });
  await withMock([{ fault: { raw_body: "<html>oops" } }], async (c) => {
    const e = await modelError(c.complete({ messages: USER }));
    assert.equal(e.kind, "not_json");
  });
});

Deno.test("a reply that never ends times out with the configured limit named", async () => {
  await withMock([{ text: "forever", fault: { never_end: true } }], async (c) => {
    const e = await modelError(c.complete({ messages: USER }));
    assert.equal(e.kind, "timeout");
    assert.match(e.message, /1 s/);
    assert.match(e.message, /timeouts\.requestMs/);
  }, { timeoutMs: 1000 });
});

Deno.test("an empty choice list and an empty body are reported as replies with nothing in them", async () => {
  await withMock([{ fault: { empty_choices: true } }, { text: "" }], async (c) => {
    const r = await c.complete({ messages: USER });
    assert.ok(r.problems.includes("the reply had no choices"));
    const r2 = await c.complete({ messages: USER });
    assert.equal(r2.text, "");
    assert.deepEqual(r2.toolCalls, []);
  });
});

Deno.test("a 404 names the model; a 401 names BRAVEBOT_API_KEY; neither is retried", async () => {
  await withMock([{ fault: { status: 404 } }, { fault: { status: 401 } }], async (c, mock) => {
    const e = await modelError(c.complete({ messages: USER }));
    assert.equal(e.kind, "http");
    assert.match(e.message, /model 'm'/);
    const e2 = await modelError(c.complete({ messages: USER }));
    assert.match(e2.message, /BRAVEBOT_API_KEY/);
    assert.equal(mock.requests.length, 2);
  });
});

Deno.test("no Authorization header without a key; a bearer token with one", async () => {
  await withMock([{ text: "a" }], async (c, mock) => {
    await c.complete({ messages: USER });
    assert.equal(mock.requests[0].authorization, null);
  });
  await withMock([{ text: "a" }], async (c, mock) => {
    await c.complete({ messages: USER });
    assert.equal(mock.requests[0].authorization, "Bearer sekrit");
  }, { apiKey: "sekrit" });
});

Deno.test("constructing a client sends nothing", async () => {
  await withMock([{ text: "a" }], (_c, mock) => {
    assert.equal(mock.requests.length, 0);
    return Promise.resolve();
  });
});

Deno.test("processor requests carry no tools; planner requests carry them", async () => {
  await withMock([{ text: "a" }, { text: "b" }], async (c, mock) => {
    await c.complete({
      messages: USER,
      tools: [{ type: "function", function: { name: "x", description: "", parameters: {} } }],
    });
    await c.complete({ messages: USER });
    assert.equal(mock.requests[0].kind, "planner");
    assert.equal(mock.requests[1].kind, "processor");
    assert.ok(!("tools" in (mock.requests[1].body as object)));
  });
});

Deno.test("requests say nothing about the machine: exactly these headers reach the server", async () => {
  const expected = (auth: boolean) => ({
    "accept": "text/event-stream, application/json",
    // Added by the runtime, the same on every machine.
    "accept-encoding": "gzip,br",
    "accept-language": "*",
    ...(auth ? { "authorization": "Bearer sekrit" } : {}),
    "content-type": "application/json",
    "user-agent": "bravebot",
  });
  for (const apiKey of [undefined, "sekrit"]) {
    await withMock([{ text: "a" }], async (c, mock) => {
      await c.complete({ messages: USER });
      const { host, "content-length": length, ...rest } = mock.requests[0].headers;
      assert.equal(host, new URL(mock.url).host);
      assert.equal(Number(length), mock.requests[0].raw.length);
      assert.deepEqual(rest, expected(apiKey !== undefined));
    }, { apiKey });
  }
});

Deno.test("an endpoint's words in a 400, a non-JSON body or an SSE error event are kept apart from the kind", async () => {
  const canary = "CANARY-5b0c-endpoint-words";
  const faults: [MockReply["fault"], string][] = [
    [{ status: 400, error_message: `no: ${canary}` }, "http"],
    [{ raw_body: `<html>${canary}` }, "not_json"],
    [{ sse_error: `{"error":{"message":"${canary}"}}` }, "endpoint_error"],
    [{ sse_error: `plain words ${canary}` }, "endpoint_error"],
  ];
  await withMock(faults.map(([fault]) => ({ fault })), async (c) => {
    for (const [, kind] of faults) {
      const e = await modelError(c.complete({ messages: USER }));
      assert.equal(e.kind, kind);
      for (const planner of [e.message, e.forPlanner("processor"), JSON.stringify(e.facts)]) {
        assert.ok(!planner.includes(canary), planner);
      }
      assert.ok(e.detail?.includes(canary));
      assert.ok(e.forPerson("processor").includes(canary));
    }
  });
});

// Cited: llama.cpp tools/server/server.cpp answers 503 {"error":{"code":503,"message":"Loading
// model","type":"unavailable_error"}} until the model is loaded.
Deno.test("client: a server loading its model is waited for, with its own bound, and says so", async () => {
  const loading = { status: 503, error_message: "Loading model" };
  const mock = await startMockModel({
    script: { replies: [{ fault: loading, times: 4 }, { text: "loaded" }] },
  });
  try {
    const said: string[] = [];
    const client = new OpenAIModelClient({
      endpoint: mock.url,
      model: "m",
      timeoutMs: 10_000,
      loadMs: 10_000,
      loadPollMs: 20,
      retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10, totalMs: 2000 },
    });
    const reply = await client.complete({
      messages: [{ role: "user", content: "hi" }],
      onRetry: (why) => said.push(why),
    });
    assert.equal(reply.text, "loaded");
    assert.equal(
      said.length,
      4,
      "more tries than the retry policy's two: loading has its own bound",
    );
    assert.match(said[0], /loading the model/);
  } finally {
    await mock.stop();
  }
});

Deno.test("client: past timeouts.loadMs a loading server is an error of its own kind", async () => {
  const mock = await startMockModel({
    script: { replies: [{ fault: { status: 503, error_message: "Loading model" }, times: 1000 }] },
  });
  try {
    const client = new OpenAIModelClient({
      endpoint: mock.url,
      model: "m",
      timeoutMs: 10_000,
      loadMs: 1_000,
      loadPollMs: 50,
    });
    await assert.rejects(
      () => client.complete({ messages: [{ role: "user", content: "hi" }] }),
      (e) => {
        assert.ok(e instanceof ModelError);
        assert.equal(e.kind, "loading");
        assert.match(e.forPlanner("planner"), /timeouts\.loadMs/);
        assert.ok(
          !e.forPlanner("planner").includes("Loading model"),
          "the server's words: the person's",
        );
        assert.match(e.forPerson("planner"), /Loading model/);
        return true;
      },
    );
  } finally {
    await mock.stop();
  }
});

Deno.test("an error body's message is found in each server's shape, else the body is the message", async () => {
  const { errorMessage } = await import("./client.ts");
  assert.equal(errorMessage('{"error":{"message":"a","type":"x"}}'), "a");
  assert.equal(errorMessage('{"error":"b"}'), "b");
  assert.equal(errorMessage('{"object":"error","message":"c","code":400}'), "c");
  assert.equal(errorMessage('{"detail":"d"}'), "d");
  assert.equal(
    errorMessage('{"detail":[{"loc":["body"],"msg":"e"}]}'),
    '[{"loc":["body"],"msg":"e"}]',
  );
  assert.equal(errorMessage("<html>\n  <b>502</b>\n</html>"), "<html> <b>502</b> </html>");
  assert.equal(errorMessage("x".repeat(10_000)).length, 300, "one bounded line");
});
