/**
 * The context the server really serves (issue 14), end to end against a fake Ollama on 127.0.0.1
 * that truncates as the real one does (test/support/fake_ollama.ts): the driver learns the window
 * on the first request and says so; when the server still cuts the conversation, its prompt count
 * says so and the person is told once, with Ollama's fix; when nothing was cut, nothing is said.
 *
 * The planner's client here is a small one of the test's own (one JSON POST a request) that reads
 * `usage.prompt_tokens`, so the driver's side is tested apart from the stream parser's; the
 * one-shot test below runs the real program.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { driverPolicy, toolPolicy } from "../src/policy/api.ts";
import { Driver } from "../src/driver/driver.ts";
import type { DriverEvent } from "../src/driver/events.ts";
import { allTools } from "../src/tools/registry.ts";
import { ModelProcessor } from "../src/model/processor.ts";
import { TranscriptWriter } from "../src/state/transcript.ts";
import type { CompleteRequest, ModelClient, ModelReply } from "../src/model/types.ts";
import {
  boundedHttp,
  probeServedContext,
  type ServedContext,
} from "../src/model/served_context.ts";
import { TRUSTED_PUBLIC } from "../src/util/label.ts";
import { withPolicy } from "./support/policy_fixture.ts";
import { FAKE_MODEL, type FakeReply, startFakeOllama } from "./support/fake_ollama.ts";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { ModelWorker, WorkerModelClient } from "../src/model/worker_client.ts";

/** One JSON request a reply, reading the server's `usage`; asks the server what it serves. */
class JsonClient implements ModelClient {
  constructor(readonly endpoint: string, readonly model: string) {}

  async complete(request: CompleteRequest): Promise<ModelReply> {
    const response = await fetch(`${this.endpoint}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        model: this.model,
        messages: request.messages,
        tools: request.tools,
        ...(request.toolChoice ? { tool_choice: request.toolChoice } : {}),
      }),
    });
    const body = await response.json();
    const message = body.choices[0].message;
    return {
      text: message.content ?? "",
      toolCalls: message.tool_calls ?? [],
      finishReason: body.choices[0].finish_reason,
      problems: [],
      usage: { promptTokens: body.usage.prompt_tokens },
    };
  }

  servedContext(): Promise<ServedContext> {
    return probeServedContext(this.endpoint, this.model, boundedHttp());
  }
}

/** About 2,400 characters of ordinary prose a file. */
const PAGE = Array.from(
  { length: 30 },
  (_, i) => `Line ${i}: the build reads its settings from the project file and writes a report.`,
).join("\n") + "\n";

const READS: FakeReply[] = [
  { tool_calls: [{ name: "read_file", arguments: { path: "docs/a.md" } }] },
  { tool_calls: [{ name: "read_file", arguments: { path: "docs/b.md" } }] },
  { tool_calls: [{ name: "read_file", arguments: { path: "docs/c.md" } }] },
  { tool_calls: [{ name: "read_file", arguments: { path: "docs/d.md" } }] },
  { text: "The docs describe the build." },
];

async function session(numCtx: number, replies: FakeReply[], task = "summarise the docs folder") {
  const server = startFakeOllama({ numCtx, replies });
  const dir = await Deno.makeTempDir({ prefix: "bb-served-" });
  try {
    let out: { events: DriverEvent[]; status: string; driver: Driver } | null = null;
    await withPolicy({
      files: { "docs/a.md": PAGE, "docs/b.md": PAGE, "docs/c.md": PAGE, "docs/d.md": PAGE },
      trust: { ".": true },
    }, async (fx) => {
      const client = new JsonClient(server.url, FAKE_MODEL);
      const events: DriverEvent[] = [];
      const driver = new Driver({
        planner: client,
        processor: new ModelProcessor(client),
        policy: driverPolicy(fx.policy),
        decide: toolPolicy(fx.policy, fx.ctx.session),
        settings: { ...fx.settings, contextWindow: 32_768 },
        session: fx.ctx.session,
        transcript: new TranscriptWriter(join(dir, "t.jsonl")),
        emit: (e) => events.push(e),
        tools: allTools().filter((t) => t.name === "read_file"),
        systemPrompt: () => ({ text: "You are a coding assistant.", label: TRUSTED_PUBLIC }),
      });
      const outcome = await driver.runTurn(task);
      out = { events, status: outcome.status, driver };
    });
    return { ...out!, chats: server.chats, probes: server.probes };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const notices = (events: DriverEvent[]) =>
  events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text);

/** About 6,000 characters pasted into the person's message: 3,000 of the fake's tokens. */
const PASTED = PAGE.repeat(3);

Deno.test("served window: a truncating Ollama is found out and the person told once, with its fix", async () => {
  // The first request is fitted to the config's window (the server's answer comes with the reply):
  // the person's message alone is over the 2,048 tokens this Ollama serves.
  const r = await session(2_048, [{ text: "done" }], `summarise this log:\n${PASTED}`);
  assert.equal(r.status, "finished");
  assert.equal(r.chats[0].cut, true, JSON.stringify(r.chats));
  const told = notices(r.events).filter((t) => /cut the conversation/.test(t));
  assert.equal(told.length, 1, notices(r.events).join("\n"));
  assert.match(told[0], /^Ollama cut the conversation .*at or over the 2048 it serves/);
  assert.match(told[0], /OLLAMA_CONTEXT_LENGTH/);
  assert.match(told[0], /num_ctx/);
  // The window was learned from the loaded model, and said once.
  const learned = notices(r.events).filter((t) => t.startsWith("context window:"));
  assert.equal(learned.length, 1);
  assert.match(learned[0], /2048 tokens — Ollama serves qwen3:latest with 2048 \(\/api\/ps/);
  assert.equal(r.driver.contextWindow.tokens, 2_048);
  assert.equal(r.driver.contextWindow.by, "server");
  assert.ok(r.probes.includes("POST /api/show") && r.probes.includes("GET /api/ps"));
  // The fill shown is the server's count against the window.
  assert.equal(r.driver.contextFill, 1);
});

Deno.test("served window: a server that counts more than the estimate is not overrun", async () => {
  // Four reads into 2,048 tokens of a server whose tokenizer counts about twice the estimate.
  const r = await session(2_048, READS);
  assert.equal(r.status, "finished", JSON.stringify(r.events.filter((e) => e.type === "error")));
  assert.ok(r.chats.every((c) => c.dropped === 0 && !c.cut), JSON.stringify(r.chats));
  assert.deepEqual(notices(r.events).filter((t) => /cut the conversation/.test(t)), []);
  // The estimate's budget was held to the server's count.
  assert.equal(r.driver.contextWindow.tokens, 2_048);
  assert.ok(r.driver.contextWindow.fit < 2_048 * 0.8, JSON.stringify(r.driver.contextWindow));
  // The person's task is still in the last request the server kept.
  assert.equal(r.chats.at(-1)!.dropped, 0);
});

Deno.test("served window: no truncation notice when the server cut nothing", async () => {
  const r = await session(32_768, READS);
  assert.equal(r.status, "finished");
  assert.ok(r.chats.every((c) => c.dropped === 0));
  assert.deepEqual(notices(r.events).filter((t) => /cut the conversation/.test(t)), []);
  const learned = notices(r.events).filter((t) => t.startsWith("context window:"));
  assert.equal(learned.length, 1);
  assert.match(learned[0], /32768 tokens — Ollama serves qwen3:latest with 32768/);
  assert.equal(r.driver.contextWindow.tokens, 32_768);
  assert.equal(r.driver.contextWindow.by, "config");
});

Deno.test("served window: the window learned is what the driver fits to and shares results by", async () => {
  const r = await session(8_192, [
    { tool_calls: [{ name: "read_file", arguments: { path: "docs/a.md" } }] },
    { text: "ok" },
  ]);
  assert.equal(r.driver.contextWindow.tokens, 8_192);
  assert.equal(r.driver.contextWindow.by, "server");
  const result = r.events.find((e) => e.type === "tool_result") as { content: string };
  assert.ok(result.content.includes("Line 29"), "an 8,192 window still holds the page");
  const small = await session(1_024, [
    { tool_calls: [{ name: "read_file", arguments: { path: "docs/a.md" } }] },
    { text: "ok" },
  ]);
  const cut = small.events.find((e) => e.type === "tool_result") as { content: string };
  assert.ok(!cut.content.includes("Line 29"), "a 1,024 window gets a shorter share");
});

/** A planner that answers from a list, and a server whose answer about its context is scripted. */
class ScriptedClient implements ModelClient {
  readonly endpoint = "http://127.0.0.1:9/v1";
  readonly model = "m";
  asked = 0;
  constructor(
    private readonly replies: ModelReply[],
    private readonly answers: ServedContext[],
  ) {}
  complete(): Promise<ModelReply> {
    return Promise.resolve(
      this.replies.shift() ?? { text: "done", toolCalls: [], finishReason: "stop", problems: [] },
    );
  }
  servedContext(): Promise<ServedContext> {
    return Promise.resolve(this.answers[Math.min(this.asked++, this.answers.length - 1)]);
  }
}

async function scripted(client: ScriptedClient, turns: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "bb-served-" });
  const events: DriverEvent[] = [];
  let driver: Driver | null = null;
  try {
    await withPolicy({ files: { "docs/a.md": PAGE }, trust: { ".": true } }, async (fx) => {
      driver = new Driver({
        planner: client,
        processor: new ModelProcessor(client),
        policy: driverPolicy(fx.policy),
        decide: toolPolicy(fx.policy, fx.ctx.session),
        settings: { ...fx.settings, contextWindow: 32_768 },
        session: fx.ctx.session,
        transcript: new TranscriptWriter(join(dir, "t.jsonl")),
        emit: (e) => events.push(e),
        tools: allTools().filter((t) => t.name === "read_file"),
        systemPrompt: () => ({ text: "You are a coding assistant.", label: TRUSTED_PUBLIC }),
      });
      for (const t of turns) await driver.runTurn(t);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return { events, driver: driver! };
}

const OLLAMA_BEFORE_LOAD: ServedContext = {
  server: "ollama",
  tokens: 4_096,
  source: "Ollama's default of 4096 (the model is not loaded yet)",
  trained: 40_960,
  provisional: true,
  servedName: "qwen3:latest",
  anyName: false,
};

const answer = (text: string, promptTokens?: number): ModelReply => ({
  text,
  toolCalls: [],
  finishReason: "stop",
  problems: [],
  ...(promptTokens === undefined ? {} : { usage: { promptTokens } }),
});

Deno.test("served window: asked on the first request, not before; a provisional answer asked again once", async () => {
  const loaded = { ...OLLAMA_BEFORE_LOAD, tokens: 16_384, source: "/api/ps", provisional: false };
  const client = new ScriptedClient([answer("one"), answer("two"), answer("three")], [
    OLLAMA_BEFORE_LOAD,
    loaded,
  ]);
  const { events, driver } = await scripted(client, ["a", "b", "c"]);
  assert.equal(client.asked, 2);
  assert.deepEqual(driver.contextWindow, { tokens: 16_384, by: "server", fit: 16_384 });
  const learned = notices(events).filter((t) => t.startsWith("context window:"));
  assert.equal(learned.length, 1, notices(events).join("\n"));
  assert.match(learned[0], /16384 tokens .*\/api\/ps.*config says 32768.*OLLAMA_CONTEXT_LENGTH/);
  // Nothing is asked before the first request.
  const idle = new ScriptedClient([], [OLLAMA_BEFORE_LOAD]);
  await scripted(idle, []);
  assert.equal(idle.asked, 0);
});

Deno.test("served window: a count that falls although messages were only added is a truncation, told once", async () => {
  const still = { ...OLLAMA_BEFORE_LOAD, tokens: 4_096, source: "/api/ps", provisional: false };
  const client = new ScriptedClient(
    [answer("one", 1_500), answer("two", 2_600), answer("three", 900), answer("four", 700)],
    [still],
  );
  const { events } = await scripted(client, ["a", "b", "c", "d"]);
  const told = notices(events).filter((t) => /cut the conversation/.test(t));
  assert.equal(told.length, 1);
  assert.match(told[0], /900 prompt tokens, fewer than the request before/);
});

Deno.test("served window: a falling count after /clear is no truncation", async () => {
  const still = { ...OLLAMA_BEFORE_LOAD, tokens: 4_096, source: "/api/ps", provisional: false };
  const client = new ScriptedClient([answer("one", 2_500), answer("two", 300)], [still]);
  const dir = await Deno.makeTempDir({ prefix: "bb-served-" });
  const events: DriverEvent[] = [];
  try {
    await withPolicy({ files: {}, trust: { ".": true } }, async (fx) => {
      const driver = new Driver({
        planner: client,
        processor: new ModelProcessor(client),
        policy: driverPolicy(fx.policy),
        decide: toolPolicy(fx.policy, fx.ctx.session),
        settings: { ...fx.settings, contextWindow: 32_768 },
        session: fx.ctx.session,
        transcript: new TranscriptWriter(join(dir, "t.jsonl")),
        emit: (e) => events.push(e),
        tools: allTools().filter((t) => t.name === "read_file"),
        systemPrompt: () => ({ text: "You are a coding assistant.", label: TRUSTED_PUBLIC }),
      });
      await driver.runTurn("a");
      await driver.clear();
      await driver.runTurn("b");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(notices(events).filter((t) => /cut the conversation/.test(t)), []);
});

Deno.test("served window: the model worker asks the server, within its network permission", async () => {
  const server = startFakeOllama({ numCtx: 6_144, replies: [{ text: "hi" }] });
  const worker = new ModelWorker([server.url]);
  try {
    const client = new WorkerModelClient(worker, {
      endpoint: server.url,
      model: FAKE_MODEL,
      timeoutMs: 30_000,
    });
    const before = await client.servedContext();
    assert.equal(before.server, "ollama");
    assert.equal(before.tokens, 6_144); // the Modelfile's num_ctx, until loaded
    assert.equal(before.provisional, true);
    await client.complete({ messages: [{ role: "user", content: "hi" }] });
    const after = await client.servedContext();
    assert.equal(after.tokens, 6_144);
    assert.equal(after.provisional, false);
    assert.match(after.source, /\/api\/ps/);
  } finally {
    worker.terminate();
    await server.stop();
  }
});

Deno.test({
  name: "served window: one-shot against a truncating Ollama says so on stderr, once",
  fn: async () => {
    // The full system prompt and the eleven schemas take about 4,600 of this server's tokens; the
    // person's message 9,000 more.
    const server = startFakeOllama({ numCtx: 8_192, replies: [{ text: "It failed in step 3." }] });
    try {
      await oneShotRun({
        replies: [],
        endpoint: server.url,
        args: ["--model", FAKE_MODEL],
        noModel: true,
        prompt: `why did this fail?\n${PASTED.repeat(3)}`,
      }, (run) => {
        assert.equal(run.code, 0, run.stderr);
        assert.equal(server.chats[0].cut, true, JSON.stringify(server.chats));
        const told = run.stderr.split("\n").filter((l) => /cut the conversation/.test(l));
        assert.equal(told.length, 1, run.stderr);
        assert.match(told[0], /OLLAMA_CONTEXT_LENGTH/);
        assert.match(run.stderr, /context window: 8192 tokens/);
        assert.equal(run.stdout, "It failed in step 3.\n");
      });
    } finally {
      await server.stop();
    }
  },
});

Deno.test("served window: /model forgets the old model's window until the new one is asked", async () => {
  const r = await session(4_096, [{ text: "done" }]);
  assert.equal(r.driver.contextWindow.tokens, 4_096);
  assert.equal(r.driver.contextWindow.by, "server");
  const other = new JsonClient("http://127.0.0.1:9/v1", "other");
  r.driver.usePlanner(other);
  assert.deepEqual(
    { tokens: r.driver.contextWindow.tokens, by: r.driver.contextWindow.by },
    { tokens: 32_768, by: "config" },
  );
});
