/**
 * `doctor` against each server as it really answers (test/fixtures/served/, replayed on
 * 127.0.0.1): which server was found and the window it serves against the config's, model names
 * as each server means them, hints for that server only, and a model that writes its tool call
 * as text passing with a warning.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "./support/run_main.ts";
import { FAKE_MODEL, startFakeOllama } from "./support/fake_ollama.ts";
import { replayServer } from "./support/served_replay.ts";

async function doctor(url: string, model: string) {
  const root = await Deno.makeTempDir({ prefix: "bb-doctor-srv-" });
  try {
    await Deno.mkdir(join(root, "ws"));
    await Deno.writeTextFile(join(root, "config.json"), "{}");
    return await runMain([
      "doctor",
      "--endpoint",
      url,
      "--model",
      model,
      "-w",
      join(root, "ws"),
      "--state-dir",
      join(root, "state"),
      "--config",
      join(root, "config.json"),
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("doctor: Ollama's qwen3 is qwen3:latest, and the window it serves is said against the config", async () => {
  const s = await replayServer("ollama_loaded", ["qwen3:latest"], "tool");
  try {
    const r = await doctor(s.url, "qwen3");
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ok\s+model present\s+qwen3 is served \(as qwen3:latest\)/);
    assert.match(
      r.stdout,
      /warn\s+context window\s+Ollama found; it serves 8192 tokens \(\/api\/ps.*trained for 40960.*the window used is 8192 \(config: 32768\).*OLLAMA_CONTEXT_LENGTH/,
    );
    assert.match(r.stdout, /ok\s+tool calling works/);
  } finally {
    await s.close();
  }
});

Deno.test("doctor: a single-model llama-server answers any name: passed, and said so", async () => {
  const s = await replayServer("llamacpp_single", ["qwen2.5-coder-7b-instruct"], "tool");
  try {
    const r = await doctor(s.url, "my-model");
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /ok\s+model present\s+llama-server serves one model .*any name.*--alias my-model/,
    );
    assert.match(r.stdout, /llama-server found; it serves 8192 tokens \(\/props/);
    assert.ok(!r.stdout.includes("ollama pull"), r.stdout);
  } finally {
    await s.close();
  }
});

Deno.test("doctor: a llama-server without --alias, its /props out of reach, lists its file's name and answers any: passed", async () => {
  const s = await replayServer("llamacpp_v1_only", [], "tool");
  try {
    const r = await doctor(s.url, "qwen3-coder");
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /ok\s+model present\s+llama-server serves one model \(Qwen3-Coder-30B-A3B-Instruct-Q4_K_M\.gguf\) and answers to any name .*--alias qwen3-coder/,
    );
    assert.match(r.stdout, /llama-server found; it serves 16384 tokens \(\/v1\/models/);
  } finally {
    await s.close();
  }
});

Deno.test("doctor: a model missing from vLLM or LM Studio gets that server's hint, never ollama pull", async () => {
  const v = await replayServer("vllm", [], "tool");
  try {
    const r = await doctor(v.url, "qwen3");
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /FAIL\s+model present\s+qwen3 is not among .*Qwen\/Qwen3-8B.*--served-model-name qwen3/,
    );
    assert.ok(!r.stdout.includes("ollama pull"), r.stdout);
  } finally {
    await v.close();
  }
  const l = await replayServer("lmstudio_loaded", ["qwen2.5-7b-instruct"], "tool");
  try {
    const r = await doctor(l.url, "qwen3-8b");
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAIL\s+model present.*lms load qwen3-8b/);
    assert.ok(!r.stdout.includes("ollama pull"), r.stdout);
    const ok = await doctor(l.url, "qwen2.5-7b-instruct");
    assert.match(
      ok.stdout,
      /LM Studio found; it serves 4096 tokens.*the window used is 4096.*lms load/,
    );
  } finally {
    await l.close();
  }
});

Deno.test("doctor: a tool call written as text works, recovered, with a warning and that server's hint", async () => {
  const s = await replayServer("llamacpp_single", ["m"], "text_call");
  try {
    const r = await doctor(s.url, "m");
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /warn\s+tool calling works\s+works, tool calls recovered from text.*--jinja/,
    );
  } finally {
    await s.close();
  }
  const p = await replayServer("vllm", ["Qwen/Qwen3-8B"], "prose");
  try {
    const r = await doctor(p.url, "Qwen/Qwen3-8B");
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /FAIL\s+tool calling works\s+the model answered in text.*--enable-auto-tool-choice --tool-call-parser/,
    );
    assert.match(r.stdout, /vLLM found; it serves 32768 tokens/);
  } finally {
    await p.close();
  }
});

Deno.test("doctor: Ollama before the model is loaded is asked again once the tool check loaded it", async () => {
  const server = startFakeOllama({
    numCtx: 6_144,
    replies: [{ tool_calls: [{ name: "ping", arguments: { word: "ok" } }] }],
  });
  try {
    const r = await doctor(server.url, FAKE_MODEL);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /context window\s+Ollama found; it serves 6144 tokens \(\/api\/ps/);
    assert.ok(!r.stdout.includes("asked again once"), r.stdout);
    assert.equal(server.probes.filter((p) => p === "GET /api/ps").length, 2);
  } finally {
    await server.stop();
  }
});

Deno.test("doctor: an endpoint without /v1 is named, with the URL that answers", async () => {
  for (const [fixture, model] of [["ollama_without_v1", "qwen3"], ["vllm_without_v1", "m"]]) {
    const s = await replayServer(fixture, [], "tool");
    try {
      const r = await doctor(s.root, model);
      assert.equal(r.code, 1, r.stdout);
      const fixed = `${s.root}/v1`.replace(/[.]/g, "[.]");
      assert.match(
        r.stdout,
        new RegExp(
          `FAIL\\s+endpoint reachable\\s+${s.root.replace(/[.]/g, "[.]")} lacks /v1: GET /models ` +
            `answered HTTP 404, and ${fixed}/models lists the server's models; pass --endpoint ${fixed}`,
        ),
      );
      assert.doesNotMatch(r.stdout, /is the server running/);
      // With the trailing slash a person may type, too.
      const slash = await doctor(`${s.root}/`, model);
      assert.match(
        slash.stdout,
        /lacks \/v1: .* pass --endpoint http:\/\/127[.]0[.]0[.]1:\d+\/v1 /,
      );
    } finally {
      await s.close();
    }
  }
  // A base URL with /v1 that misses is not told to add another.
  const v = await replayServer("vllm_without_v1", [], "tool");
  try {
    const r = await doctor(`${v.root}/v1/v1`, "m");
    assert.doesNotMatch(r.stdout, /lacks \/v1/);
  } finally {
    await v.close();
  }
});
