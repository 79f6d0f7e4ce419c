import assert from "node:assert/strict";
import { join } from "node:path";
import {
  INTERRUPTED_RESULT,
  loadTranscript,
  repairToolRounds,
  TranscriptWriter,
} from "./transcript.ts";
import { TRUSTED_PRIVATE, UNTRUSTED_PUBLIC } from "../util/label.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "bb-transcript-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a torn last line (kill mid-write) is dropped and reported; the rest loads", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.start({ id: "s1", workspace: "/w", started: "now" });
    await w.message({ role: "user", content: "hi" });
    await w.message({ role: "assistant", content: "hello" });
    await Deno.writeTextFile(path, '{"type":"message","time":"x","message":{"role":"us', {
      append: true,
    });
    const t = await loadTranscript(path);
    assert.equal(t.meta?.id, "s1");
    assert.deepEqual(t.messages, [{ role: "user", content: "hi" }, {
      role: "assistant",
      content: "hello",
    }]);
    assert.equal(t.problems.length, 1);
    assert.match(t.problems[0], /cut off/);
  });
});

Deno.test("a turn killed between a call and its result resumes with the call marked interrupted", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.message({ role: "user", content: "go" });
    await w.message({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "a", type: "function", function: { name: "read_file", arguments: "{}" } },
        { id: "b", type: "function", function: { name: "read_file", arguments: "{}" } },
      ],
    });
    await w.message({ role: "tool", tool_call_id: "a", content: "ok" }, UNTRUSTED_PUBLIC);
    const t = await loadTranscript(path);
    assert.deepEqual(t.messages.map((m) => m.role), ["user", "assistant", "tool", "tool"]);
    assert.deepEqual(t.messages[3], {
      role: "tool",
      tool_call_id: "b",
      content: INTERRUPTED_RESULT,
    });
    // Each message as its line recorded it; the result written here for "b" recorded nothing.
    assert.deepEqual(t.lines, [
      { kind: "message", label: null },
      { kind: "message", label: null },
      { kind: "message", label: UNTRUSTED_PUBLIC },
      { kind: "interrupted", label: null },
    ]);
    assert.deepEqual(t.contextLines.map((l) => l.label), [null, null, UNTRUSTED_PUBLIC]);
    assert.match(t.problems.join("\n"), /marked as interrupted/);
  });
});

Deno.test("/clear starts the conversation and the label again; history keeps everything", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.message({ role: "user", content: "one" }, UNTRUSTED_PUBLIC);
    await w.clear();
    await w.message({ role: "user", content: "two" });
    const t = await loadTranscript(path);
    assert.deepEqual(t.messages, [{ role: "user", content: "two" }]);
    assert.deepEqual(t.contextLines, [{ kind: "message", label: null }], "only what came after");
    assert.equal(t.history.length, 2);
  });
});

Deno.test("records that do not fit are skipped and reported; a bad label is reported as unreadable", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    await Deno.writeTextFile(
      path,
      [
        JSON.stringify({ type: "message", time: "t", message: { role: "wizard", content: "x" } }),
        JSON.stringify({
          type: "message",
          time: "t",
          message: { role: "user", content: "y" },
          label: "(Q,pub)",
        }),
        "",
      ].join("\n"),
    );
    const t = await loadTranscript(path);
    assert.deepEqual(t.messages, [{ role: "user", content: "y" }]);
    assert.deepEqual(t.lines, [{ kind: "message", label: "unreadable" }]);
    assert.deepEqual(t.contextLines, t.lines);
    assert.equal(t.problems.length, 2);
    assert.match(t.problems[1], /record 2 has an unreadable label/);
  });
});

Deno.test("a summary is reported with the label its line recorded, or none; what it replaced stays in the context's lines", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.message({ role: "user", content: "one" }, UNTRUSTED_PUBLIC);
    await w.message({ role: "assistant", content: "two" });
    await w.compact({ role: "user", content: "summary" }, 1, TRUSTED_PRIVATE, {
      kept: [],
      leftOut: 0,
    });
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        type: "compact",
        time: "t",
        message: { role: "user", content: "older summary" },
        keep: 0,
      }) + "\n",
      { append: true },
    );
    const t = await loadTranscript(path);
    assert.deepEqual(t.messages, [{ role: "user", content: "older summary" }]);
    assert.deepEqual(t.lines, [{ kind: "summary", label: null }]);
    assert.deepEqual(t.contextLines, [
      { kind: "message", label: UNTRUSTED_PUBLIC },
      { kind: "message", label: null },
      { kind: "summary", label: TRUSTED_PRIVATE },
      { kind: "summary", label: null },
    ]);
  });
});

Deno.test("a missing transcript loads as empty", async () => {
  await withDir(async (dir) => {
    const t = await loadTranscript(join(dir, "none.jsonl"));
    assert.deepEqual(t.messages, []);
    assert.equal(t.meta, null);
  });
});

Deno.test("results that answer no call are dropped", () => {
  const { messages } = repairToolRounds([
    { role: "user", content: "x" },
    { role: "tool", tool_call_id: "zz", content: "stray" },
  ]);
  assert.deepEqual(messages, [{ role: "user", content: "x" }]);
});

Deno.test("a compact line keeps the person's requests beside its summary; /clear and old lines have none", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.message({ role: "user", content: "task" });
    await w.message({ role: "assistant", content: "done" });
    const summary = { role: "user" as const, content: "[summary] of the task" };
    await w.compact(summary, 1, UNTRUSTED_PUBLIC, { kept: ['the "task"\nverbatim'], leftOut: 2 });
    const t = await loadTranscript(path);
    assert.deepEqual(t.messages, [summary, { role: "assistant", content: "done" }]);
    assert.deepEqual(t.summary, { requests: { kept: ['the "task"\nverbatim'], leftOut: 2 } });
    await w.clear();
    assert.equal((await loadTranscript(path)).summary, null);
    // A compact line written before the requests were kept beside it.
    await Deno.writeTextFile(
      path,
      JSON.stringify({ type: "compact", time: "x", message: summary, keep: 0 }) + "\n",
      { append: true },
    );
    assert.deepEqual((await loadTranscript(path)).summary, { requests: null });
  });
});

Deno.test("the writer's kept handle follows the path: a transcript replaced whole or removed gets the next lines", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "t.jsonl");
    const old = join(dir, "t.old");
    const w = new TranscriptWriter(path);
    await w.start({ id: "s1", workspace: "/w", started: "now" });
    await w.message({ role: "user", content: "one" });
    // Replaced by rename, as a rewrite of the whole file (a compaction that rewrote it) would be;
    // the old version stays reachable through a second name, to see nothing more lands in it.
    await Deno.link(path, old);
    const rewritten = join(dir, "t.tmp");
    await Deno.writeTextFile(
      rewritten,
      JSON.stringify({ type: "session", version: 1, id: "s1", workspace: "/w", started: "now" }) +
        "\n",
    );
    await Deno.rename(rewritten, path);
    await w.compact({ role: "user", content: "summary" }, 0, UNTRUSTED_PUBLIC, {
      kept: ["one"],
      leftOut: 0,
    });
    await w.message({ role: "user", content: "two" });
    let t = await loadTranscript(path);
    assert.deepEqual(t.messages, [{ role: "user", content: "summary" }, {
      role: "user",
      content: "two",
    }]);
    assert.equal((await Deno.readTextFile(old)).trimEnd().split("\n").length, 2);
    // Removed: the next line makes the file again.
    await Deno.remove(path);
    await w.message({ role: "user", content: "three" });
    t = await loadTranscript(path);
    assert.deepEqual(t.messages, [{ role: "user", content: "three" }]);
    // Another writer left a torn line while the handle was kept: the next line starts anew.
    await Deno.writeTextFile(path, '{"type":"mess', { append: true });
    await w.message({ role: "user", content: "four" });
    t = await loadTranscript(path);
    assert.deepEqual(t.messages.map((m) => m.content), ["three", "four"]);
    w.close();
    // Closed, it opens the path again for a later line.
    await w.message({ role: "user", content: "five" });
    t = await loadTranscript(path);
    assert.deepEqual(t.messages.map((m) => m.content), ["three", "four", "five"]);
    w.close();
  });
});
