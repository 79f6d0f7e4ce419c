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
    assert.match(error.message, /the planner endpoint .* refused the request \(HTTP 400\)/);
    assert.ok(error.message.includes(CANARY), error.message);
    assert.ok(!JSON.stringify(run.transcripts).includes(CANARY), "the transcript quoted it");
    const final = events.find((e) => e.type === "final");
    assert.ok(!final.result.includes(CANARY));
  });
});
