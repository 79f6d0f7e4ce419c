/**
 * Asking the server what context it serves: each server's replayed answers (test/fixtures/served/,
 * each citing the upstream file its shape comes from), over a replay and over real HTTP on
 * 127.0.0.1; junk, huge and silent answers; and the truncation rule.
 */
import assert from "node:assert/strict";
import {
  askAgainAfterReply,
  boundedHttp,
  OLLAMA_DEFAULT_CONTEXT,
  ollamaName,
  type Probed,
  type ProbeHttp,
  probeServedContext,
  serverRoot,
  serverTruncated,
  truncationNotice,
} from "./served_context.ts";

interface Fixture {
  upstream: string;
  model: string;
  routes: Record<string, { status: number; body: unknown; text?: string }>;
}

const DIR = new URL("../../test/fixtures/served/", import.meta.url);

async function fixture(name: string): Promise<Fixture> {
  const f = JSON.parse(await Deno.readTextFile(new URL(`${name}.json`, DIR))) as Fixture;
  assert.ok(f.upstream.length > 20, `${name} cites where its shapes come from`);
  return f;
}

/** Answers from the fixture's routes (`GET /path?query`); any other is a 404 with no JSON. */
function replay(f: Fixture, asked: string[] = []): ProbeHttp {
  const answer = (method: string, url: string): Probed => {
    const u = new URL(url);
    const key = `${method} ${u.pathname}${u.search}`;
    asked.push(key);
    const r = f.routes[key];
    return r ? { status: r.status, body: r.body ?? undefined } : { status: 404, body: undefined };
  };
  return {
    get: (url) => Promise.resolve(answer("GET", url)),
    post: (url) => Promise.resolve(answer("POST", url)),
  };
}

const ENDPOINT = "http://127.0.0.1:9/v1";

Deno.test("served: Ollama before the model is loaded is its default 4,096, provisional", async () => {
  const f = await fixture("ollama_not_loaded");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.server, "ollama");
  assert.equal(s.tokens, OLLAMA_DEFAULT_CONTEXT);
  assert.equal(s.trained, 40_960);
  assert.equal(s.provisional, true);
  assert.equal(s.servedName, "qwen3:latest");
  assert.match(s.source, /default/);
});

Deno.test("served: Ollama with a Modelfile num_ctx uses it until the model is loaded", async () => {
  const f = await fixture("ollama_modelfile_num_ctx");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.tokens, 8_192);
  assert.equal(s.provisional, true);
  assert.match(s.source, /num_ctx/);
});

Deno.test("served: Ollama's loaded model is /api/ps context_length, and qwen3 is qwen3:latest", async () => {
  const f = await fixture("ollama_loaded");
  const asked: string[] = [];
  const s = await probeServedContext(ENDPOINT, "qwen3", replay(f, asked));
  assert.equal(s.tokens, 8_192);
  assert.equal(s.provisional, false);
  assert.match(s.source, /\/api\/ps/);
  // The server root, not the /v1 URL, is where Ollama's own API is.
  assert.ok(asked.includes("POST /api/show"));
  assert.ok(asked.includes("GET /api/ps"));
  // Another model is not the loaded one.
  const other = await probeServedContext(ENDPOINT, "llama3.2", replay(f));
  assert.equal(other.provisional, true);
  // A server that answers /api/version but does not describe the model gets no guess.
  const bare: Fixture = {
    ...f,
    routes: { ...f.routes, "POST /api/show": { status: 404, body: { error: "not found" } } },
  };
  const unknownModel = await probeServedContext(ENDPOINT, "qwen3", replay(bare));
  assert.equal(unknownModel.server, "ollama");
  assert.equal(unknownModel.tokens, 8_192); // still the loaded one from /api/ps
  const none: Fixture = {
    ...bare,
    routes: { ...bare.routes, "GET /api/ps": { status: 200, body: { models: [] } } },
  };
  const guessed = await probeServedContext(ENDPOINT, "qwen3", replay(none));
  assert.equal(guessed.tokens, null);
  assert.equal(guessed.provisional, true);
});

Deno.test("served: a single-model llama-server is /props n_ctx, and answers any model name", async () => {
  const f = await fixture("llamacpp_single");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.server, "llama.cpp");
  assert.equal(s.tokens, 8_192);
  assert.equal(s.anyName, true);
  assert.equal(s.provisional, false);
});

Deno.test("served: a llama-server whose /props is out of reach is known by its /v1/models listing", async () => {
  // Behind a proxy that forwards only /v1 (or a replay of the OpenAI routes alone), /props is a
  // 404; the listing still says llama.cpp, one model, and what it serves it with.
  const f = await fixture("llamacpp_v1_only");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.server, "llama.cpp");
  assert.equal(s.anyName, true);
  assert.equal(s.tokens, 16_384);
  assert.equal(s.trained, 262_144);
  assert.equal(s.provisional, false);
  assert.match(s.source, /\/v1\/models/);
  // A router lists each model with its status: a listed name is needed there.
  const listing = f.routes["GET /v1/models"].body as { data: Record<string, unknown>[] };
  const router: Fixture = {
    ...f,
    routes: {
      ...f.routes,
      "GET /v1/models": {
        status: 200,
        body: { data: listing.data.map((m) => ({ ...m, status: { value: "loaded" } })) },
      },
    },
  };
  const r = await probeServedContext(ENDPOINT, f.model, replay(router));
  assert.equal(r.server, "llama.cpp");
  assert.equal(r.anyName, false);
  // Two models, or another owner: not a single llama-server.
  for (
    const data of [
      [listing.data[0], { ...listing.data[0], id: "other" }],
      [{ ...listing.data[0], owned_by: "someone" }],
    ]
  ) {
    const other: Fixture = {
      ...f,
      routes: { ...f.routes, "GET /v1/models": { status: 200, body: { data } } },
    };
    assert.equal((await probeServedContext(ENDPOINT, f.model, replay(other))).anyName, false);
  }
});

Deno.test("served: llama-server loading (503) is llama.cpp, not known yet, asked again later", async () => {
  const f = await fixture("llamacpp_loading");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.server, "llama.cpp");
  assert.equal(s.tokens, null);
  assert.equal(s.provisional, true);
});

Deno.test("served: a llama.cpp router is asked about the model without loading it", async () => {
  const loaded = await fixture("llamacpp_router_loaded");
  const asked: string[] = [];
  const s = await probeServedContext(ENDPOINT, loaded.model, replay(loaded, asked));
  assert.equal(s.server, "llama.cpp");
  assert.equal(s.tokens, 16_384);
  assert.equal(s.anyName, false);
  assert.ok(asked.includes("GET /props?model=qwen3-8b&autoload=false"));
  const idle = await fixture("llamacpp_router_not_loaded");
  const t = await probeServedContext(ENDPOINT, idle.model, replay(idle));
  assert.equal(t.tokens, null);
  assert.equal(t.provisional, true);
});

Deno.test("served: vLLM is max_model_len of the model's card at the /v1 URL", async () => {
  const f = await fixture("vllm");
  const s = await probeServedContext(ENDPOINT, f.model, replay(f));
  assert.equal(s.server, "vllm");
  assert.equal(s.tokens, 32_768);
  assert.equal(s.servedName, "Qwen/Qwen3-8B");
  const missing = await probeServedContext(ENDPOINT, "qwen3", replay(f));
  assert.equal(missing.server, "vllm");
  assert.equal(missing.tokens, null);
});

Deno.test("served: LM Studio is loaded_context_length (v0), or the v1 instance's config", async () => {
  const v0 = await fixture("lmstudio_loaded");
  const s = await probeServedContext(ENDPOINT, v0.model, replay(v0));
  assert.equal(s.server, "lmstudio");
  assert.equal(s.tokens, 4_096);
  assert.equal(s.trained, 131_072);
  const v1 = await fixture("lmstudio_loaded_v1");
  assert.equal((await probeServedContext(ENDPOINT, v1.model, replay(v1))).tokens, 8_192);
  const idle = await fixture("lmstudio_not_loaded");
  const t = await probeServedContext(ENDPOINT, idle.model, replay(idle));
  assert.equal(t.server, "lmstudio");
  assert.equal(t.tokens, null);
  assert.equal(t.provisional, true);
});

Deno.test("served: an endpoint that only speaks the OpenAI API is not recognised", async () => {
  const f: Fixture = {
    upstream: "a plain OpenAI-compatible endpoint: only /v1/models and /v1/chat/completions",
    model: "m",
    routes: {
      "GET /v1/models": {
        status: 200,
        body: { object: "list", data: [{ id: "m", object: "model", owned_by: "someone" }] },
      },
    },
  };
  const s = await probeServedContext(ENDPOINT, "m", replay(f));
  assert.equal(s.server, null);
  assert.equal(s.tokens, null);
  assert.equal(s.provisional, false);
});

Deno.test("served: junk of every kind is 'did not say', never a crash or a wrong number", async () => {
  const junk: unknown[] = [
    null,
    "text",
    42,
    [],
    { default_generation_settings: { n_ctx: "8192" } },
    { default_generation_settings: { n_ctx: -1 } },
    { default_generation_settings: { n_ctx: 1e12 } },
    { default_generation_settings: { n_ctx: 8192.5 } },
    { version: 13 },
    { data: "x" },
    { data: [null, 1, { id: "m", max_model_len: "big" }] },
    { models: [{ name: 5, context_length: 9 }] },
    JSON.parse('{"__proto__": {"default_generation_settings": {"n_ctx": 4096}}}'),
  ];
  for (const body of junk) {
    const http: ProbeHttp = {
      get: () => Promise.resolve({ status: 200, body }),
      post: () => Promise.resolve({ status: 200, body }),
    };
    const s = await probeServedContext(ENDPOINT, "m", http);
    assert.ok(s.tokens === null || s.tokens === OLLAMA_DEFAULT_CONTEXT, JSON.stringify(body));
    // The default is taken only where /api/show described the model.
    if (s.tokens !== null) assert.equal(s.server, "ollama");
  }
  const throwing: ProbeHttp = {
    get: () => Promise.reject(new Error("boom")),
    post: () => Promise.reject(new Error("boom")),
  };
  assert.equal((await probeServedContext(ENDPOINT, "m", throwing)).server, null);
});

Deno.test("served: over real HTTP, the root is found under /v1 and every probe is bounded", async () => {
  const f = await fixture("ollama_loaded");
  const big = "x".repeat(2 * 1024 * 1024);
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    if (u.pathname === "/silent/props") await held; // answers only when the test ends
    if (u.pathname.startsWith("/big/")) return new Response(big);
    const r = f.routes[`${req.method} ${u.pathname}${u.search}`];
    if (req.method === "POST") assert.equal((await req.json()).model, "qwen3");
    return r ? Response.json(r.body, { status: r.status }) : new Response("no", { status: 404 });
  });
  const port = (server.addr as Deno.NetAddr).port;
  try {
    const http = boundedHttp({ timeoutMs: 300, maxBytes: 64 * 1024 });
    const s = await probeServedContext(`http://127.0.0.1:${port}/v1/`, "qwen3", http);
    assert.equal(s.server, "ollama");
    assert.equal(s.tokens, 8_192);
    const silent = await http.get(`http://127.0.0.1:${port}/silent/props`);
    assert.equal(silent.status, 0);
    assert.match(silent.failed ?? "", /no answer in time/);
    const huge = await http.get(`http://127.0.0.1:${port}/big/props`);
    assert.equal(huge.status, 0);
    assert.match(huge.failed ?? "", /too large/);
    assert.equal(
      (await probeServedContext(`http://127.0.0.1:${port}/big/v1`, "m", http)).server,
      null,
    );
  } finally {
    release();
    await server.shutdown();
  }
});

Deno.test("served: asked again after the first reply where the answer may change with it", async () => {
  const again = async (name: string) => {
    const f = await fixture(name);
    return askAgainAfterReply(await probeServedContext(ENDPOINT, f.model, replay(f)));
  };
  assert.equal(await again("ollama_loaded"), true); // may reload it for the request
  assert.equal(await again("ollama_not_loaded"), true);
  assert.equal(await again("lmstudio_loaded"), true);
  assert.equal(await again("llamacpp_router_not_loaded"), true);
  assert.equal(await again("llamacpp_loading"), true);
  assert.equal(await again("llamacpp_single"), false);
  assert.equal(await again("llamacpp_router_loaded"), false);
  assert.equal(await again("vllm"), false);
});

Deno.test("served: the server root is the /v1 URL without its last /v1", () => {
  assert.equal(serverRoot("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434");
  assert.equal(serverRoot("http://127.0.0.1:11434/v1/"), "http://127.0.0.1:11434");
  assert.equal(serverRoot("http://h:8080"), "http://h:8080");
  assert.equal(serverRoot("https://h/llm/v1?x=1"), "https://h/llm");
  assert.equal(serverRoot("http://h/v1x"), "http://h/v1x");
});

Deno.test("served: Ollama names: the tag defaults to latest", () => {
  assert.equal(ollamaName("qwen3"), "qwen3:latest");
  assert.equal(ollamaName("qwen3:8b"), "qwen3:8b");
  assert.equal(ollamaName("Qwen3"), "qwen3:latest");
  assert.equal(ollamaName("registry.ollama.ai/library/qwen3"), "qwen3:latest");
  assert.equal(ollamaName("hf.co/user/model:Q4_K_M"), "hf.co/user/model:q4_k_m");
});

Deno.test("truncation: at 95% of the served context, or fewer tokens after only additions", () => {
  assert.equal(serverTruncated({ promptTokens: 3_900, served: 4_096, previous: null }), "at_limit");
  assert.equal(serverTruncated({ promptTokens: 1_200, served: 4_096, previous: 1_900 }), "fell");
  assert.equal(serverTruncated({ promptTokens: 1_200, served: null, previous: 1_900 }), "fell");
  // Room made for the newest messages by dropping the oldest: the count stands still.
  assert.equal(
    serverTruncated({ promptTokens: 7_348, served: 8_192, previous: 7_327, added: 720 }),
    "fell",
  );
});

Deno.test("truncation: no notice when nothing was truncated", () => {
  // Growing counts under the limit.
  assert.equal(serverTruncated({ promptTokens: 1_900, served: 4_096, previous: 1_200 }), null);
  assert.equal(serverTruncated({ promptTokens: 3_800, served: 4_096, previous: 3_700 }), null);
  // A smaller count after a compaction or /clear (previous is then unknown) is no truncation.
  assert.equal(serverTruncated({ promptTokens: 500, served: 4_096, previous: null }), null);
  // Nothing known about the server, a count of 0 or junk.
  assert.equal(serverTruncated({ promptTokens: 30_000, served: null, previous: null }), null);
  assert.equal(serverTruncated({ promptTokens: 0, served: 4_096, previous: 2_000 }), null);
  assert.equal(serverTruncated({ promptTokens: NaN, served: 4_096, previous: 2_000 }), null);
  assert.equal(serverTruncated({ promptTokens: 2_000, served: 4_096, previous: 2_000 }), null);
  // Grown by what was added, or by more (the server's tokenizer counts differently).
  assert.equal(
    serverTruncated({ promptTokens: 2_700, served: 8_192, previous: 2_000, added: 720 }),
    null,
  );
  assert.equal(
    serverTruncated({ promptTokens: 2_400, served: 8_192, previous: 2_000, added: 720 }),
    null,
  );
});

Deno.test("truncation: the notice gives that server's fix", () => {
  const base = {
    tokens: 4_096,
    source: "",
    trained: null,
    provisional: false,
    servedName: null,
    anyName: false,
  };
  assert.match(
    truncationNotice("at_limit", 4_000, { ...base, server: "ollama" }),
    /OLLAMA_CONTEXT_LENGTH.*num_ctx/,
  );
  assert.match(
    truncationNotice("fell", 900, { ...base, server: "llama.cpp" }),
    /-c \(--ctx-size\)/,
  );
  assert.match(truncationNotice("at_limit", 4_000, { ...base, server: "vllm" }), /--max-model-len/);
  assert.match(truncationNotice("fell", 900, { ...base, server: "lmstudio" }), /context-length/);
  assert.match(truncationNotice("fell", 900, null), /contextWindow/);
});
