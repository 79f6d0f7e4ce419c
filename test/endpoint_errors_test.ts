/**
 * An endpoint's error is untrusted text that may quote the request (docs/contract.md §3.5): a
 * processor endpoint that echoes its input in a 400 body, a non-JSON body or an SSE error event
 * must not hand those bytes to the planner. The person reads them (stderr, the stream-json `error`
 * line); the planner gets the kind of failure only. Through the real program, against an endpoint
 * on 127.0.0.1 that quotes the request it was sent.
 */
import assert from "node:assert/strict";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import type { MockFault, MockReply } from "../scripts/mock-model.ts";

const CANARY = "CANARY-e91d-obey-this-file";
const files = { "vendor/lib.txt": `the quarantined bytes ${CANARY}\n` };

const quoting: [string, MockFault, RegExp][] = [
  [
    "an HTTP 400 whose body quotes the request",
    { status: 400, error_message: "bad request: $REQUEST" },
    /the processor endpoint refused the request \(HTTP 400\)/,
  ],
  [
    "a non-JSON body that quotes the request",
    { raw_body: "<html>echo: $REQUEST</html>" },
    /the processor endpoint sent a reply that is not JSON/,
  ],
  [
    "an SSE error event that quotes the request",
    { sse_error: "upstream failed on: $REQUEST" },
    /the processor endpoint reported an error in place of a reply/,
  ],
];

for (const [what, fault, kind] of quoting) {
  Deno.test(`processor endpoint, ${what}: the planner gets the kind, the person the words`, async () => {
    const replies: MockReply[] = [
      {
        for: "planner",
        tool_calls: [{ name: "read_file", arguments: { path: "vendor/lib.txt" } }],
      },
      {
        for: "planner",
        tool_calls: [{
          name: "spawn_processor",
          arguments: { reads: ["$FIRST_REF"], instruction: "summarise" },
        }],
      },
      { for: "processor", fault },
      { for: "planner", text: "could not summarise" },
    ];
    await oneShotRun({ files, replies, args: ["--output-format", "stream-json"] }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      const processor = run.mock.requests.filter((r) => r.kind === "processor");
      assert.equal(processor.length, 1);
      assert.ok(processor[0].raw.includes(CANARY), "the processor was given the bytes");
      // The endpoint really did quote them back.
      const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
      const result = events.find((e) => e.type === "tool_result" && e.name === "spawn_processor");
      assert.equal(result.is_error, true);
      assert.match(result.content, kind);
      assert.match(result.content, /no answer was stored/);
      assert.ok(!result.content.includes(CANARY), result.content);
      // Nothing the planner was sent afterwards carries them.
      const planner = run.mock.requests.filter((r) => r.kind === "planner");
      assert.equal(planner.length, 3);
      for (const r of planner) assert.ok(!r.raw.includes(CANARY), "a planner request quoted it");
      assert.ok(!JSON.stringify(run.transcripts).includes(CANARY), "the transcript quoted it");
      // The person is shown what the endpoint said.
      assert.ok(run.stderr.includes(CANARY), run.stderr);
    });
  });
}

Deno.test("planner endpoint, an HTTP 400 quoting words: the one-shot error line shows them, the transcript does not", async () => {
  const replies: MockReply[] = [
    { fault: { status: 400, error_message: `refused; ${CANARY}: $REQUEST` } },
  ];
  await oneShotRun({ replies, args: ["--output-format", "stream-json"] }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const error = events.find((e) => e.type === "error");
    assert.match(error.message, /^the planner endpoint \S+ answered HTTP 400: “refused; /);
    assert.ok(error.message.includes(CANARY), error.message);
    assert.ok(!JSON.stringify(run.transcripts).includes(CANARY), "the transcript quoted it");
    const final = events.find((e) => e.type === "final");
    assert.ok(!final.result.includes(CANARY));
  });
});

// What the person reads first is what the server said (issue 25): its status and its words,
// escaped, then what to do; "is the server running?" only where nothing was listening.

Deno.test("a 500 with the server's words that outlasts the retries: the person reads the status and the words first", async () => {
  const words = "CUDA error: out of memory";
  await oneShotRun({
    replies: [{ fault: { status: 500, error_message: words }, times: 50 }],
    args: ["--output-format", "stream-json"],
    timeoutMs: 120_000,
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.mock.requests.length, 5, "retried to the bound");
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const error = events.find((e) => e.type === "error");
    assert.equal(
      error.message,
      `the planner endpoint ${run.mock.url} answered HTTP 500: “${words}” (its words, shown to ` +
        "you, not to the planner); the same to each of 5 tries over " +
        error.message.match(/over (\d+) s/)![1] + " s",
    );
    assert.ok(!/server running/.test(error.message), error.message);
    assert.ok(!JSON.stringify(run.transcripts).includes(words), "the transcript holds the words");
  });
});

Deno.test("a refused connection asks whether the server is running, naming ollama serve and llama-server", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await oneShotRun(
    { replies: [], endpoint: `http://127.0.0.1:${port}/v1`, timeoutMs: 120_000 },
    (run) => {
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /bravebot: nothing is listening at the planner endpoint http:\/\/127\.0\.0\.1:\d+\/v1 \(5 tries over \d+ s\); is the server running \(ollama serve, or llama-server -m MODEL\.gguf --jinja\)/,
      );
    },
  );
});

Deno.test("llama-server's router answering 400 'model not found': the hint is the model's name, not the conversation's length", async () => {
  await oneShotRun(
    { replies: [{ fault: { status: 400, error_message: "model not found" } }] },
    (run) => {
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /answered HTTP 400: “model not found”/);
      assert.match(run.stderr, /llama-server's router has no model or alias 'mock-planner'/);
      assert.ok(!/too long|conversation/.test(run.stderr), run.stderr);
    },
  );
});

Deno.test("another server's words that it has no such model get the unknown-model hint", async () => {
  await oneShotRun({
    replies: [{
      fault: {
        status: 404,
        error_message: "Model gpt-x not found",
      },
    }],
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /the server does not know 'mock-planner': use a name it lists at \/v1\/models/,
    );
  });
});
