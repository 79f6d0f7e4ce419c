/**
 * Faults at the model endpoint, through the real program: each either recovers (a retry) or
 * ends with a clear error and exit 1 — never a hang, never a stack trace — and the session's
 * transcript holds everything up to the fault.
 */
import assert from "node:assert/strict";
import { hasStackTrace, oneShotRun } from "./support/one_shot_fixture.ts";
import type { MockFault, MockReply } from "../scripts/mock-model.ts";

const files = { "a.txt": "A\n" };
const first: MockReply = {
  tool_calls: [{
    name: "todo_write",
    arguments: { todos: [{ content: "step", status: "pending" }] },
  }],
};

function messagesOf(transcripts: unknown[][]): { role: string; content: string | null }[] {
  assert.equal(transcripts.length, 1);
  return (transcripts[0] as { type: string; message?: { role: string; content: string | null } }[])
    .filter((r) => r.type === "message").map((r) => r.message!);
}

const recovers: [string, MockFault][] = [
  ["a delay", { delay_ms: 300 }],
  ["a 429 with Retry-After", { status: 429, retry_after: 0 }],
  ["a 500", { status: 500 }],
  ["a stream cut mid-way", { cut_after: 1 }],
];

for (const [what, fault] of recovers) {
  Deno.test(`${what} is retried and the run finishes`, async () => {
    const replies: MockReply[] = [first, { text: "partial", fault }, { text: "done" }];
    if (fault.delay_ms) replies.splice(2, 1);
    await oneShotRun({ files, replies, args: ["--output-format", "json"] }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      const expected = fault.delay_ms ? "partial" : "done";
      assert.equal(JSON.parse(run.stdout).result, expected);
      if (!fault.delay_ms) assert.match(run.stderr, /trying again/);
      assert.ok(!hasStackTrace(run.stderr));
    });
  });
}

const fatal: [string, MockReply, RegExp, Record<string, unknown>?][] = [
  [
    "an endpoint that keeps failing with 500",
    { fault: { status: 500 }, times: 50 },
    /answered HTTP 500: “mock fault: HTTP 500” .*; the same to each of 5 tries/,
  ],
  [
    "a stream cut every time",
    { text: "xxxxxxxx", chunk: 2, fault: { cut_after: 2 }, times: 50 },
    /cut off/,
  ],
  [
    "invalid JSON in the stream",
    { text: "x", fault: { invalid_json: true } },
    /sent a reply that is not JSON: “a streamed chunk: /,
  ],
  [
    "a body that is not JSON",
    { fault: { raw_body: "<html>Bad gateway</html>" } },
    /sent a reply that is not JSON: “the body began: <html>Bad gateway/,
  ],
  [
    "a reply that never ends",
    { text: "forever", fault: { never_end: true } },
    /no complete reply .* within 1 s/,
    {
      timeouts: { requestMs: 1000 },
    },
  ],
  ["a model that returns nothing", { text: "" }, /empty reply: no text and no tool call/],
  ["an empty choice list", { fault: { empty_choices: true } }, /a reply with no choices/],
  ["a 400 (not retried)", { fault: { status: 400 } }, /answered HTTP 400: “mock fault: HTTP 400”/],
];

for (const [what, reply, message, config] of fatal) {
  Deno.test(`${what}: exit 1, a clear message, the transcript kept up to the fault`, async () => {
    await oneShotRun(
      { files, replies: [first, reply], config, timeoutMs: 120_000 },
      (run) => {
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, message);
        assert.ok(!hasStackTrace(run.stderr), run.stderr);
        assert.equal(run.stdout, "");
        // Everything before the fault is in the transcript: the prompt, the call and its result.
        const messages = messagesOf(run.transcripts);
        assert.deepEqual(messages.slice(0, 3).map((m) => m.role), ["user", "assistant", "tool"]);
        assert.equal(messages[0].content, "do the task");
        assert.match(messages[2].content!, /todo list recorded/);
      },
    );
  });
}

Deno.test("bad input from the planner, through the real program: each a clear result, and the loop goes on", async () => {
  const todo = { name: "todo_write", arguments: { todos: [] } };
  const replies: MockReply[] = [
    { tool_calls: [{ name: "shell", arguments: { cmd: "ls" } }] },
    { tool_calls: [{ name: "read_file", arguments: '{"path": ' }] },
    { text: '{"name": "todo_write", "arguments": {"todos": []}}' },
    { tool_calls: [{ name: "", arguments: {} }] },
    { tool_calls: Array.from({ length: 1000 }, () => todo) },
    {
      tool_calls: [{
        name: "todo_write",
        arguments: { todos: [{ content: "x".repeat(2_000_000), status: "pending" }] },
      }],
    },
    { text: "survived" },
  ];
  await oneShotRun({ files, replies, args: ["--output-format", "stream-json"] }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!hasStackTrace(run.stderr));
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const results = events.filter((e) => e.type === "tool_result").map((e) => e.content as string);
    assert.match(
      results[0],
      /there is no tool named 'shell'; the tools are: read_file, list_files/,
    );
    assert.match(results[1], /not valid JSON/);
    assert.match(results[2], /todo list recorded/);
    assert.ok(events.some((e) => e.type === "tool_call" && e.from_text === true));
    assert.match(results[3], /the tool call has no name/);
    assert.equal(results.length, 4 + 16 + 1);
    assert.match(results[19], /only the first 16 were handled/);
    assert.match(results[20], /more than the 1048576 bytes a call may carry/);
    assert.match(run.stderr, /asked for 1000 tool calls in one reply/);
    assert.equal(events.at(-1).result, "survived");
  });
});
