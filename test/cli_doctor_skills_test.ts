import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "./support/run_main.ts";

interface Mock {
  url: string;
  requests: { path: string; body: unknown }[];
  close(): Promise<void>;
}

/** A tiny OpenAI-compatible endpoint on 127.0.0.1: lists models, answers with a tool call or text. */
function mockEndpoint(models: string[], reply: "tool" | "text"): Mock {
  const requests: { path: string; body: unknown }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const body = req.method === "POST" ? await req.json() : null;
    requests.push({ path, body });
    if (path === "/v1/models") {
      return Response.json({ object: "list", data: models.map((id) => ({ id, object: "model" })) });
    }
    if (path === "/v1/chat/completions") {
      const message = reply === "tool"
        ? {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "c1",
            type: "function",
            function: { name: "ping", arguments: '{"word":"ok"}' },
          }],
        }
        : { role: "assistant", content: "ping ok" };
      return Response.json({
        id: "x",
        object: "chat.completion",
        choices: [{
          index: 0,
          message,
          finish_reason: reply === "tool" ? "tool_calls" : "stop",
        }],
      });
    }
    return new Response("not found", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/v1`,
    requests,
    close: () => server.shutdown(),
  };
}

async function dirs() {
  const root = await Deno.makeTempDir({ prefix: "bb-doctor-" });
  const ws = join(root, "ws");
  const state = join(root, "state");
  const cfgDir = join(root, "cfg");
  await Deno.mkdir(ws);
  await Deno.mkdir(cfgDir);
  const config = join(cfgDir, "config.json");
  await Deno.writeTextFile(config, "{}");
  return {
    root,
    ws,
    config,
    cfgDir,
    args: ["-w", ws, "--state-dir", state, "--config", config],
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

Deno.test("doctor: every essential check passes against a working endpoint; exit 0", async () => {
  const mock = mockEndpoint(["qwen3:8b"], "tool");
  const d = await dirs();
  try {
    const r = await runMain(["doctor", "--endpoint", mock.url, "--model", "qwen3:8b", ...d.args]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ok\s+endpoint reachable/);
    assert.match(r.stdout, /ok\s+model present\s+qwen3:8b is served/);
    assert.match(r.stdout, /ok\s+tool calling works/);
    assert.match(r.stdout, /ok\s+permissions .*second wall stands.*wall: (kernel|process)/);
    assert.match(r.stdout, /sandbox/);
    // The tool-calling request carried exactly one tool.
    const chat = mock.requests.find((q) => q.path === "/v1/chat/completions");
    assert.equal((chat?.body as { tools: unknown[] }).tools.length, 1);
  } finally {
    await mock.close();
    await d.cleanup();
  }
});

Deno.test("doctor: a missing model and a model that answers in text fail, exit 1", async () => {
  const mock = mockEndpoint(["other"], "text");
  const d = await dirs();
  try {
    const missing = await runMain([
      "doctor",
      "--endpoint",
      mock.url,
      "--model",
      "qwen3:8b",
      ...d.args,
    ]);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /FAIL\s+model present\s+qwen3:8b is not among .*other/);
    const text = await runMain(["doctor", "--endpoint", mock.url, "--model", "other", ...d.args]);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /FAIL\s+tool calling works\s+the model answered in text/);
  } finally {
    await mock.close();
    await d.cleanup();
  }
});

Deno.test("doctor: an unreachable endpoint is a failure that says what to check", async () => {
  const d = await dirs();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  try {
    const r = await runMain([
      "doctor",
      "--endpoint",
      `http://127.0.0.1:${port}/v1`,
      "--model",
      "m",
      ...d.args,
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAIL\s+endpoint reachable .*is the server running/);
    assert.match(r.stdout, /ok\s+permissions/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("doctor: the second wall is checked outside the workspace when $TMPDIR is the workspace or lies in it", async () => {
  const mock = mockEndpoint(["m"], "tool");
  const d = await dirs();
  try {
    await Deno.mkdir(join(d.ws, "tmp"));
    for (const tmp of [d.ws, join(d.ws, "tmp")]) {
      const r = await runMain(["doctor", "--endpoint", mock.url, "--model", "m", ...d.args], {
        env: { TMPDIR: tmp },
      });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /ok\s+permissions .*second wall stands/);
      assert.doesNotMatch(r.stdout, /NOT stopped|not checked/);
    }
    // Nothing was left behind in the workspace (the scratch folder and probe are removed).
    const left = [];
    for await (const e of Deno.readDir(d.ws)) left.push(e.name);
    assert.deepEqual(left, ["tmp"]);
    for await (const e of Deno.readDir(join(d.ws, "tmp"))) left.push(e.name);
    assert.deepEqual(left, ["tmp"]);
  } finally {
    await mock.close();
    await d.cleanup();
  }
});

Deno.test("config: invalid JSON or a wrong type is exit 2 naming the file and field", async () => {
  const d = await dirs();
  try {
    await Deno.writeTextFile(d.config, "{ nope");
    const bad = await runMain(["skills", ...d.args]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /config\.json is not valid JSON/);
    await Deno.writeTextFile(d.config, '{"timeouts": {"runMs": "long"}}');
    const wrong = await runMain(["skills", ...d.args]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /timeouts\.runMs/);
    // Nothing lost: the file is left as it was for the person to fix.
    assert.equal(await Deno.readTextFile(d.config), '{"timeouts": {"runMs": "long"}}');
  } finally {
    await d.cleanup();
  }
});

Deno.test("config: a workspace config that tries to widen is exit 2 naming the field", async () => {
  const d = await dirs();
  try {
    await Deno.mkdir(join(d.ws, ".bravebot"));
    await Deno.writeTextFile(
      join(d.ws, ".bravebot", "config.json"),
      '{"endpoint": "http://203.0.113.9/v1"}',
    );
    const r = await runMain(["doctor", ...d.args]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /\.bravebot\/config\.json: endpoint: a workspace config may not change endpoints/,
    );
    await Deno.writeTextFile(join(d.ws, ".bravebot", "config.json"), '{"trust": ["."]}');
    const t = await runMain(["skills", ...d.args]);
    assert.equal(t.code, 2);
    assert.match(t.stderr, /trust: a workspace config can never trust/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("skills: lists user and trusted workspace skills with where each was found; reports bad layouts", async () => {
  const d = await dirs();
  try {
    const mk = async (dir: string, name: string, text?: string) => {
      await Deno.mkdir(join(dir, name), { recursive: true });
      await Deno.writeTextFile(
        join(dir, name, "SKILL.md"),
        text ?? `---\nname: ${name}\ndescription: about ${name}\n---\nbody\n`,
      );
    };
    await mk(join(d.cfgDir, "skills"), "commit-style");
    await mk(join(d.cfgDir, "skills"), "Bad_Name");
    await mk(join(d.ws, ".bravebot", "skills"), "release");
    const before = await runMain(["skills", ...d.args]);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /commit-style\s+\(user: .*cfg\/skills\/commit-style\)/);
    assert.doesNotMatch(before.stdout, /release {2}\(/);
    assert.match(before.stdout, /Bad_Name\/SKILL\.md: name 'Bad_Name' is not 1–64 lowercase/);
    assert.equal((await runMain(["trust", "add", ".", ...d.args])).code, 0);
    const after = await runMain(["skills", ...d.args]);
    assert.match(after.stdout, /release\s+\(workspace: \.bravebot\/skills\/release\/\)/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("policy file: invalid JSON or a wrong type is exit 2 naming it, before anything is sent", async () => {
  const mock = mockEndpoint(["m"], "text");
  const d = await dirs();
  try {
    const file = join(d.root, "approvals.json");
    const cases: [string, RegExp][] = [
      ["{ writes: [", /approvals\.json is not valid JSON/],
      ['{"writes": "src/**"}', /writes: /],
      ['{"readOutput": "yes"}', /readOutput: /],
      ['{"quarantinedRead": "vouch"}', /quarantinedRead: /],
    ];
    for (const [text, why] of cases) {
      await Deno.writeTextFile(file, text);
      const r = await runMain([
        "-p",
        "hello",
        "--approvals",
        file,
        "--endpoint",
        mock.url,
        "--model",
        "m",
        ...d.args,
      ]);
      assert.equal(r.code, 2, text);
      assert.match(r.stderr, why, text);
      assert.equal(await Deno.readTextFile(file), text, "the file is left as it was");
    }
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
    await d.cleanup();
  }
});
