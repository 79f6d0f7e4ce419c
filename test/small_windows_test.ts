/**
 * Small windows (design.md §14: "never more than a set share of the context window that is
 * left"): with 4,096 or 8,192 tokens, reading a 60 KB file returns a page that fits and the next
 * request fits too; a result the planner just asked for is shortened, never fatal; and the person
 * is told once, not at every turn. The driver runs with the real tools and policy layer against
 * the scripted model.
 */
import assert from "node:assert/strict";
import { driverPolicy, toolPolicy } from "../src/policy/api.ts";
import { Driver } from "../src/driver/driver.ts";
import type { DriverEvent } from "../src/driver/events.ts";
import { estimateTokens, replyReserve } from "../src/driver/context_window.ts";
import { allTools } from "../src/tools/registry.ts";
import { OpenAIModelClient } from "../src/model/client.ts";
import { ModelProcessor } from "../src/model/processor.ts";
import { TranscriptWriter } from "../src/state/transcript.ts";
import type { ChatMessage, ToolSpec } from "../src/model/types.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";
import { withPolicy } from "./support/policy_fixture.ts";
import { join } from "node:path";

/** 1,500 lines, about 60 KB, of ordinary source. */
const BIG = Array.from(
  { length: 1_500 },
  (_, i) => `export const value${i} = computeSomething(${i}, "a string of some length"); // ${i}`,
).join("\n") + "\n";

async function session(contextWindow: number, replies: MockReply[]) {
  const mock = await startMockModel({ script: { replies } });
  const dir = await Deno.makeTempDir({ prefix: "bb-window-" });
  try {
    let out: { events: DriverEvent[]; finished: string; bodies: Record<string, unknown>[] } | null =
      null;
    await withPolicy({
      files: { "src/big.ts": BIG, "src/small.ts": "export const x = 1;\n" },
      trust: { ".": true },
    }, async (fx) => {
      const client = new OpenAIModelClient({ endpoint: mock.url, model: "m", timeoutMs: 60_000 });
      const events: DriverEvent[] = [];
      const driver = new Driver({
        planner: client,
        processor: new ModelProcessor(client),
        policy: driverPolicy(fx.policy),
        decide: toolPolicy(fx.policy),
        settings: { ...fx.settings, contextWindow },
        session: fx.ctx.session,
        transcript: new TranscriptWriter(join(dir, "t.jsonl")),
        emit: (e) => events.push(e),
        tools: allTools(),
      });
      const outcome = await driver.runTurn("read src/big.ts and tell me about it");
      out = {
        events,
        finished: outcome.status,
        bodies: mock.requests.filter((r) => r.kind === "planner").map((r) =>
          r.body as Record<string, unknown>
        ),
      };
    });
    return out!;
  } finally {
    await mock.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

function requestTokens(body: Record<string, unknown>): number {
  return estimateTokens(body.messages as ChatMessage[], body.tools as ToolSpec[]);
}

for (const window of [4_096, 8_192]) {
  Deno.test(`small windows: a 60 KB read with a ${window}-token window returns a page that fits`, async () => {
    const r = await session(window, [
      { tool_calls: [{ name: "read_file", arguments: { path: "src/big.ts" } }] },
      { tool_calls: [{ name: "search", arguments: { pattern: "computeSomething(7" } }] },
      { text: "It defines many values." },
    ]);
    assert.equal(
      r.finished,
      "finished",
      JSON.stringify(r.events.filter((e) => e.type === "error")),
    );
    assert.equal(r.bodies.length, 3);
    for (const body of r.bodies) {
      assert.ok(
        requestTokens(body) <= window - replyReserve(window),
        `a request of about ${requestTokens(body)} tokens in a ${window}-token window`,
      );
    }
    const results = r.events.filter((e) => e.type === "tool_result") as { content: string }[];
    assert.match(results[0].content, /partial page; continue with offset \d+/);
    assert.ok(results[0].content.length < BIG.length / 4);
    // The person's task is still in the last request.
    assert.match(JSON.stringify(r.bodies.at(-1)), /read src\/big\.ts and tell me about it/);
  });
}

Deno.test("small windows: a result too big for what is left is shortened with a note, never fatal", async () => {
  const r = await session(4_096, [
    {
      tool_calls: [
        { name: "read_file", arguments: { path: "src/big.ts" } },
        { name: "read_file", arguments: { path: "src/big.ts", offset: 200 } },
        { name: "read_file", arguments: { path: "src/big.ts", offset: 400 } },
        { name: "read_file", arguments: { path: "src/big.ts", offset: 600 } },
        { name: "read_file", arguments: { path: "src/big.ts", offset: 800 } },
      ],
    },
    { text: "done" },
  ]);
  assert.equal(r.finished, "finished", JSON.stringify(r.events.filter((e) => e.type === "error")));
  const last = r.bodies.at(-1)!;
  assert.ok(requestTokens(last) <= 4_096 - replyReserve(4_096));
  assert.match(JSON.stringify(last), /cut to fit the model's context window|removed to fit/);
  const notices = r.events.filter((e) =>
    e.type === "notice" && /context window/.test((e as { text: string }).text)
  );
  assert.ok(notices.length <= 1, `told ${notices.length} times`);
});
