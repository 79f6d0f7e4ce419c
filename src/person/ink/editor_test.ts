import assert from "node:assert/strict";
import {
  applyKey,
  completions,
  type EditorAction,
  type EditorState,
  emptyEditor,
  EXIT_WINDOW_MS,
  expandPastes,
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
  // Ctrl-G leaves the search with the text as it was; Esc keeps the match, to edit (issue 25).
  const [left] = keys(emptyEditor(["abc"]), ["x", ctrlR, "a", { input: "g", ctrl: true }]);
  assert.equal(left.search, null);
  assert.equal(left.text, "x");
  const [kept, sent] = keys(emptyEditor(["abc"]), ["x", ctrlR, "a", { input: "", escape: true }]);
  assert.equal(kept.search, null);
  assert.equal(kept.text, "abc");
  assert.equal(kept.cursor, 3);
  assert.deepEqual(sent, []);
  // With no match, Esc leaves the text as it was.
  const [none] = keys(emptyEditor(["abc"]), ["x", ctrlR, "z", { input: "", escape: true }]);
  assert.equal(none.text, "x");
});

Deno.test("editor: Ctrl+L asks for a clear screen; control characters typed are dropped", () => {
  assert.deepEqual(keys(emptyEditor(), [{ input: "l", ctrl: true }])[1], [{
    kind: "clear-screen",
  }]);
  assert.equal(keys(emptyEditor(), ["a\u0007b"])[0].text, "ab");
});

Deno.test("editor: a second Ctrl-C leaves only within the window; later it is a first again", () => {
  const ctrlC = { input: "c", ctrl: true };
  const at = (now: number) => ({ ...idle, now });
  let [s, a] = applyKey(emptyEditor(), ctrlC, at(10_000));
  assert.equal(a.kind, "hint-exit");
  [s, a] = applyKey(s, ctrlC, at(10_000 + EXIT_WINDOW_MS + 1));
  assert.equal(a.kind, "hint-exit", "a Ctrl-C long after the first left");
  [, a] = applyKey(s, ctrlC, at(10_000 + 2 * EXIT_WINDOW_MS));
  assert.equal(a.kind, "exit");
});

Deno.test("editor: tabs in a paste and in a chunk stay tabs", () => {
  const s = paste(emptyEditor(), "a\tb\n\tc");
  assert.equal(s.text, "a\tb\n\tc");
  assert.deepEqual(keys(s, [ENTER])[1], [{ kind: "submit", text: "a\tb\n\tc" }]);
  assert.equal(keys(emptyEditor(), ["x\ty"])[0].text, "x\ty");
});

Deno.test("editor: a large paste shows as one mark, is sent whole, and Backspace takes it whole", () => {
  const big = Array.from({ length: 600 }, (_, i) => `line ${i}`).join("\n");
  let s = keys(emptyEditor(), ["see "])[0];
  s = paste(s, big);
  assert.equal(s.text, "see [pasted 600 lines]");
  s = keys(s, [" ok"])[0];
  const [after, sent] = keys(s, [ENTER]);
  assert.deepEqual(sent, [{
    kind: "submit",
    text: `see ${big} ok`,
    shown: "see [pasted 600 lines] ok",
  }]);
  assert.deepEqual(after.pastes, []);
  assert.equal(after.history.at(-1), `see ${big} ok`);
  // Two of the same size are told apart; a backspace after a mark removes it and its text.
  s = paste(paste(emptyEditor(), big), big);
  assert.equal(s.text, "[pasted 600 lines][pasted 600 lines #2]");
  s = keys(s, [{ input: "", backspace: true }])[0];
  assert.equal(s.text, "[pasted 600 lines]");
  assert.equal(expandPastes(s), big);
  // A short paste goes in as it is.
  assert.equal(paste(emptyEditor(), "a\nb").text, "a\nb");
});

Deno.test("editor: keys that came in one read are each handled (Ctrl-U then text)", () => {
  const [s] = keys(emptyEditor(), ["old words", "\u0015new"]);
  assert.equal(s.text, "new");
  const [w] = keys(emptyEditor(), ["one two\u0017three"]);
  assert.equal(w.text, "one three");
  const [, sent] = keys(emptyEditor(), ["junk\u0015fresh\r"]);
  assert.deepEqual(sent, [{ kind: "submit", text: "fresh" }]);
});

Deno.test("editor: Ctrl-W, Alt-Backspace, Alt-B, Alt-F and Ctrl-K", () => {
  const ctrlW = { input: "w", ctrl: true };
  const altBs = { input: "", backspace: true, meta: true };
  const altB = { input: "b", meta: true };
  const altF = { input: "f", meta: true };
  const ctrlK = { input: "k", ctrl: true };
  assert.equal(keys(emptyEditor(), ["git commit -m  ", ctrlW])[0].text, "git commit ");
  assert.equal(keys(emptyEditor(), ["src/app.ts", altBs])[0].text, "src/app.");
  assert.equal(keys(emptyEditor(), ["src/app.ts", ctrlW])[0].text, "");
  let [s] = keys(emptyEditor(), ["alpha beta gamma", altB, altB]);
  assert.equal(s.cursor, 6);
  s = keys(s, [altF])[0];
  assert.equal(s.cursor, 10);
  s = keys(s, [ctrlK])[0];
  assert.equal(s.text, "alpha beta");
  // Ctrl-K ends at the line's end, not the text's.
  const [m] = keys(paste(emptyEditor(), "ab\ncd"), [{ input: "", upArrow: true }, ctrlK]);
  assert.equal(m.text, "ab\ncd".slice(0, m.cursor) + "\ncd");
});
