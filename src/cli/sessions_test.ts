import assert from "node:assert/strict";
import { join } from "node:path";
import {
  chooseSession,
  lastExchanges,
  listSessions,
  replayLines,
  sessionsCommand,
  sessionsToPick,
} from "./sessions.ts";
import { UsageError } from "./exit_codes.ts";
import { sessionPaths, statePaths } from "../state/session_paths.ts";
import { ensurePrivateDir } from "../state/dirs.ts";
import { loadTranscript, TranscriptWriter } from "../state/transcript.ts";
import type { ChatMessage } from "../util/chat.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";

interface Dirs {
  ws: string;
  state: string;
  root: string;
}

async function withDirs(fn: (d: Dirs) => Promise<void>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-sessions-" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    await fn({ ws, state: join(root, "state"), root });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** A session folder as a run leaves it: the start line, then `messages`; mtime set to `at`. */
async function makeSession(
  d: Dirs,
  id: string,
  messages: ChatMessage[],
  at: Date,
): Promise<string> {
  const paths = sessionPaths(statePaths(d.state, d.ws), id);
  await ensurePrivateDir(paths.dir);
  const w = new TranscriptWriter(paths.transcript);
  await w.start({ id, workspace: d.ws, started: at.toISOString() });
  for (const m of messages) await w.message(m, m.role === "user" ? TRUSTED_PUBLIC : undefined);
  await Deno.utime(paths.transcript, at, at);
  return paths.transcript;
}

const user = (content: string): ChatMessage => ({ role: "user", content });
const said = (content: string): ChatMessage => ({ role: "assistant", content });

async function usageError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return e.message;
  }
  assert.fail("no usage error");
}

Deno.test("sessions: --continue takes the latest session with a message, not an empty one after it", async () => {
  await withDirs(async (d) => {
    const long: ChatMessage[] = [];
    for (let i = 0; i < 29; i++) long.push(user(`request ${i}`), said(`answer ${i}`));
    await makeSession(d, "2026-01-01T10-00-00-000Z-aaaa", long, new Date("2026-01-01T10:30:00Z"));
    // Closed without a word, after it (a crash before the first message leaves this).
    await makeSession(d, "2026-01-01T11-00-00-000Z-bbbb", [], new Date("2026-01-01T11:00:00Z"));
    // A folder with no transcript at all.
    await ensurePrivateDir(
      sessionPaths(statePaths(d.state, d.ws), "2026-01-01T12-00-00-000Z-cccc").dir,
    );
    assert.equal(
      await chooseSession(d.ws, d.state, { continue: true }),
      "2026-01-01T10-00-00-000Z-aaaa",
    );
    const listed = await listSessions(d.ws, d.state);
    assert.deepEqual(listed.sessions.map((s) => [s.id, s.messages]), [[
      "2026-01-01T10-00-00-000Z-aaaa",
      58,
    ]]);
    assert.equal(listed.withoutMessages, 2);
    const out: string[] = [];
    await Deno.writeTextFile(join(d.root, "config.json"), "{}");
    await sessionsCommand(
      { workspace: d.ws, stateDir: d.state, config: join(d.root, "config.json") },
      (l) => out.push(l),
    );
    const text = out.join("\n");
    assert.match(text, /aaaa .*58 messages {2}request 0/);
    assert.doesNotMatch(text, /bbbb|cccc/);
    assert.match(text, /2 more session folders with no message, not listed/);
  });
});

Deno.test("sessions: the most recently active comes first, whenever it started", async () => {
  await withDirs(async (d) => {
    await makeSession(
      d,
      "2026-01-01T10-00-00-000Z-old1",
      [user("old one"), said("a")],
      new Date("2026-03-01T00:00:00Z"),
    );
    await makeSession(
      d,
      "2026-02-01T10-00-00-000Z-new1",
      [user("new one"), said("b")],
      new Date("2026-02-01T10:10:00Z"),
    );
    const { sessions } = await listSessions(d.ws, d.state);
    assert.deepEqual(sessions.map((s) => s.first), ["old one", "new one"]);
    assert.equal(
      await chooseSession(d.ws, d.state, { continue: true }),
      "2026-01-01T10-00-00-000Z-old1",
    );
  });
});

Deno.test("sessions: --resume takes a unique start of an id; an ambiguous one lists the candidates, escaped", async () => {
  await withDirs(async (d) => {
    const t = new Date("2026-01-01T10:00:00Z");
    await makeSession(d, "2026-01-01T10-00-00-000Z-ab12", [
      user("first \u202Eevil\u001b[31m words"),
    ], t);
    await makeSession(d, "2026-01-01T10-00-00-000Z-ab34", [user("second")], t);
    await makeSession(d, "2026-01-02T10-00-00-000Z-cd56", [user("third")], t);
    await makeSession(d, "2026-01-03T10-00-00-000Z-ef78", [], t);
    assert.equal(
      await chooseSession(d.ws, d.state, { resume: "2026-01-02" }),
      "2026-01-02T10-00-00-000Z-cd56",
    );
    assert.equal(
      await chooseSession(d.ws, d.state, { resume: "2026-01-01T10-00-00-000Z-ab34" }),
      "2026-01-01T10-00-00-000Z-ab34",
    );
    const ambiguous = await usageError(chooseSession(d.ws, d.state, { resume: "2026-01-01" }));
    assert.match(ambiguous, /'2026-01-01' starts 2 session ids; give more of it/);
    assert.match(ambiguous, /ab12 .*first ⟦U\+202E⟧evil⟦U\+001B⟧\[31m words/);
    assert.match(ambiguous, /ab34 .*second/);
    assert.ok(!ambiguous.includes("\u202E") && !ambiguous.includes("\u001b"), ambiguous);
    // A session with no message is none to resume; a prefix's own characters are escaped.
    assert.match(
      await usageError(chooseSession(d.ws, d.state, { resume: "2026-01-03" })),
      /no session '2026-01-03'/,
    );
    const odd = await usageError(chooseSession(d.ws, d.state, { resume: "x\u001b]0;t\u0007" }));
    assert.match(odd, /'x⟦U\+001B⟧\]0;t⟦U\+0007⟧'/);
    assert.match(await usageError(chooseSession(d.ws, d.state, { resume: "" })), /empty/);
    assert.match(
      await usageError(chooseSession(d.ws, d.state, { resume: "2026", continue: true })),
      /not both/,
    );
  });
});

Deno.test("sessions: a bare --resume is a list to choose from in a terminal, and an error elsewhere", async () => {
  await withDirs(async (d) => {
    assert.match(
      await usageError(sessionsToPick(d.ws, d.state, { resume: true })),
      /no session with a message yet/,
    );
    await makeSession(d, "2026-01-01T10-00-00-000Z-ab12", [user("hello")], new Date());
    await makeSession(d, "2026-01-01T11-00-00-000Z-ab13", [], new Date());
    const picks = await sessionsToPick(d.ws, d.state, { resume: true });
    assert.deepEqual(picks?.map((s) => s.id), ["2026-01-01T10-00-00-000Z-ab12"]);
    assert.equal(await sessionsToPick(d.ws, d.state, { resume: "2026" }), null);
    assert.equal(await sessionsToPick(d.ws, d.state, { continue: true }), null);
    assert.match(
      await usageError(chooseSession(d.ws, d.state, { resume: true })),
      /give a session id .*needs an interactive session in a terminal/,
    );
  });
});

Deno.test("sessions: the replay shows the person's words and the planner's texts, never a tool result", async () => {
  await withDirs(async (d) => {
    const path = await makeSession(d, "2026-01-01T10-00-00-000Z-ab12", [
      user("one"),
      said("answer one"),
      user("two"),
      {
        role: "assistant",
        content: "let me read it",
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "read_file", arguments: "{}" },
        }],
      },
      { role: "tool", tool_call_id: "c1", content: "STRANGER'S TEXT \u001b[2J" },
      said("answer two"),
      user("three \u202E"),
      said("answer three"),
      user("four"),
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "run", arguments: "{}" } }],
      },
    ], new Date());
    const loaded = await loadTranscript(path);
    const { exchanges, earlier, compacted } = lastExchanges(loaded, 3);
    assert.equal(earlier, 1);
    assert.equal(compacted, false);
    assert.deepEqual(exchanges, [
      { request: "two", answers: ["let me read it", "answer two"] },
      { request: "three \u202E", answers: ["answer three"] },
      // The interrupted call's result (Brave Bot's own words) is no answer either.
      { request: "four", answers: [] },
    ]);
    const lines = replayLines(loaded, (t) => [`md:${t}`]).join("\n");
    assert.match(lines, /the last 3 exchanges \(1 earlier exchange not shown\)/);
    assert.match(
      lines,
      /› two\nmd:let me read it\nmd:answer two\n› three ⟦U\+202E⟧\nmd:answer three\n› four\n {2}\(no answer\)/,
    );
    assert.doesNotMatch(lines, /STRANGER|interrupted|answer one/);
  });
});

Deno.test("sessions: the replay starts after /clear, and a compaction's summary is no exchange", async () => {
  await withDirs(async (d) => {
    const paths = sessionPaths(statePaths(d.state, d.ws), "2026-01-01T10-00-00-000Z-ab12");
    await ensurePrivateDir(paths.dir);
    const w = new TranscriptWriter(paths.transcript);
    await w.start({ id: "x", workspace: d.ws, started: new Date().toISOString() });
    await w.message(user("before the clear"), TRUSTED_PUBLIC);
    await w.message(said("forgotten"));
    await w.clear();
    await w.message(user("kept a"), TRUSTED_PUBLIC);
    await w.message(said("reply a"));
    await w.message(user("kept b"), TRUSTED_PUBLIC);
    await w.message(said("reply b"));
    await w.compact(user("SUMMARY OF IT ALL"), 2, TRUSTED_PUBLIC, { kept: [], leftOut: 0 });
    const loaded = await loadTranscript(paths.transcript);
    const r = lastExchanges(loaded, 3);
    assert.deepEqual(r.exchanges, [{ request: "kept b", answers: ["reply b"] }]);
    assert.equal(r.compacted, true);
    const lines = replayLines(loaded, (t) => [t]).join("\n");
    assert.match(lines, /older messages were compacted into a summary/);
    assert.doesNotMatch(lines, /SUMMARY|before the clear|forgotten/);
    // Listed by its first message ever, and counted with every message.
    const { sessions } = await listSessions(d.ws, d.state);
    assert.equal(sessions[0].first, "before the clear");
  });
});
