/**
 * What the session leaves on the terminal (issue 25, the first hour walked), through a real
 * pseudo-terminal and then a headless terminal that plays its bytes back (test/support/
 * terminal.ts): on leaving, the live frame (prompt and status line) is erased and the shell's
 * prompt follows the last finished line.
 */
import assert from "node:assert/strict";
import { drivePty, KEY, sessionPlaces } from "./support/pty.ts";
import { above, shownAfter } from "./support/terminal.ts";
import { startMockModel } from "../scripts/mock-model.ts";

for (const [how, keys] of [["/exit", "/exit" + KEY.enter], ["Ctrl-D", KEY.ctrlD]]) {
  Deno.test({
    name: `frame (pty): after ${how} the prompt and status line are gone, the output stays`,
    sanitizeResources: false,
    async fn() {
      const mock = await startMockModel({ script: { replies: [{ text: "the answer, kept" }] } });
      const places = await sessionPlaces("bb-pty-leave-");
      try {
        const r = await drivePty(
          [
            { expect: "Trust:", send: "w", answer: true },
            { expect: "\\(T,pub\\) ›", send: "hello" + KEY.enter },
            { expect: "the answer, kept[\\s\\S]*› [\\s\\S]*mock · ", send: keys },
            { expect: "session kept: bravebot --resume" },
          ],
          places.args(mock.url),
        );
        assert.ok(r.ok, r.screen.slice(-3000));
        const shown = await shownAfter(r);
        const rows = above(shown);
        const text = rows.join("\n");
        // Everything printed for good is still there…
        assert.match(text, /› hello/);
        assert.match(text, /the answer, kept/);
        // …the last row is the last finished line, and nothing of the frame is left below it.
        assert.match(rows[rows.length - 1], /^session kept: bravebot --resume /, text);
        // (The echoed `/exit` is finished output; the status line never is.)
        assert.doesNotMatch(text, /mock · /);
        // The cursor is where the shell's prompt goes: the row after, at its start.
        assert.equal(shown.cursor.row, rows.length, text);
        assert.equal(shown.cursor.column, 0);
      } finally {
        await mock.stop();
        await places.remove();
      }
    },
  });
}

Deno.test({
  name: "frame (pty): a narrower window leaves no stale copy of the prompt or status line",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: { replies: [{ text: "first answer" }, { text: "second answer" }] },
    });
    const places = await sessionPlaces("bb-pty-shrink-");
    try {
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "hello" + KEY.enter },
          // The status line (about 50 columns) is re-wrapped by the terminal onto two rows at 40.
          { expect: "first answer[\\s\\S]*› [\\s\\S]*mock · [^\\n]*full", columns: 40 },
          { expect: "\\(T,priv\\)(?: \\d+%)? ›[\\s\\S]*mock · ", send: "again" + KEY.enter },
          { expect: "second answer[\\s\\S]*›", columns: 34 },
          { expect: "\\(T,priv\\)(?: \\d+%)? ›[\\s\\S]*mock · ", send: "/exit" + KEY.enter },
          { expect: "session kept" },
        ],
        places.args(mock.url),
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      const text = above(await shownAfter(r)).join("\n");
      // (Rows wrapped at 34 columns are joined to look for what was printed.)
      const joined = text.replaceAll("\n", "");
      for (const kept of ["› hello", "first answer", "› again", "second answer", "session kept"]) {
        assert.ok(joined.includes(kept), `${kept} is gone:\n${text}`);
      }
      // Every frame was erased whole: no prompt with nothing typed, no piece of a status line.
      const from = text.indexOf("first answer");
      assert.doesNotMatch(text.slice(from), /› *$|mock · |tokens · |context \d+% full/m, text);
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});

Deno.test({
  name: "frame (pty): at 40 columns a quarantined file's preview keeps its margin on wrapped rows",
  sanitizeResources: false,
  async fn() {
    const mock = await startMockModel({
      script: {
        replies: [
          { tool_calls: [{ name: "read_file", arguments: { path: "vendor/notes.txt" } }] },
          { text: "read done" },
        ],
      },
    });
    // Longer than a row at 40 columns, with the spaces of code and a character to escape.
    const long = "const greeting = 'hello from a vendored file'; // \u0007 and more words here";
    const places = await sessionPlaces("bb-pty-margin-");
    try {
      await Deno.mkdir(`${places.ws}/vendor`);
      await Deno.writeTextFile(`${places.ws}/vendor/notes.txt`, `short line\n${long}\n`);
      const r = await drivePty(
        [
          { expect: "Trust:", send: "w", answer: true },
          { expect: "\\(T,pub\\) ›", send: "read it" + KEY.enter },
          { expect: "What should\\s+it get\\?", send: "k", answer: true },
          { expect: "read done[\\s\\S]*›", send: "/exit" + KEY.enter },
          { expect: "session kept" },
        ],
        places.args(mock.url),
        undefined,
        { columns: 40 },
      );
      assert.ok(r.ok, r.screen.slice(-3000));
      const rows = above(await shownAfter(r));
      const from = rows.findIndex((row) => row.includes("first lines (escaped)"));
      assert.ok(from >= 0, rows.join("\n"));
      const preview: string[] = [];
      for (const row of rows.slice(from + 1)) {
        if (row.startsWith("The planner asks") || row.startsWith("[v]")) break;
        preview.push(row);
      }
      // Every row of the preview, wrapped ones too, has the margin…
      assert.ok(preview.length >= 3, preview.join("\n"));
      // (An empty line's row is the bar alone: the terminal keeps no trailing space.)
      for (const row of preview) assert.ok(/^│( |$)/.test(row), `no margin: ${row}`);
      // …and the rows put together are the escaped line, every character and space kept.
      const text = preview.slice(1).map((row) => row.slice(2)).join("");
      assert.equal(
        text,
        "const greeting = 'hello from a vendored file'; // ⟦U+0007⟧ and more words here",
      );
    } finally {
      await mock.stop();
      await places.remove();
    }
  },
});
