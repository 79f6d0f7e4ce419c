/**
 * A pipeline vouched stage by stage, in the real program through a pseudo-terminal (issue 25,
 * minors; docs/contract.md §8): at `grep -n hello notes.txt | sort` the person picks "vouch",
 * "each stage by a prefix", goes back a stage with Esc, and vouches `grep -n` and `sort`. The
 * same pipeline with other arguments then runs unasked; with `| sh` appended it is asked about
 * (and refused). The vouch list holds one prefix vouch per stage and no pipeline vouch.
 */
import assert from "node:assert/strict";
import { drivePty, KEY, sessionPlaces } from "./support/pty.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";

const run = (...pipeline: [string, string[]][]) => ({
  tool_calls: [{
    name: "run",
    arguments: { pipeline: pipeline.map(([program, args]) => ({ program, args })) },
  }],
});

Deno.test({
  name:
    "pipeline vouch (pty): each stage by a prefix, Esc a stage back; others' args unasked, | sh asked",
  sanitizeResources: false,
  async fn() {
    const replies: MockReply[] = [
      run(["grep", ["-n", "hello", "notes.txt"]], ["sort", []]),
      run(["grep", ["-n", "world", "notes.txt"]], ["sort", ["-r"]]),
      run(["grep", ["-n", "x", "notes.txt"]], ["sort", []], ["sh", []]),
      { text: "All sorted." },
    ];
    const mock = await startMockModel({ script: { replies } });
    const places = await sessionPlaces("bb-pty-pipevouch-", { "notes.txt": "hello\nworld\nx\n" });
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "ws \\(T,pub\\)(?: \\d+%)? ›", send: "sort the notes" + KEY.enter },
          { expect: "Run it\\?", send: "v", answer: true },
          { expect: "\\[s\\] each stage by a prefix", send: "s", answer: true },
          { expect: "each stage is vouched on its own" },
          { expect: "Stage 1 of 2: vouch for which prefix\\?", send: "1", answer: true },
          { expect: "❯ 1: grep -n …", send: KEY.enter, answer: true },
          // Esc on the second stage goes back to the first, whose prefix is picked again.
          { expect: "Stage 2 of 2: vouch for which prefix\\?", send: KEY.esc, answer: true },
          { expect: "Stage 1 of 2", send: "1", answer: true },
          { expect: "❯ 1: grep -n …", send: KEY.enter, answer: true },
          { expect: "Stage 2 of 2", send: "0", answer: true },
          { expect: "❯ 0: sort …", send: KEY.enter, answer: true },
          // The second pipeline runs unasked; the third, with `| sh`, is asked about.
          { expect: "Run it\\?", send: "n", answer: true, timeout: 60 },
          { expect: "All sorted\\.[\\s\\S]*›", send: "/vouch list" + KEY.enter },
          { expect: "prefix +\\S*sort …", send: "/exit" + KEY.enter },
        ],
        places.args(mock.url),
      );
      if (Deno.env.get("BB_SHOW_SCREEN")) console.log(r.screen);
      assert.ok(r.ok, r.screen.slice(-4000));
      // The vouch list: one prefix vouch per stage, no pipeline vouch.
      const listed = r.screen.slice(r.screen.lastIndexOf("/vouch list"));
      assert.match(listed, /v1 {2}prefix +\S*grep -n …/);
      assert.match(listed, /v2 {2}prefix +\S*sort …/);
      assert.doesNotMatch(listed, /pipeline/);
      // What was picked for each stage stays on the screen.
      assert.match(r.screen, /stage 1 by the prefix grep -n …/);
      assert.match(r.screen, /stage 2 by the prefix sort …/);
      // The second ran unasked on the two stage vouches; the third was asked about its sh.
      assert.match(r.screen, /ran without asking \(vouched\) \(rule: vouched: v1, v2\)/);
      assert.match(r.screen, /stage 3 not vouched for[\s\S]*Run it\? n: refuse/);
      assert.match(r.screen, /the person refused to run it/);
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});
