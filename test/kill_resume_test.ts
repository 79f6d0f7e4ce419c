/**
 * A session killed mid-turn with SIGKILL resumes with nothing lost but the unfinished reply:
 * the transcript was written as things happened, loads with the torn state repaired, and
 * `--resume ID` sends the whole conversation again.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startMockModel } from "../scripts/mock-model.ts";
import { runMain, spawnMain, waitUntil } from "./support/run_main.ts";
import { loadTranscript } from "../src/state/transcript.ts";

async function findTranscript(dir: string): Promise<string | null> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) {
      const found = await findTranscript(p);
      if (found) return found;
    } else if (e.name === "transcript.jsonl") return p;
  }
  return null;
}

Deno.test("kill -9 while the planner is answering; --resume goes on with everything before it", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-kill-ws-" }));
  const tmp = await Deno.makeTempDir({ prefix: "bb-kill-state-" });
  const stateDir = join(tmp, "state");
  const config = join(tmp, "config.json");
  await Deno.writeTextFile(config, "{}");
  await Deno.writeTextFile(join(root, "a.txt"), "A\n");
  const mock = await startMockModel({
    script: {
      replies: [
        {
          tool_calls: [{
            name: "todo_write",
            arguments: { todos: [{ content: "one", status: "pending" }] },
          }],
        },
        { text: "this reply never finishes", fault: { never_end: true } },
        { text: "resumed and done" },
      ],
    },
  });
  try {
    const child = spawnMain([
      "-p",
      "start",
      "-w",
      root,
      "--state-dir",
      stateDir,
      "--config",
      config,
      "--endpoint",
      mock.url,
      "--model",
      "m",
    ], { output: "null" });
    // Wait (bounded) until the second planner request is in flight, then kill without warning.
    await waitUntil(() => mock.requests.length >= 2);
    assert.equal(mock.requests.length, 2);
    child.kill("SIGKILL");
    await child.status;

    const path = await findTranscript(stateDir);
    assert.ok(path);
    const loaded = await loadTranscript(path);
    assert.deepEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "tool"]);
    const id = loaded.meta!.id;

    const r = await runMain([
      "-p",
      "go on",
      "--resume",
      id,
      "-w",
      root,
      "--state-dir",
      stateDir,
      "--config",
      config,
      "--endpoint",
      mock.url,
      "--model",
      "m",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "resumed and done\n");
    const sent =
      (mock.requests[2].body as { messages: { role: string; content: string | null }[] }).messages;
    assert.deepEqual(sent.map((m) => m.role), ["system", "user", "assistant", "tool", "user"]);
    assert.equal(sent[1].content, "start");
    assert.equal(sent[4].content, "go on");
    // An unknown id is a usage error, before anything is sent.
    const bad = await runMain([
      "-p",
      "x",
      "--resume",
      "nope",
      "-w",
      root,
      "--state-dir",
      stateDir,
      "--config",
      config,
      "--endpoint",
      mock.url,
      "--model",
      "m",
    ]);
    assert.equal(bad.code, 2);
    assert.equal(mock.requests.length, 3);
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("Ctrl-C in a one-shot run stops the model call: exit 130, a message, the summary, the transcript intact", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-int-ws-" }));
  const tmp = await Deno.makeTempDir({ prefix: "bb-int-state-" });
  const config = join(tmp, "config.json");
  await Deno.writeTextFile(config, "{}");
  const mock = await startMockModel({
    script: {
      replies: [
        { tool_calls: [{ name: "todo_write", arguments: { todos: [] } }] },
        { text: "slow", fault: { never_end: true } },
      ],
    },
  });
  try {
    const child = spawnMain([
      "-p",
      "start",
      "-w",
      root,
      "--state-dir",
      join(tmp, "state"),
      "--config",
      config,
      "--endpoint",
      mock.url,
      "--model",
      "m",
      "--output-format",
      "json",
    ]);
    await waitUntil(() => mock.requests.length >= 2);
    assert.equal(mock.requests.length, 2);
    child.kill("SIGINT");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 130, stderr);
    assert.match(stderr, /stopping/);
    assert.match(stderr, /the model call was stopped/);
    assert.ok(!/^\s+at /m.test(stderr));
    // The summary still comes, saying how the run ended (issue 25).
    const summary = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(summary.status, "aborted");
    assert.equal(summary.is_error, true);
    const path = await findTranscript(join(tmp, "state"));
    const loaded = await loadTranscript(path!);
    assert.deepEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.deepEqual(loaded.problems, []);
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(tmp, { recursive: true });
  }
});
