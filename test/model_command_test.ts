/**
 * `/model NAME` in a session (issue 25, minors): the name is checked against the server's list as
 * `doctor` checks it, against replays of the real servers (test/fixtures/served/, each citing its
 * upstream source) on 127.0.0.1. A listed name (Ollama's `qwen3` for `qwen3:latest` included) or
 * any name on a llama-server that answers any switches; an unknown one is refused with the near
 * listed name, and the model in use stays.
 */
import assert from "node:assert/strict";
import { type CommandContext, runSlashCommand } from "../src/cli/slash_commands.ts";
import { replayServer } from "./support/served_replay.ts";

/** The handler's context: the planner model, what it was switched to, and what was printed. */
function context(url: string, model = "before") {
  const state = { model, switched: [] as string[], printed: [] as string[] };
  const runtime = {
    driver: {
      get plannerModel() {
        return state.model;
      },
    },
    usePlannerModel(name: string) {
      state.switched.push(name);
      state.model = name;
      return null;
    },
  };
  const c = {
    runtime,
    settings: { planner: { url } },
    print: (text: string) => state.printed.push(text),
    refreshPrompt() {},
  } as unknown as CommandContext;
  return { c, state };
}

async function model(fixture: string, listed: string[], typed: string) {
  const s = await replayServer(fixture, listed, "tool");
  try {
    const { c, state } = context(s.url);
    await runSlashCommand(`/model ${typed}`, c);
    return { ...state, said: state.printed.join("\n") };
  } finally {
    await s.close();
  }
}

Deno.test("/model: Ollama's qwen3 is its qwen3:latest; a slip is refused with the listed name", async () => {
  const ok = await model("ollama_loaded", ["qwen3:latest"], "qwen3");
  assert.deepEqual(ok.switched, ["qwen3"]);
  assert.match(ok.said, /now qwen3 .*lists it as qwen3:latest/);
  const slip = await model("ollama_loaded", ["qwen3:latest"], "qwen3:lates");
  assert.deepEqual(slip.switched, []);
  assert.equal(slip.model, "before");
  assert.match(slip.said, /qwen3:lates is not among .*did you mean qwen3:latest\?.*stays before/);
});

Deno.test("/model: a llama-server that answers any name takes any name, with or without --alias", async () => {
  const single = await model("llamacpp_single", ["qwen2.5-coder-7b-instruct"], "my-model");
  assert.deepEqual(single.switched, ["my-model"]);
  assert.match(single.said, /answers to any name/);
  const noAlias = await model("llamacpp_v1_only", [], "qwen3-coder");
  assert.deepEqual(noAlias.switched, ["qwen3-coder"]);
  assert.match(noAlias.said, /answers to any name/);
});

Deno.test("/model: a llama-server router, vLLM and LM Studio answer only the names they list", async () => {
  const router = await model("llamacpp_router_loaded", ["qwen3-8b", "gemma-3-4b"], "qwen3-8");
  assert.deepEqual(router.switched, []);
  assert.match(router.said, /qwen3-8 is not among .*did you mean qwen3-8b\?/);
  const routed = await model("llamacpp_router_loaded", ["qwen3-8b", "gemma-3-4b"], "gemma-3-4b");
  assert.deepEqual(routed.switched, ["gemma-3-4b"]);
  // vLLM's own listing (the fixture's) holds Qwen/Qwen3-8B: a name differing in case is a slip.
  const vllm = await model("vllm", [], "qwen/qwen3-8b");
  assert.deepEqual(vllm.switched, []);
  assert.match(vllm.said, /did you mean Qwen\/Qwen3-8B\?/);
  const far = await model("vllm", [], "llama3");
  assert.deepEqual(far.switched, []);
  assert.doesNotMatch(far.said, /did you mean/);
  const lms = await model("lmstudio_loaded", ["qwen2.5-7b-instruct"], "qwen2.5-7b-instruct");
  assert.deepEqual(lms.switched, ["qwen2.5-7b-instruct"]);
  assert.match(lms.said, /the server lists it\)/);
});

Deno.test("/model: the typed name is escaped when refused; a server that cannot be asked is said", async () => {
  const hostile = await model("vllm", [], "x\u001b]0;owned\u0007");
  assert.deepEqual(hostile.switched, []);
  assert.ok(![...hostile.said].some((ch) => ch.charCodeAt(0) < 0x20 && ch !== "\n"), hostile.said);
  // Nothing listens: the change is made, and said to be unchecked.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const { c, state } = context(`http://127.0.0.1:${port}/v1`);
  await runSlashCommand("/model other", c);
  assert.deepEqual(state.switched, ["other"]);
  assert.match(state.printed.join("\n"), /not checked: the endpoint did not list its models/);
});
