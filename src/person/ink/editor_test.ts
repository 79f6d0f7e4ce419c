import assert from "node:assert/strict";
import {
  applyKey,
  completions,
  type EditorAction,
  type EditorState,
  emptyEditor,
  type KeyPress,
  paste,
  searchMatch,
} from "./editor.ts";

const idle = { busy: false, commands: ["help", "history", "exit", "status"] };

function keys(
  s: EditorState,
  presses: (KeyPress | string)[],
  ctx = idle,
): [EditorState, EditorAction[]] {
  const actions: EditorAction[] = [];
  for (const p of presses) {
    const [next, action] = applyKey(s, typeof p === "string" ? { input: p } : p, ctx);
    s = next;
    if (action.kind !== "none") actions.push(action);
  }
  return [s, actions];
}

const ENTER: KeyPress = { input: "\r", return: true };
const UP: KeyPress = { input: "", upArrow: true };
const DOWN: KeyPress = { input: "", downArrow: true };

Deno.test("editor: typing and Enter submit, and the line goes into history", () => {
  const [s, actions] = keys(emptyEditor(), ["h", "i", ENTER]);
  assert.deepEqual(actions, [{ kind: "submit", text: "hi" }]);
  assert.equal(s.text, "");
  assert.deepEqual(s.history, ["hi"]);
});

Deno.test("editor: Enter on an empty or blank line submits nothing", () => {
  const [, actions] = keys(emptyEditor(), [" ", ENTER, ENTER]);
  assert.deepEqual(actions, []);
});

Deno.test("editor: Shift+Enter, Ctrl+J and a trailing backslash make line breaks", () => {
  const [s, actions] = keys(emptyEditor(), [
    "a",
    { input: "\r", return: true, shift: true },
    "b",
    { input: "\n" },
    "c",
    "\\",
    ENTER,
    "d",
  ]);
  assert.deepEqual(actions, []);
  assert.equal(s.text, "a\nb\nc\nd");
  const [, done] = keys(s, [ENTER]);
  assert.deepEqual(done, [{ kind: "submit", text: "a\nb\nc\nd" }]);
});

Deno.test("editor: a paste is inserted whole, three lines and all, and never submits", () => {
  let s = keys(emptyEditor(), ["x", " "])[0];
  s = paste(s, "one\r\ntwo\nthree");
  assert.equal(s.text, "x one\ntwo\nthree");
  const [, actions] = keys(s, [ENTER]);
  assert.deepEqual(actions, [{ kind: "submit", text: "x one\ntwo\nthree" }]);
});

Deno.test("editor: an unbracketed multi-line chunk is inserted, not sent line by line", () => {
  const [s, actions] = keys(emptyEditor(), ["one\rtwo\rthree\r"]);
  assert.deepEqual(actions, []);
  assert.equal(s.text, "one\ntwo\nthree\n");
  // Fast typing ending in one Enter submits.
  const [, typed] = keys(emptyEditor(), ["hello\r"]);
  assert.deepEqual(typed, [{ kind: "submit", text: "hello" }]);
  // Typed before the screen was up, in line mode: Enter arrives as a line feed.
  const [, early] = keys(emptyEditor(), ["hello\n"]);
  assert.deepEqual(early, [{ kind: "submit", text: "hello" }]);
});

Deno.test("editor: Up and Down recall history and give the draft back", () => {
  let s = emptyEditor(["first", "second"]);
  s = keys(s, ["dr", "aft"])[0];
  s = keys(s, [UP])[0];
  assert.equal(s.text, "second");
  s = keys(s, [UP, UP])[0];
  assert.equal(s.text, "first");
  s = keys(s, [DOWN])[0];
  assert.equal(s.text, "second");
  s = keys(s, [DOWN])[0];
  assert.equal(s.text, "draft");
  const [, actions] = keys(s, [UP, ENTER]);
  assert.deepEqual(actions, [{ kind: "submit", text: "second" }]);
});

Deno.test("editor: Up inside a multi-line text moves the cursor up before recalling", () => {
  let s = paste(emptyEditor(["old"]), "ab\ncd");
  s = keys(s, [UP])[0];
  assert.equal(s.text, "ab\ncd");
  assert.equal(s.cursor, 2);
  s = keys(s, [UP])[0];
  assert.equal(s.text, "old");
});

Deno.test("editor: the same message twice is one history entry", () => {
  const [s] = keys(emptyEditor(["a"]), ["a", ENTER]);
  assert.deepEqual(s.history, ["a"]);
});

Deno.test("editor: cursor movement, backspace and delete edit in place", () => {
  const left = { input: "", leftArrow: true };
  const [s] = keys(emptyEditor(), [
    "a",
    "c",
    left,
    "b",
    { input: "", backspace: true },
    "B",
    { input: "", home: true },
    { input: "", delete: true },
  ]);
  assert.equal(s.text, "Bc");
  assert.equal(s.cursor, 0);
  const [emoji] = keys(emptyEditor(), ["x😀", { input: "", backspace: true }]);
  assert.equal(emoji.text, "x");
});

Deno.test("editor: Ctrl-C and Esc stop a running turn; idle, Ctrl-C twice leaves", () => {
  const ctrlC = { input: "c", ctrl: true };
  const busy = { ...idle, busy: true };
  assert.deepEqual(keys(emptyEditor(), [ctrlC], busy)[1], [{ kind: "stop" }]);
  assert.deepEqual(keys(emptyEditor(), [{ input: "", escape: true }], busy)[1], [
    { kind: "interrupt" },
  ]);
  assert.deepEqual(keys(emptyEditor(), [{ input: "", escape: true }])[1], []);
  assert.deepEqual(keys(emptyEditor(), [ctrlC, ctrlC])[1], [
    { kind: "hint-exit" },
    { kind: "exit" },
  ]);
  // A key in between resets it; Ctrl-C on text clears the text.
  assert.deepEqual(keys(emptyEditor(), [ctrlC, "x", ctrlC, ctrlC])[1], [
    { kind: "hint-exit" },
    { kind: "hint-exit" },
  ]);
  assert.deepEqual(keys(emptyEditor(), [{ input: "d", ctrl: true }])[1], [{ kind: "exit" }]);
  assert.deepEqual(keys(emptyEditor(), ["x", { input: "d", ctrl: true }])[1], []);
});

Deno.test("editor: while busy, typing and Enter still submit (the session queues them)", () => {
  const [, actions] = keys(emptyEditor(), ["n", "e", "x", "t", ENTER], { ...idle, busy: true });
  assert.deepEqual(actions, [{ kind: "submit", text: "next" }]);
});

Deno.test("editor: Tab completes slash commands", () => {
  const tab = { input: "", tab: true };
  assert.equal(keys(emptyEditor(), ["/", "s", tab])[0].text, "/status ");
  assert.equal(keys(emptyEditor(), ["/", "h", tab])[0].text, "/h");
  assert.equal(keys(emptyEditor(), ["/", "h", "e", tab])[0].text, "/help ");
  assert.equal(keys(emptyEditor(), ["h", "e", tab])[0].text, "he");
  assert.deepEqual(completions(keys(emptyEditor(), ["/", "h"])[0], idle.commands), [
    "help",
    "history",
  ]);
});

Deno.test("editor: Ctrl+R searches history backwards; Enter submits the match", () => {
  const ctrlR = { input: "r", ctrl: true };
  let s = emptyEditor(["git status", "deno test", "git log"]);
  s = keys(s, [ctrlR, "g", "i", "t"])[0];
  assert.equal(searchMatch(s), "git log");
  s = keys(s, [ctrlR])[0];
  assert.equal(searchMatch(s), "git status");
  const [after, actions] = keys(s, [ENTER]);
  assert.deepEqual(actions, [{ kind: "submit", text: "git status" }]);
  assert.equal(after.search, null);
  // Esc leaves the search with the text as it was.
  const [left] = keys(emptyEditor(["abc"]), ["x", ctrlR, "a", { input: "", escape: true }]);
  assert.equal(left.search, null);
  assert.equal(left.text, "x");
});

Deno.test("editor: Ctrl+L asks for a clear screen; control characters typed are dropped", () => {
  assert.deepEqual(keys(emptyEditor(), [{ input: "l", ctrl: true }])[1], [{
    kind: "clear-screen",
  }]);
  assert.equal(keys(emptyEditor(), ["a\u0007b"])[0].text, "ab");
});
