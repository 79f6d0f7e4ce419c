/**
 * The processor endpoint is configured separately (docs/contract.md §10, §3.4), and private bytes
 * go to an endpoint not marked local only if the person allows it — which nobody can in one-shot
 * mode.
 */
import assert from "node:assert/strict";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { startMockModel } from "../scripts/mock-model.ts";
import type { MockReply } from "../scripts/mock-model.ts";

const files = {
  "vendor/lib.txt": "PUBLIC-BYTES-3e1\n",
  "vendor/.env": "TOKEN=PRIVATE-BYTES-8c4\n",
};

const processFile = (path: string): MockReply[] => [
  { for: "planner", tool_calls: [{ name: "read_file", arguments: { path } }] },
  {
    for: "planner",
    tool_calls: [{
      name: "spawn_processor",
      arguments: { reads: ["$FIRST_REF"], instruction: "summarise" },
    }],
  },
  { for: "planner", text: "done" },
];

Deno.test("--processor-endpoint and --processor-model: processor requests go there, planner requests do not", async () => {
  const processor = await startMockModel({
    script: { replies: [{ text: "=== document ===\nsummary" }] },
  });
  try {
    await oneShotRun({
      files,
      replies: processFile("vendor/lib.txt"),
      args: [
        "--processor-endpoint",
        processor.url,
        "--processor-model",
        "proc-model",
        "--output-format",
        "stream-json",
      ],
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.mock.requests.filter((r) => r.kind === "processor").length, 0);
      assert.equal(processor.requests.length, 1);
      assert.equal(processor.requests[0].kind, "processor");
      assert.equal((processor.requests[0].body as { model: string }).model, "proc-model");
      assert.ok(processor.requests[0].raw.includes("PUBLIC-BYTES-3e1"));
      const result = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .find((e) => e.type === "tool_result" && e.name === "spawn_processor");
      assert.match(result.content, /processor answer/);
    });
  } finally {
    await processor.stop();
  }
});

Deno.test("private bytes are not sent to a processor endpoint that is not local when nobody can be asked", async () => {
  const processor = await startMockModel({
    script: { replies: [{ text: "=== document ===\nleaked" }] },
  });
  try {
    await oneShotRun({
      files,
      replies: processFile("vendor/.env"),
      config: { processorEndpointLocal: false },
      args: ["--processor-endpoint", processor.url, "--output-format", "stream-json"],
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(processor.requests.length, 0, "nothing reached the remote processor");
      const result = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .find((e) => e.type === "tool_result" && e.name === "spawn_processor");
      assert.equal(result.is_error, true);
      assert.match(result.content, /is private and the processor endpoint is not marked local/);
      assert.ok(!run.stdout.includes("PRIVATE-BYTES-8c4"));
    });
  } finally {
    await processor.stop();
  }
});

Deno.test("a processor endpoint not marked local gets no instruction when nobody can be asked: it carries the context's private label", async () => {
  const processor = await startMockModel({
    script: { replies: [{ text: "=== document ===\nsummary" }] },
  });
  try {
    await oneShotRun({
      files,
      replies: processFile("vendor/lib.txt"),
      config: { processorEndpointLocal: false },
      args: ["--processor-endpoint", processor.url, "--output-format", "stream-json"],
    }, (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(processor.requests.length, 0, "nothing reached the remote processor");
      const result = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .find((e) => e.type === "tool_result" && e.name === "spawn_processor");
      assert.equal(result.is_error, true);
      assert.match(result.content, /the instruction carries the planner context's private label/);
    });
  } finally {
    await processor.stop();
  }
});
