/**
 * The four servers as they answer, replayed against the real client: each fixture in
 * test/fixtures/servers/ is a reply or an error body taken from that server's source (cited per
 * entry), served from 127.0.0.1 exactly as written. A reply must come out whole (text, calls,
 * finish reason, the server's token count); a failure must have its kind, the hint its words call
 * for on the person's side, and neither the words nor the hint on the planner's.
 */
import assert from "node:assert/strict";
import { OpenAIModelClient } from "../src/model/client.ts";
import { ModelError, type ServerHintKind } from "../src/model/failure.ts";
import type { ModelReply, ToolSpec } from "../src/model/types.ts";
import { oneShotRun } from "./support/one_shot_fixture.ts";

interface Expected {
  text?: string;
  toolCalls?: { name: string; arguments: unknown }[];
  finishReason?: string;
  usage?: ModelReply["usage"];
  kind?: string;
  status?: number;
  hint?: ServerHintKind | null;
  /** Part of the server's words, which the person sees and the planner does not. */
  said?: string;
  /** Part of the hint the person is given. */
  personSays?: string;
  /** How the person's sentence begins, after the endpoint's name: the status and the words. */
  personLeads?: string;
  /** What the person's sentence must not say (a guess the words rule out). */
  personLacks?: string;
  /** Requests the client made in all. */
  tries?: number;
}

interface Entry {
  name: string;
  source: string;
  status?: number;
  contentType?: string;
  events?: unknown[];
  body?: unknown;
  expect: Expected;
}

interface Fixture {
  server: string;
  entries: Entry[];
}

const SERVERS = ["llamacpp", "ollama", "vllm", "lmstudio"];
const MODEL = "qwen3-coder";
const TOOLS: ToolSpec[] = [{
  type: "function",
  function: {
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } } },
  },
}];

async function fixture(name: string): Promise<Fixture> {
  const url = new URL(`./fixtures/servers/${name}.json`, import.meta.url);
  return JSON.parse(await Deno.readTextFile(url));
}

interface Seen {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** A server on 127.0.0.1 that answers every request with `respond`, recording what it got. */
async function serve(
  respond: (seen: Seen, n: number) => Response,
  fn: (url: string, seen: Seen[]) => Promise<void>,
): Promise<void> {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const s = { headers: Object.fromEntries(req.headers), body: await req.json() };
    seen.push(s);
    return respond(s, seen.length);
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/v1`, seen);
  } finally {
    await server.shutdown();
  }
}

/** The entry's bytes, as the server wrote them. */
function answer(e: Entry): Response {
  if (e.events) {
    const text = e.events.map((ev) =>
      `data: ${typeof ev === "string" ? ev : JSON.stringify(ev)}\n\n`
    )
      .join("");
    return new Response(text, {
      status: e.status ?? 200,
      headers: { "content-type": e.contentType ?? "text/event-stream" },
    });
  }
  return new Response(typeof e.body === "string" ? e.body : JSON.stringify(e.body), {
    status: e.status ?? 200,
    headers: { "content-type": e.contentType ?? "application/json" },
  });
}

function client(url: string): OpenAIModelClient {
  return new OpenAIModelClient({
    endpoint: url,
    model: MODEL,
    timeoutMs: 10_000,
    retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 10, totalMs: 2_000 },
    loadMs: 1_000,
    loadPollMs: 50,
  });
}

for (const name of SERVERS) {
  Deno.test(`replay ${name}: every entry cites the upstream file it was taken from`, async () => {
    const f = await fixture(name);
    assert.ok(f.entries.length >= 4, "streamed and whole replies and errors");
    assert.ok(f.entries.some((e) => e.events), "a streamed reply");
    assert.ok(f.entries.some((e) => !e.events && !e.status), "a whole reply");
    assert.ok(f.entries.some((e) => e.expect.usage), "a usage count");
    for (const e of f.entries) {
      // owner/repo, then a path inside it.
      assert.match(e.source, /[\w-]+\/[\w.-]+ [\w./-]+\.(cpp|hpp|go|py|md)|issue \d+/, e.name);
    }
  });

  Deno.test(`replay ${name}: replies, failures and the person's hints`, async () => {
    const f = await fixture(name);
    for (const e of f.entries) {
      await serve(() => answer(e), async (url, seen) => {
        const x = e.expect;
        let reply: ModelReply | null = null;
        let failure: ModelError | null = null;
        try {
          reply = await client(url).complete({
            messages: [{ role: "user", content: "read the file" }],
            tools: TOOLS,
          });
        } catch (err) {
          if (!(err instanceof ModelError)) throw err;
          failure = err;
        }
        // Every request streams and asks for the count.
        assert.equal(seen[0].body.stream, true);
        assert.deepEqual(seen[0].body.stream_options, { include_usage: true });
        if (x.tries !== undefined) assert.equal(seen.length, x.tries, `${e.name}: tries`);
        if (x.kind === undefined) {
          assert.ok(reply, `${e.name}: ${failure?.forPerson("planner")}`);
          assert.equal(reply.text, x.text ?? "", e.name);
          assert.deepEqual(
            reply.toolCalls.map((c) => ({
              name: c.function.name,
              arguments: JSON.parse(c.function.arguments),
            })),
            x.toolCalls ?? [],
            e.name,
          );
          assert.ok(reply.toolCalls.every((c) => c.id !== ""), e.name);
          assert.equal(reply.finishReason, x.finishReason, e.name);
          assert.deepEqual(reply.usage, x.usage, e.name);
          return;
        }
        assert.ok(failure, `${e.name}: expected a failure`);
        assert.equal(failure.kind, x.kind, e.name);
        if (x.status !== undefined) assert.equal(failure.facts.status, x.status, e.name);
        assert.equal(failure.hintKind, x.hint ?? null, e.name);
        const person = failure.forPerson("planner");
        const planner = failure.forPlanner("planner");
        if (x.said) {
          assert.ok(person.includes(x.said), `${e.name}: ${person}`);
          assert.ok(!planner.includes(x.said), `${e.name}: the planner was told ${planner}`);
          assert.ok(!failure.message.includes(x.said), e.name);
        }
        if (x.personLeads) {
          assert.ok(
            person.startsWith(`the planner endpoint ${url} ${x.personLeads}`),
            `${e.name}: ${person}`,
          );
        }
        if (x.personLacks) assert.ok(!person.includes(x.personLacks), `${e.name}: ${person}`);
        if (x.personSays) {
          assert.ok(failure.hint?.includes(x.personSays), `${e.name}: ${failure.hint}`);
          assert.ok(person.includes(failure.hint!), e.name);
          assert.ok(!planner.includes(failure.hint!), `${e.name}: the planner got the hint`);
        }
      });
    }
  });
}

Deno.test("a server that refuses stream_options is asked again without it, and not sent it again", async () => {
  const done = `data: ${
    JSON.stringify({ choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] })
  }\n\ndata: [DONE]\n\n`;
  await serve(
    (s) =>
      "stream_options" in s.body
        ? Response.json(
          { error: { message: "Unrecognized request argument supplied: stream_options" } },
          { status: 400 },
        )
        : new Response(done, { headers: { "content-type": "text/event-stream" } }),
    async (url, seen) => {
      const c = client(url);
      const first = await c.complete({ messages: [{ role: "user", content: "hi" }] });
      assert.equal(first.text, "ok");
      assert.equal(first.usage, undefined, "no count was sent");
      assert.deepEqual(seen.map((s) => "stream_options" in s.body), [true, false]);
      await c.complete({ messages: [{ role: "user", content: "again" }] });
      assert.deepEqual(seen.map((s) => "stream_options" in s.body), [true, false, false]);
    },
  );
});

Deno.test("a 400 that is not about stream_options is not asked again", async () => {
  await serve(
    () => Response.json({ error: { message: "messages: field required" } }, { status: 400 }),
    async (url, seen) => {
      await assert.rejects(() => client(url).complete({ messages: [] }), ModelError);
      assert.equal(seen.length, 1);
    },
  );
});

Deno.test("a usage that is not a count is left out, not an error", async () => {
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const body = chunk({ choices: [{ index: 0, delta: { content: "hi" } }], usage: null }) +
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
    chunk({ choices: [], usage: { prompt_tokens: -3, completion_tokens: "many" } }) +
    "data: [DONE]\n\n";
  await serve(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (url) => {
      const r = await client(url).complete({ messages: [{ role: "user", content: "hi" }] });
      assert.equal(r.text, "hi");
      assert.equal(r.usage, undefined);
    },
  );
});

// Through the real program: a 5xx body from the processor endpoint (llama-server's words, with
// the request quoted into them) reaches the person and never the planner.
Deno.test("one-shot: a processor endpoint's 500 body and its hint reach the person, not the planner", async () => {
  const canary = "CANARY-77e1-server-words";
  await oneShotRun({
    files: { "notes.txt": `the quarantined bytes ${canary}\n` },
    replies: [
      { for: "planner", tool_calls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
      {
        for: "planner",
        tool_calls: [{
          name: "spawn_processor",
          arguments: { reads: ["$FIRST_REF"], instruction: "summarise" },
        }],
      },
      {
        for: "processor",
        fault: { status: 500, error_message: "tools param requires --jinja flag; $REQUEST" },
      },
      { for: "planner", text: "could not summarise" },
    ],
    args: ["--output-format", "stream-json"],
  }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const processor = run.mock.requests.filter((r) => r.kind === "processor");
    assert.equal(processor.length, 1, "a 500 naming its cause is not asked again");
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const result = events.find((e) => e.type === "tool_result" && e.name === "spawn_processor");
    assert.equal(result.is_error, true);
    assert.match(result.content, /the processor endpoint refused the request \(HTTP 500\)/);
    for (const leaked of [canary, "--jinja", "tools param"]) {
      assert.ok(!result.content.includes(leaked), result.content);
      for (const r of run.mock.requests.filter((r) => r.kind === "planner")) {
        assert.ok(!r.raw.includes(leaked), `a planner request holds ${leaked}`);
      }
    }
    assert.ok(!JSON.stringify(run.transcripts).includes(canary));
    // The person: the server's words and what to do.
    assert.ok(run.stderr.includes("tools param requires --jinja flag"), run.stderr);
    assert.match(run.stderr, /start it again with --jinja/);
  });
});

Deno.test("one-shot: the planner endpoint's 500 --jinja ends the run (exit 1) with the hint on the error line", async () => {
  await oneShotRun({
    replies: [{ fault: { status: 500, error_message: "tools param requires --jinja flag" } }],
    args: ["--output-format", "stream-json"],
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.mock.requests.length, 1, "not retried");
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const error = events.find((e) => e.type === "error");
    assert.match(
      error.message,
      /answered HTTP 500: “tools param requires --jinja flag” \(its words, shown to you, not to the planner\); llama-server .* --jinja/,
    );
  });
});

Deno.test("one-shot: a server's words are escaped on the person's terminal", async () => {
  await oneShotRun({
    replies: [{
      fault: { status: 400, error_message: "model 'x' not found\u001b[2J\u0007\u202e" },
    }],
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /answered HTTP 400: “model 'x' not found⟦U\+001B⟧\[2J⟦U\+0007⟧⟦U\+202E⟧” \(its words/,
    );
    for (const raw of ["\u001b", "\u0007", "\u202e"]) assert.ok(!run.stderr.includes(raw));
  });
});

Deno.test("one-shot: llama-server loading past timeouts.loadMs exits 1 with its words", async () => {
  const f = await fixture("llamacpp");
  const loading = f.entries.find((e) => e.status === 503)!;
  const message = (loading.body as { error: { message: string } }).error.message;
  await oneShotRun({
    replies: [{ fault: { status: 503, error_message: message }, times: 100 }],
    config: { timeouts: { loadMs: 1000 } },
    args: ["--output-format", "stream-json"],
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const error = events.find((e) => e.type === "error");
    assert.match(error.message, /still loading the model/);
    assert.match(error.message, /timeouts\.loadMs/);
    assert.ok(error.message.includes("answered HTTP 503: “Loading model”"), error.message);
  });
});
