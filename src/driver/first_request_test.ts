/**
 * The first request of a session goes before the tokenizer has loaded (issue 24): fitted by its
 * UTF-8 bytes, an upper bound of what the tokenizer could count (context_window_test.ts checks the
 * bound), and the tokenizer loaded while the model answers. What the estimate feeds stays the
 * estimate's: the fill shown, and the ratio a server's count holds it to, are from the tokenizer's
 * count of the request as sent, never from the bound. A request whose bound does not fit waits for
 * the tokenizer and is fitted by it, as before.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { driverPolicy, toolPolicy } from "../policy/api.ts";
import { Driver } from "./driver.ts";
import { ModelProcessor } from "../model/processor.ts";
import { TranscriptWriter } from "../state/transcript.ts";
import { readFileTool } from "../tools/read_file.ts";
import type { ToolDef } from "../tools/tool.ts";
import type { ChatMessage, CompleteRequest, ModelClient, ModelReply } from "../model/types.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
import { effectiveWindow } from "../util/window.ts";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import {
  byteBoundTokens,
  estimateTokens,
  loadTokenizer,
  tokenizerLoaded,
  useTokenCounter,
} from "./context_window.ts";

interface Sent {
  messages: ChatMessage[];
  /** Whether the tokenizer had loaded when the request was handed to the client. */
  loaded: boolean;
}

/** A planner that answers at once, counting each prompt as `count` says (null: no count). */
class CountingPlanner implements ModelClient {
  readonly endpoint = "http://127.0.0.1:9/v1";
  readonly model = "m";
  readonly sent: Sent[] = [];
  constructor(readonly count: (messages: ChatMessage[]) => number | null) {}

  complete(request: CompleteRequest): Promise<ModelReply> {
    this.sent.push({ messages: request.messages, loaded: tokenizerLoaded() });
    const promptTokens = this.count(request.messages);
    return Promise.resolve({
      text: "done",
      toolCalls: [],
      finishReason: "stop",
      problems: [],
      ...(promptTokens === null ? {} : { usage: { promptTokens } }),
    });
  }
}

/** `f` with the tokenizer loaded, which is then forgotten again. */
async function exactly<T>(f: () => T): Promise<T> {
  await loadTokenizer();
  try {
    return f();
  } finally {
    useTokenCounter(null);
  }
}

async function firstTurn(
  task: string,
  contextWindow: number,
  count: (messages: ChatMessage[]) => number | null,
) {
  // As at a session's start: no tokenizer yet (another test of this file may have loaded it).
  useTokenCounter(null);
  const planner = new CountingPlanner(count);
  const dir = await Deno.makeTempDir({ prefix: "bb-first-request-" });
  try {
    let out: {
      driver: Driver;
      status: string;
      specs: Driver["toolSpecs"];
      loadedAfter: boolean;
    } | null = null;
    await withPolicy({ files: { "a.txt": "A" } }, async (fx) => {
      const driver = new Driver({
        planner,
        processor: new ModelProcessor(planner),
        policy: driverPolicy(fx.policy),
        decide: toolPolicy(fx.policy, fx.ctx.session),
        settings: { ...fx.settings, contextWindow },
        session: fx.ctx.session,
        transcript: new TranscriptWriter(join(dir, "t.jsonl")),
        emit: () => {},
        tools: [readFileTool] as ToolDef<unknown>[],
        systemPrompt: () => ({ text: "You are a coding assistant.", label: TRUSTED_PUBLIC }),
      });
      const outcome = await driver.runTurn(task);
      out = {
        driver,
        status: outcome.status,
        specs: driver.toolSpecs,
        loadedAfter: tokenizerLoaded(),
      };
    });
    return { ...out!, sent: planner.sent };
  } finally {
    useTokenCounter(null);
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("first request: sent before the tokenizer loads; the fill is the tokenizer's count", async () => {
  const r = await firstTurn("say hello 👋 — ünïcödé, 中文", 32_768, () => null);
  assert.equal(r.status, "finished");
  assert.equal(r.sent.length, 1);
  assert.equal(r.sent[0].loaded, false, "the request waited for the tokenizer");
  assert.equal(r.loadedAfter, true, "the tokenizer was not loaded during the turn");
  const messages = r.sent[0].messages;
  assert.deepEqual(messages.map((m) => m.role), ["system", "user"]);
  // The fill shown is the estimate by the tokenizer, loaded while the model answered.
  const exact = await exactly(() => estimateTokens(messages, r.specs));
  assert.ok(byteBoundTokens(messages, r.specs) > exact, "the bound is the estimate here");
  assert.equal(r.driver.contextFill, exact / 32_768);
});

Deno.test("first request: a server's count is held to the tokenizer's estimate, not to the bound", async () => {
  // The server counts 1.5 times the estimate: the window shrinks by that ratio. Held to the bound
  // (three to four times the estimate for this text) the ratio would be under 1, and nothing learnt.
  const task = "summarise the build settings of this project";
  const seen = await firstTurn(task, 32_768, () => null);
  const estimate = await exactly(() => estimateTokens(seen.sent[0].messages, seen.specs));
  const counted = Math.ceil(estimate * 1.5);
  const r = await firstTurn(task, 32_768, () => counted);
  assert.equal(r.status, "finished");
  assert.equal(r.sent[0].loaded, false);
  assert.deepEqual(r.sent[0].messages, seen.sent[0].messages);
  assert.deepEqual(r.driver.contextWindow, effectiveWindow(32_768, null, counted / estimate));
  assert.ok(r.driver.contextWindow.fit < 32_768);
  // With a count, the fill shown is the server's.
  assert.equal(r.driver.contextFill, counted / 32_768);
});

Deno.test("first request: one whose bound is over the budget waits for the tokenizer and fits by it", async () => {
  // About 6,600 bytes of prose: over 4,096's budget by the bound, within it by the tokenizer's count.
  const prose = Array.from(
    { length: 110 },
    (_, i) => `Line ${i}: the build reads its settings and writes a report.`,
  ).join("\n");
  const r = await firstTurn(`summarise:\n${prose}`, 4_096, () => null);
  assert.equal(r.status, "finished");
  assert.equal(r.sent[0].loaded, true, "sent by the bound although it did not fit by it");
  const messages = r.sent[0].messages;
  assert.ok(byteBoundTokens(messages, r.specs) > 4_096 - 512, "the bound fits: nothing tested");
  assert.ok((messages[1].content ?? "").includes("Line 109"), "the task was cut");
  const exact = await exactly(() => estimateTokens(messages, r.specs));
  assert.equal(r.driver.contextFill, exact / 4_096);
});
