/**
 * The session screen's smaller manners (issue 25, the minors), through a real pseudo-terminal
 * against the scripted model: the frame is drawn again when the terminal is resized at the idle
 * prompt, and a question's rule is as wide as the terminal.
 */
import assert from "node:assert/strict";
import { drivePty, KEY, sessionPlaces } from "./support/pty.ts";
import { startMockModel } from "../scripts/mock-model.ts";

const call = (name: string, args: unknown) => ({ name, arguments: args });

/** The longest run of `─` on one line of the screen. */
function widestRule(screen: string, after = 0): number {
  let widest = 0;
  for (const line of screen.slice(after).split("\n")) {
    for (const m of line.matchAll(/─+/g)) widest = Math.max(widest, [...m[0]].length);
  }
  return widest;
}

Deno.test({
  name: "screen (pty): a resize at the idle prompt repaints it; rules follow the terminal's width",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: {
        replies: [
          { tool_calls: [call("write_file", { path: "a.txt", contents: "one\n" })] },
          { text: "wide done" },
          { tool_calls: [call("write_file", { path: "b.txt", contents: "two\n" })] },
          { text: "narrow done" },
        ],
      },
    });
    const places = await sessionPlaces("bb-pty-resize-");
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "wide" + KEY.enter },
          { expect: "Write a\\.txt\\?", send: "y", answer: true },
          { expect: "wide done[\\s\\S]*› [\\s\\S]*mock · ", columns: 50 },
          // Nothing typed: the prompt and the status line are drawn again at the new width.
          { expect: "\\(T,priv\\)(?: \\d+%)? ›[\\s\\S]*mock · ", send: "narrow" + KEY.enter },
          { expect: "MARK-NARROW|── write a file", send: "y", answer: true },
          { expect: "narrow done[\\s\\S]*›", send: "/exit" + KEY.enter },
        ],
        places.args(mock.url),
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      const narrowAt = r.screen.indexOf("› narrow");
      assert.ok(narrowAt > 0, r.screen);
      // At 120 columns the rule reaches across (not 64 columns); at 50 it fits in 50.
      assert.ok(widestRule(r.screen.slice(0, narrowAt)) > 100, r.screen.slice(0, narrowAt));
      const narrow = widestRule(r.screen, narrowAt);
      assert.ok(narrow > 30 && narrow < 50, `a rule of ${narrow} at 50 columns`);
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});

Deno.test({
  name:
    "screen (pty): a large paste is one mark and sent whole; tabs kept; Ctrl-U then text in one read; Enter's answer marked",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: {
        replies: [
          { text: "pasted ok" },
          { tool_calls: [call("write_file", { path: "a.txt", contents: "one\n" })] },
          { text: "chunk ok" },
        ],
      },
    });
    const places = await sessionPlaces("bb-pty-input-minors-");
    const big = Array.from({ length: 600 }, (_, i) => `row\t${i}`).join("\n");
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "look: " },
          { expect: "look:", send: KEY.paste(big) },
          { expect: "look: \\[pasted 600 lines\\]", send: KEY.enter },
          { expect: "pasted ok[\\s\\S]*›", send: "junk words" },
          // Ctrl-U and the new text arrive in one read: the line is cleared, then typed.
          { expect: "junk words", send: "\u0015write it" + KEY.enter },
          { expect: "\\[n\\] refuse \\(Enter\\)", send: "n", answer: true },
          { expect: "chunk ok[\\s\\S]*›", send: "/exit" + KEY.enter },
        ],
        places.args(mock.url),
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      // The paste was never drawn line by line, and the model got all of it, tabs and all.
      assert.ok(!r.screen.includes("row    599"), "the paste was drawn whole");
      const users = mock.requests.filter((q) => q.kind === "planner").map((q) =>
        (q.body as { messages: { role: string; content: string }[] }).messages.filter((m) =>
          m.role === "user"
        ).at(-1)?.content
      );
      assert.equal(users[0], `look: ${big}`);
      assert.equal(users[1], "write it");
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});

Deno.test({
  name:
    "screen (pty): the live line (time, tokens, Esc); a run's clock ticks; a cut reply retried is said discarded",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: {
        replies: [
          // Cut off after a few pieces of text: asked again, and the second answer is whole.
          { text: "CUT-" + "y".repeat(400), chunk: 8, fault: { cut_after: 4 } },
          { text: "WHOLE-ANSWER", chunk: 4 },
          {
            tool_calls: [call("run", { pipeline: [{ program: "sh", args: ["-c", "sleep 3"] }] })],
          },
          { text: "slept", fault: { delay_ms: 1500 } },
        ],
      },
    });
    const places = await sessionPlaces("bb-pty-live-");
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "answer me" + KEY.enter },
          { expect: "cut off and is discarded" },
          { expect: "trying again" },
          { expect: "WHOLE-ANSWER[\\s\\S]*›", send: "sleep" + KEY.enter },
          { expect: "Run it\\?", send: "y", answer: true },
          // The run's clock ticks while it runs.
          { expect: "run… 1s · Esc to interrupt" },
          { expect: "run… 2s" },
          { expect: "waiting for the model… \\d+s · Esc to interrupt" },
          { expect: "slept[\\s\\S]*›", send: "/exit" + KEY.enter },
        ],
        places.args(mock.url),
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      const planner = mock.requests.filter((q) => q.kind === "planner");
      assert.equal(planner.length, 4, "the cut reply was asked again once");
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});

Deno.test({
  name:
    "screen (pty): a {{ref:N}} is shown where it stands; /compact is said once, as asked, and the status line follows",
  sanitizeResources: false,
  async fn() {
    const long = Array.from({ length: 400 }, (_, i) => `Point ${i} of a long answer.`).join(" ");
    const mock = await startMockModel({
      script: {
        replies: [
          { text: "Before the output {{ref:0}}\n\nAFTER-THE-CONTENT" },
          { text: long },
          { text: "third" },
          // The summary /compact asks for.
          { text: "SUMMARY of it all" },
        ],
      },
    });
    const places = await sessionPlaces("bb-pty-ref-compact-");
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "!echo SHOWN-CONTENT" + KEY.enter },
          { expect: "told of ref:0", send: "show it" + KEY.enter },
          { expect: "AFTER-THE-CONTENT[\\s\\S]*›", send: "more" + KEY.enter },
          { expect: "Point 399[\\s\\S]*›", send: "again" + KEY.enter },
          { expect: "third[\\s\\S]*context \\d+% full", send: "/compact" + KEY.enter },
          {
            expect: "as you asked \\(/compact\\)[\\s\\S]*context \\d+% full",
            send: "/exit" + KEY.enter,
          },
        ],
        places.args(mock.url),
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      const s = r.screen;
      // The reference's frame stands between the text before its marker and the text after.
      const frame = s.lastIndexOf("│ SHOWN-CONTENT");
      assert.ok(frame > s.indexOf("Before the output"), s);
      assert.ok(frame < s.lastIndexOf("AFTER-THE-CONTENT"), s);
      // /compact: said once, as asked, not as a window that was full.
      const compactAt = s.indexOf("› /compact");
      const after = s.slice(compactAt);
      assert.equal(after.split("became one summary").length - 1, 1, after);
      assert.doesNotMatch(after, /to fit the context window/);
      // The status line follows: the long answer is summarised away.
      const tokens = (t: string) => [...t.matchAll(/~(\d+) tokens · context/g)].map((m) => +m[1]);
      const before = tokens(s.slice(0, compactAt)).at(-1)!;
      const now = tokens(after).at(-1)!;
      assert.ok(now < before, `the status line said ~${before} tokens, then ~${now}`);
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});
