/**
 * Sessions as a person meets them (issue 25): a session left without a word is not kept, a bare
 * `--resume` offers the sessions to choose from in a terminal (most recently active first, each
 * with its date, count and the person's first words, escaped), and the chosen one opens with its
 * last exchanges replayed — the person's words and the planner's, never a tool's result.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { drivePty, KEY, sessionArgs } from "./support/pty.ts";
import { runMain } from "./support/run_main.ts";
import { startMockModel } from "../scripts/mock-model.ts";

async function sessionFolders(state: string): Promise<string[]> {
  const out: string[] = [];
  for await (const w of Deno.readDir(join(state, "workspaces"))) {
    try {
      for await (const s of Deno.readDir(join(state, "workspaces", w.name, "sessions"))) {
        out.push(s.name);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return out;
}

Deno.test({
  name:
    "sessions (pty): an empty session is not kept; a bare --resume picks one and replays its last exchanges",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: {
        replies: [
          { tool_calls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
          { text: "Fixed the **login** bug." },
          { text: "Second answer." },
        ],
      },
    });
    const root = await Deno.makeTempDir({ prefix: "bb-pty-sessions-" });
    const ws = join(root, "myrepo");
    const state = join(root, "state");
    const config = join(root, "config.json");
    const args = sessionArgs({ ws, state, config, endpoint: mock.url });
    try {
      await Deno.mkdir(ws);
      await Deno.writeTextFile(join(ws, "notes.txt"), "FILE-BODY-MARKER\n");
      await Deno.writeTextFile(config, "{}");

      // A session opened and left without a message: nothing of it stays.
      const empty = await drivePty([
        { expect: "Trust:", send: "w", answer: true },
        { expect: "myrepo \\(T,pub\\)(?: \\d+%)? ›", send: "/exit" + KEY.enter },
      ], args);
      assert.ok(empty.ok, empty.screen);
      assert.match(empty.screen, /nothing was said: the session is not kept/);
      assert.deepEqual(await sessionFolders(state), []);
      const none = await runMain([...args, "--continue", "-p", "x"]);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /no session with a message yet/);

      const a = await runMain([...args, "-p", "fix the \u202E login bug, please"]);
      assert.equal(a.code, 0, a.stderr);
      const b = await runMain([...args, "-p", "second request"]);
      assert.equal(b.code, 0, b.stderr);

      // Without a terminal there is no list to choose from.
      const bare = await runMain([...args, "--resume", "-p", "x"]);
      assert.equal(bare.code, 2);
      assert.match(bare.stderr, /--resume: give a session id/);

      const r = await drivePty([
        { expect: "Go on with which session\\?[\\s\\S]*second request", send: "2", answer: true },
        { expect: "❯ \\S+ \\S+ {2}4 messages {2}fix the", send: KEY.enter, answer: true },
        {
          expect: "resumed: 4 messages[\\s\\S]*myrepo \\([TU],(?:pub|priv)\\)(?: \\d+%)? ›",
          send: "/exit" + KEY.enter,
        },
      ], [...args, "--resume"]);
      assert.ok(r.ok, r.screen);
      const picker = r.screen.slice(r.screen.indexOf("Go on with which session?"));
      // Most recently active first, each with its count and the person's words, escaped.
      assert.match(
        picker,
        /2 messages {2}second request[\s\S]*4 messages {2}fix the ⟦U\+202E⟧ login bug/,
      );
      assert.doesNotMatch(r.screen, /\u202E/);
      const replay = r.screen.slice(r.screen.indexOf("the last exchange"));
      assert.match(replay, /› fix the ⟦U\+202E⟧ login bug, please[\s\S]*Fixed the login bug\./);
      // The tool's result (the file's body) is the one thing the replay leaves out.
      assert.doesNotMatch(r.screen, /FILE-BODY-MARKER/);
      assert.doesNotMatch(replay, /second request/);

      // Esc at the list leaves, and opens nothing.
      const left = await drivePty([
        { expect: "Go on with which session\\?", send: KEY.esc, answer: true },
        { expect: "no session chosen" },
      ], [...args, "--resume"]);
      assert.ok(left.ok, left.screen);
      assert.doesNotMatch(left.screen, /Brave Bot —/);

      const listed = await runMain(["sessions", ...args]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout.match(/ messages? /g)?.length, 2, listed.stdout);
      assert.doesNotMatch(listed.stdout, /no message, not listed/);
    } finally {
      await mock.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});
