import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { readEventStream, ReplyBuilder, ReplyFormatError, StreamCutError } from "./reply.ts";

const enc = new TextEncoder();

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const BODY = [
  ": a comment line\n",
  chunk({ role: "assistant", content: "Hel" }),
  chunk({ content: "lo ✓" }),
  chunk({
    tool_calls: [{ index: 0, id: "c1", function: { name: "read_file", arguments: '{"pa' } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a"}' } }] }),
  chunk({}, "tool_calls"),
  "data: [DONE]\n\n",
].join("");

async function parse(parts: string[]) {
  const b = new ReplyBuilder();
  await readEventStream(streamOf(parts), b);
  return b.build();
}

Deno.test("a stream split anywhere gives the same reply", async () => {
  const whole = await parse([BODY]);
  assert.equal(whole.text, "Hello ✓");
  assert.deepEqual(whole.toolCalls, [
    { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
  ]);
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: BODY.length - 1 }), { maxLength: 12 }),
      async (cuts) => {
        const at = [0, ...cuts.sort((a, b) => a - b), BODY.length];
        const parts = at.slice(1).map((end, i) => BODY.slice(at[i], end));
        const r = await parse(parts);
        return r.text === whole.text &&
          JSON.stringify(r.toolCalls) === JSON.stringify(whole.toolCalls);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("CRLF line endings are read", async () => {
  const r = await parse([BODY.replaceAll("\n", "\r\n")]);
  assert.equal(r.text, "Hello ✓");
});

Deno.test("a stream without [DONE] or a finish reason was cut off", async () => {
  await assert.rejects(() => parse([chunk({ content: "part" })]), StreamCutError);
  // A finish reason without [DONE] is a complete reply.
  assert.equal((await parse([chunk({ content: "all" }, "stop")])).text, "all");
});

Deno.test("an error object inside the stream is reported, not ignored", async () => {
  await assert.rejects(
    () => parse([`data: ${JSON.stringify({ error: { message: "model not loaded" } })}\n\n`]),
    (e) =>
      e instanceof ReplyFormatError && e.kind === "endpoint_error" &&
      /model not loaded/.test(e.detail),
  );
});

Deno.test("calls without index or id are told apart by a new name", () => {
  const b = new ReplyBuilder();
  b.addChunk({
    choices: [{ delta: { tool_calls: [{ function: { name: "a", arguments: "{}" } }] } }],
  });
  b.addChunk({
    choices: [{ delta: { tool_calls: [{ function: { name: "b", arguments: "{" } }] } }],
  });
  b.addChunk({
    choices: [{ delta: { tool_calls: [{ function: { arguments: "}" } }] }, finish_reason: "stop" }],
  });
  const r = b.build();
  assert.deepEqual(r.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments]), [
    ["call_0", "a", "{}"],
    ["call_1", "b", "{}"],
  ]);
  assert.equal(r.problems.length, 2);
});

Deno.test("arguments sent as an object are kept as their JSON", () => {
  const b = new ReplyBuilder();
  b.addWhole({
    choices: [{
      message: {
        content: null,
        tool_calls: [{ id: "x", function: { name: "n", arguments: { a: 1 } } }],
      },
    }],
  });
  assert.equal(b.build().toolCalls[0].function.arguments, '{"a":1}');
});

Deno.test("shapes that are not a reply are errors with a reason", () => {
  const b = new ReplyBuilder();
  assert.throws(() => b.addWhole([]), ReplyFormatError);
  assert.throws(() => b.addWhole({ choices: "no" }), ReplyFormatError);
  assert.throws(() => b.addChunk({ choices: [{ delta: 5 }] }), ReplyFormatError);
});
