/**
 * Sessions survive what a person's machine does to them: a `kill -9` mid-turn (the real main.ts,
 * the mock model, a reply that never ends) loses nothing but the unfinished reply; a transcript
 * cut mid-line or with a corrupt line is reported and the rest goes on.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain, spawnMain, waitUntil } from "./support/run_main.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";

async function setup() {
  const root = await Deno.makeTempDir({ prefix: "bb-resume-" });
  const ws = join(root, "ws");
  const state = join(root, "state");
  const config = join(root, "config.json");
  await Deno.mkdir(ws);
  await Deno.writeTextFile(config, "{}");
  return {
    root,
    ws,
    state,
    args: (url: string) => [
      "-w",
      ws,
      "--state-dir",
      state,
      "--config",
      config,
      "--endpoint",
      url,
      "--model",
      "mock",
    ],
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

async function sessionDir(state: string): Promise<{ id: string; dir: string }> {
  for await (const w of Deno.readDir(join(state, "workspaces"))) {
    for await (const s of Deno.readDir(join(state, "workspaces", w.name, "sessions"))) {
      return { id: s.name, dir: join(state, "workspaces", w.name, "sessions", s.name) };
    }
  }
  throw new Error("no session");
}

async function lines(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
}

/** Runs a first turn that is killed with SIGKILL while the planner's second reply streams. */
async function killedMidTurn(d: Awaited<ReturnType<typeof setup>>) {
  const replies: MockReply[] = [
    {
      tool_calls: [{
        name: "todo_write",
        arguments: { todos: [{ content: "step one", status: "in_progress" }] },
      }],
    },
    { text: "THIS UNFINISHED REPLY IS LOST", fault: { never_end: true } },
  ];
  const mock = await startMockModel({ script: { replies } });
  const child = spawnMain([...d.args(mock.url), "-p", "remember the word PELICAN"], {
    output: "null",
  });
  try {
    // Wait (bounded) until the second planner reply is streaming: its events are on the wire.
    const second = () => mock.requests.filter((r) => r.kind === "planner")[1];
    await waitUntil(() => (second()?.streamed ?? 0) >= 3, 1200, "the second reply streaming");
    child.kill("SIGKILL");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
  } finally {
    await mock.stop();
  }
}

Deno.test({
  name:
    "sessions: a session killed with kill -9 mid-turn resumes with nothing lost but the unfinished reply",
  sanitizeResources: false,
  async fn() {
    const d = await setup();
    try {
      await killedMidTurn(d);
      const { id, dir } = await sessionDir(d.state);
      const listed = await runMain(["sessions", ...d.args("http://127.0.0.1:9/v1")]);
      assert.equal(listed.code, 0);
      assert.match(listed.stdout, new RegExp(`${id}.*remember the word PELICAN`));

      const mock = await startMockModel({ script: { replies: [{ text: "PELICAN it was." }] } });
      try {
        const r = await runMain([...d.args(mock.url), "--resume", id, "-p", "what was the word?"]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout.trim(), "PELICAN it was.");
        // The resumed request carried the whole first turn: the person's words, the tool call
        // and its result; the unfinished reply is nowhere.
        const sent = JSON.stringify(mock.requests.find((q) => q.kind === "planner")?.body);
        assert.match(sent, /remember the word PELICAN/);
        assert.match(sent, /todo_write/);
        assert.match(sent, /todo list recorded/);
        assert.match(sent, /what was the word\?/);
        assert.doesNotMatch(sent, /UNFINISHED/);
      } finally {
        await mock.stop();
      }
      const transcript = await lines(join(dir, "transcript.jsonl"));
      for (const l of transcript) JSON.parse(l); // every line whole
      assert.doesNotMatch(transcript.join("\n"), /UNFINISHED/);
      assert.match(transcript.join("\n"), /PELICAN it was/);

      // --continue finds the same session.
      const again = await startMockModel({ script: { replies: [{ text: "still here" }] } });
      try {
        const c = await runMain([...d.args(again.url), "--continue", "-p", "and now?"]);
        assert.equal(c.code, 0, c.stderr);
        assert.match(JSON.stringify(again.requests[0]?.body), /remember the word PELICAN/);
      } finally {
        await again.stop();
      }
    } finally {
      await d.cleanup();
    }
  },
});

Deno.test({
  name:
    "sessions: a transcript cut mid-line or with a corrupt line is reported, and nothing after it is lost",
  sanitizeResources: false,
  async fn() {
    const d = await setup();
    try {
      const first = await startMockModel({ script: { replies: [{ text: "first answer" }] } });
      try {
        const r = await runMain([...d.args(first.url), "-p", "the word is HERON"]);
        assert.equal(r.code, 0, r.stderr);
      } finally {
        await first.stop();
      }
      const { id, dir } = await sessionDir(d.state);
      const path = join(dir, "transcript.jsonl");
      // A corrupt line in the middle, and a last line cut off without its newline.
      const original = await lines(path);
      await Deno.writeTextFile(
        path,
        [original[0], "{not json at all", ...original.slice(1)].join("\n") +
          '\n{"type":"message","time":"2026-',
      );
      const second = await startMockModel({ script: { replies: [{ text: "second answer" }] } });
      try {
        const r = await runMain([...d.args(second.url), "--resume", id, "-p", "and the word?"]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /line 2 is not JSON \(skipped\)/);
        assert.match(r.stderr, /was cut off \(dropped\)/);
        assert.match(JSON.stringify(second.requests[0]?.body), /the word is HERON/);
      } finally {
        await second.stop();
      }
      // The records written after the torn line are whole and load on the next resume.
      const third = await startMockModel({ script: { replies: [{ text: "third answer" }] } });
      try {
        const r = await runMain([...d.args(third.url), "--resume", id, "-p", "once more"]);
        assert.equal(r.code, 0, r.stderr);
        const sent = JSON.stringify(third.requests[0]?.body);
        assert.match(sent, /the word is HERON/);
        assert.match(sent, /and the word\?/);
        assert.match(sent, /second answer/);
      } finally {
        await third.stop();
      }
      // The person's file was never replaced: the damaged lines are still there to inspect.
      assert.match(await Deno.readTextFile(path), /\{not json at all/);
    } finally {
      await d.cleanup();
    }
  },
});

Deno.test("sessions: --resume of an unknown id and --continue with no session are exit 2", async () => {
  const d = await setup();
  try {
    const r = await runMain([...d.args("http://127.0.0.1:9/v1"), "--resume", "nope", "-p", "x"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no session 'nope'/);
    const c = await runMain([...d.args("http://127.0.0.1:9/v1"), "--continue", "-p", "x"]);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /no session with a message yet/);
    const s = await runMain(["sessions", ...d.args("http://127.0.0.1:9/v1")]);
    assert.equal(s.code, 0);
    assert.match(s.stdout, /no sessions yet/);
  } finally {
    await d.cleanup();
  }
});

Deno.test({
  name: "sessions: listed newest first, each with its first message",
  sanitizeResources: false,
  async fn() {
    const d = await setup();
    const mock = await startMockModel({ script: { replies: [{ text: "a", times: 2 }] } });
    try {
      assert.equal((await runMain([...d.args(mock.url), "-p", "the OLDER one"])).code, 0);
      assert.equal((await runMain([...d.args(mock.url), "-p", "the NEWER one"])).code, 0);
      const s = await runMain(["sessions", ...d.args(mock.url)]);
      assert.equal(s.code, 0);
      const newer = s.stdout.indexOf("the NEWER one");
      const older = s.stdout.indexOf("the OLDER one");
      assert.ok(newer > 0 && older > newer, s.stdout);
    } finally {
      await mock.stop();
      await d.cleanup();
    }
  },
});
