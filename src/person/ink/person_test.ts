/**
 * The approvals at the session screen, driven through the Screen with a fake clock: one key
 * answers, Enter alone never approves, keys typed before a question appeared and pastes never
 * answer it, Ctrl-C takes the safe answer and stops the turn.
 */
import assert from "node:assert/strict";
import { ARM_MS, Screen } from "./screen.ts";
import { InkPerson } from "./person.ts";
import type { KeyPress } from "./editor.ts";
import type { ReadOutputRequest, RunApprovalRequest, WriteApprovalRequest } from "../person.ts";
import { TRUSTED_PRIVATE, UNTRUSTED_PRIVATE } from "../../util/label.ts";

function setup() {
  let now = 1_000;
  const screen = new Screen([], () => now);
  let stops = 0;
  screen.hooks = {
    onInterrupt() {},
    onStop: () => stops++,
    onSubmit() {},
    onExit() {},
    onClearScreen() {},
  };
  const person = new InkPerson(screen, { width: () => 80, previewLines: 3 });
  /** A key, once the question asked after the last answer (a promise away) is up. */
  const press = async (k: KeyPress | string) => {
    await new Promise((r) => setTimeout(r, 0));
    screen.questionDrawn();
    now += ARM_MS + 1;
    screen.key(typeof k === "string" ? { input: k } : k);
  };
  const later = () => {
    screen.questionDrawn();
    now += ARM_MS + 1;
  };
  const shown = () => screen.items.map((i) => i.text).join("\n");
  return { screen, person, press, later, shown, stops: () => stops };
}

/** The next question is up: the answers before it were a few promises away. */
const tick = () => new Promise((r) => setTimeout(r, 0));

/** Esc twice from a vouch question's next step: back to "vouch for what", to "run it"; then v e. */
async function backTwiceThenExactly(t: ReturnType<typeof setup>) {
  await t.press({ input: "", escape: true });
  await tick();
  assert.match(t.screen.question?.title ?? "", /^Vouch for what\?/);
  await t.press({ input: "", escape: true });
  await tick();
  assert.equal(t.screen.question?.title, "Run it?");
  await t.press("v");
  await t.press("e");
}

/** A diff of five lines on the screen: two file names, a hunk header, two added lines. */
const write: WriteApprovalRequest = {
  tool: "write_file",
  path: "a.txt",
  viaRef: false,
  isNew: true,
  preview: {
    kind: "diff",
    oldName: "a/a.txt",
    newName: "b/a.txt",
    hunks: [{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 2, lines: ["+4", "+5"] }],
  },
  label: TRUSTED_PRIVATE,
};

const run: RunApprovalRequest = {
  stages: [{ program: "git", resolved: "/usr/bin/git", args: ["log", "--oneline", "-n 3"] }],
  display: ["git log --oneline '-n 3'"],
  stdin: null,
  why: "",
  warnings: [],
  stageWarnings: [null],
  confinement: { confined: true },
};

/** A preview short enough to be shown whole (the setup shows 3 lines before holding back). */
const shortWrite: WriteApprovalRequest = {
  ...write,
  preview: { kind: "diff", oldName: "a/a.txt", newName: "b/a.txt", hunks: [] },
};

Deno.test("ink person: one key approves a write; keys typed before it appeared are dropped", async () => {
  const t = setup();
  const answer = t.person.approveWrite(shortWrite);
  t.screen.key({ input: "y" });
  assert.ok(t.screen.question, "a key typed before the question was drawn answered it");
  t.screen.questionDrawn();
  t.screen.key({ input: "y" });
  assert.ok(t.screen.question, "a key right after the question was drawn answered it");
  assert.match(t.screen.questionNote, /typed before this question appeared/);
  t.later();
  await t.press("y");
  assert.deepEqual(await answer, { approved: true });
});

Deno.test("ink person: Enter and Esc refuse; a paste or several keys do not answer", async () => {
  const t = setup();
  const first = t.person.approveWrite(write);
  t.later();
  await new Promise((r) => setTimeout(r, 0));
  t.screen.paste("y");
  await t.press("yy");
  assert.ok(t.screen.question);
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await first, { approved: false });
  const second = t.person.approveWrite(write);
  t.later();
  await t.press({ input: "", escape: true });
  assert.deepEqual(await second, { approved: false });
});

Deno.test("ink person: r asks a reason; a shows the held-back lines", async () => {
  const t = setup();
  const answer = t.person.approveWrite(write);
  t.later();
  assert.match(t.shown(), /2 more lines not shown yet/);
  await t.press("a");
  t.later();
  assert.match(t.shown(), /\+?5/);
  await t.press("r");
  t.later();
  for (const ch of "too big") t.press(ch);
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await answer, { approved: false, reason: "too big" });
});

Deno.test("ink person: runs — y once, u unconfined, v then e exact or p prefix by digit", async () => {
  const t = setup();
  const answers = [];
  for (const keys of [["y"], ["u"], ["v", "e"], ["v", "p", "2", "\r"], ["n"]]) {
    const answer = t.person.approveRun(run);
    for (const k of keys) {
      t.later();
      await t.press(k === "\r" ? { input: "\r", return: true } : k);
    }
    answers.push(await answer);
  }
  assert.deepEqual(answers, [
    { answer: "once" },
    { answer: "once", unconfined: true },
    { answer: "vouch" },
    { answer: "vouch", prefixArgs: 2 },
    { answer: "refuse" },
  ]);
  // The prefixes on offer are shown argument by argument, quoted as formatArgv writes them.
  const prefix = t.person.approveRun(run);
  t.later();
  await t.press("v");
  t.later();
  await t.press("p");
  const q = t.screen.question;
  assert.ok(q?.kind === "pick");
  assert.deepEqual(q.options, ["0: git …", "1: git log …", "2: git log --oneline …"]);
  // Esc goes back a step: from the prefixes to "vouch for what", from there to "run it".
  await backTwiceThenExactly(t);
  assert.deepEqual(await prefix, { answer: "vouch" });
  // Ctrl-C in the vouch questions still refuses, and stops the turn.
  const stopped = t.person.approveRun(run);
  await t.press("v");
  await t.press("p");
  await t.press({ input: "c", ctrl: true });
  assert.deepEqual(await stopped, { answer: "refuse" });
  assert.equal(t.stops(), 1);
  // `u` is not on offer when the command would not run confined anyway.
  const unconfined = t.person.approveRun({
    ...run,
    confinement: { confined: false, why: "no bwrap" },
  });
  t.later();
  await t.press("u");
  assert.ok(t.screen.question, "u answered although confinement was not on offer");
  await t.press("y");
  assert.deepEqual(await unconfined, { answer: "once" });
});

Deno.test("ink person: Ctrl-C takes the safe answer and stops the turn", async () => {
  const t = setup();
  const answer = t.person.approveRun(run);
  t.later();
  await t.press({ input: "c", ctrl: true });
  assert.deepEqual(await answer, { answer: "refuse" });
  assert.equal(t.stops(), 1);
  const first = t.person.firstUse("/w");
  t.later();
  await t.press({ input: "", escape: true });
  assert.deepEqual(await first, { choice: "unanswered" });
});

Deno.test("ink person: quarantined read keys; ask_user by digit, own words, skip", async () => {
  const t = setup();
  const read = { path: "v/x", preview: ["hi"], size: 2, label: TRUSTED_PRIVATE };
  const results = [];
  for (const k of ["v", "s", "k", "\r"]) {
    const a = t.person.quarantinedRead(read);
    t.later();
    await t.press(k === "\r" ? { input: "\r", return: true } : k);
    results.push(await a);
  }
  assert.deepEqual(results, ["vouch", "untrusted", "keep", "keep"]);
  const q = { header: "H", question: "Which?", options: [{ label: "a" }, { label: "b" }] };
  const two = t.person.ask(q);
  t.later();
  await t.press("2");
  assert.deepEqual(await two, { kind: "options", chosen: ["b"] });
  const own = t.person.ask(q);
  t.later();
  await t.press("o");
  t.later();
  await t.press("mine");
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await own, { kind: "text", text: "mine" });
  const many = t.person.ask({ ...q, multiple: true });
  t.later();
  await t.press("1");
  await t.press({ input: "", downArrow: true });
  await t.press(" ");
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await many, { kind: "options", chosen: ["a", "b"] });
});

Deno.test("ink person: a diff is escaped once, never forged by its text; backslashes byte for byte", async () => {
  const t = setup();
  const answer = t.person.approveWrite({
    ...write,
    isNew: false,
    preview: {
      kind: "diff",
      oldName: "a/a.txt",
      newName: "b/a.txt",
      hunks: [{
        oldStart: 1,
        oldLines: 1,
        newStart: 1,
        newLines: 3,
        lines: ["-old", "+new\x1b[2J\x1b]0;pwned\x07", "+const re = /\\d+\\.\\d+/;", "+\tx();"],
      }],
    },
  });
  // The preview holds back lines past the third here: show them all first.
  t.later();
  await t.press("a");
  t.later();
  await t.press("n");
  assert.deepEqual(await answer, { approved: false });
  const shown = t.shown();
  assert.match(shown, /new⟦U\+001B⟧\[2J⟦U\+001B⟧\]0;pwned⟦U\+0007⟧/);
  assert.ok(!shown.includes("\x1b[2J") && !shown.includes("\x1b]0;pwned"), shown);
  // Escaped once: a marker's own ⟦ was not escaped again.
  assert.doesNotMatch(shown, /⟦U\+27E6⟧/);
  assert.ok(shown.includes("const re = /\\d+\\.\\d+/;"), shown);
  assert.ok(!shown.includes("\\\\"), "a backslash was doubled");
  // A tab in an approved line is a byte that matters (a Makefile, Python): shown as a marker.
  assert.ok(shown.includes("⟦U+0009⟧x();"), shown);
});

Deno.test("ink person: the prefixes on offer show each argument quoted as on the run screen", async () => {
  const t = setup();
  const answer = t.person.approveRun({
    ...run,
    stages: [{ program: "grep", resolved: "/usr/bin/grep", args: ["-e", "a b", "it's"] }],
    display: ["/usr/bin/grep -e 'a b' 'it⟦U+0027⟧s'"],
  });
  t.later();
  await t.press("v");
  t.later();
  await t.press("p");
  const q = t.screen.question;
  assert.ok(q?.kind === "pick");
  assert.deepEqual(q.options, ["0: grep …", "1: grep -e …", "2: grep -e 'a b' …"]);
  await t.press("2");
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await answer, { answer: "vouch", prefixArgs: 2 });
});

Deno.test("ink person: first use — w, n, Enter (nothing), c with directories typed", async () => {
  const t = setup();
  const results = [];
  for (const k of ["w", "n", "\r"]) {
    const a = t.person.firstUse("/w");
    await t.press(k === "\r" ? { input: "\r", return: true } : k);
    results.push(await a);
  }
  assert.deepEqual(results, [{ choice: "workspace" }, { choice: "nothing" }, {
    choice: "nothing",
  }]);
  const custom = t.person.firstUse("/w");
  await t.press("c");
  await t.press("src/ docs");
  await t.press({ input: "\r", return: true });
  await t.press("src/vendor");
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await custom, {
    choice: "custom",
    trusted: ["src/", "docs"],
    untrusted: ["src/vendor"],
  });
  // Leaving the directory question is leaving the whole question.
  const left = t.person.firstUse("/w");
  await t.press("c");
  await t.press({ input: "", escape: true });
  assert.deepEqual(await left, { choice: "unanswered" });
});

Deno.test("ink person: a person typing on never answers: each key restarts the quiet time", async () => {
  let now = 1_000;
  const screen = new Screen([], () => now);
  const person = new InkPerson(screen, { width: () => 80 });
  const answer = person.approveRun(run);
  await new Promise((r) => setTimeout(r, 0));
  screen.questionDrawn();
  // "please save every file", one key every 90 ms: its v, e, y never answer.
  for (const ch of "please save every file, and say yes") {
    now += 90;
    screen.key({ input: ch });
  }
  assert.ok(screen.question, "typing on answered the question");
  assert.match(screen.questionNote, /without a pause, were ignored/);
  // A key held down (repeat every 33 ms) does not either.
  for (let i = 0; i < 20; i++) {
    now += 33;
    screen.key({ input: "y" });
  }
  assert.ok(screen.question, "a held key answered the question");
  // After a pause as long as the quiet time, one key answers.
  now += ARM_MS + 1;
  screen.key({ input: "n" });
  assert.deepEqual(await answer, { answer: "refuse" });
});

Deno.test("ink person: Esc and Ctrl-C take the safe answer at once, even before the quiet time", async () => {
  const t = setup();
  const write1 = t.person.approveWrite(write);
  await new Promise((r) => setTimeout(r, 0));
  t.screen.key({ input: "", escape: true });
  assert.deepEqual(await write1, { approved: false });
  const read = t.person.quarantinedRead({
    path: "vendor/x.js",
    preview: ["x"],
    size: 1,
    label: TRUSTED_PRIVATE,
  });
  await new Promise((r) => setTimeout(r, 0));
  t.screen.key({ input: "c", ctrl: true });
  assert.equal(await read, "keep");
  assert.equal(t.stops(), 1, "Ctrl-C stops the turn");
});

Deno.test("ink person: the prefix pick has no preselection: Enter alone vouches for nothing", async () => {
  const t = setup();
  const answer = t.person.approveRun(run);
  await t.press("v");
  await t.press("p");
  await t.press({ input: "\r", return: true });
  assert.ok(t.screen.question, "Enter alone picked a prefix");
  assert.match(t.screen.questionNote, /choose one first/);
  await t.press({ input: "", downArrow: true });
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await answer, { answer: "vouch", prefixArgs: 0 });
});

Deno.test("ink person: a question asked while one is up waits for it", async () => {
  const t = setup();
  const first = t.person.approveWrite(shortWrite);
  const second = t.person.approveWrite({ ...shortWrite, path: "b.txt" });
  await new Promise((r) => setTimeout(r, 0));
  assert.match(t.shown(), /Write a\.txt\?|destination: a\.txt/);
  await t.press("y");
  assert.deepEqual(await first, { approved: true });
  await t.press("n");
  assert.deepEqual(await second, { approved: false });
});

Deno.test("ink person: run output decodes each stream apart, and a cut character at the end shows", () => {
  const t = setup();
  const e = new TextEncoder().encode("é\n"); // c3 a9 0a
  t.person.runOutput({ kind: "chunk", stream: "stdout", bytes: e.subarray(0, 1) });
  t.person.runOutput({ kind: "chunk", stream: "stderr", bytes: new TextEncoder().encode("err ") });
  t.person.runOutput({ kind: "chunk", stream: "stdout", bytes: e.subarray(1) });
  t.person.runOutput({ kind: "chunk", stream: "stdout", bytes: new Uint8Array([0x61, 0xe2]) });
  t.person.runOutput({ kind: "end", omitted: 0, tail: new Uint8Array() });
  const shown = t.shown();
  assert.ok(shown.includes("err é"), shown);
  assert.ok(shown.includes("a\uFFFD"), shown);
});

Deno.test("ink person: approving a preview with lines held back takes a second key", async () => {
  const t = setup();
  const unseen = t.person.approveWrite(write);
  await t.press("y");
  assert.ok(t.screen.question, "one key approved lines the person was never shown");
  assert.match(t.screen.question!.title, /2 lines not shown: approve unseen\?/);
  await t.press("y");
  assert.deepEqual(await unseen, { approved: true });
  // `a` there shows them, and the first question comes back; Enter there refuses.
  const shown = t.person.approveWrite(write);
  await t.press("y");
  await t.press("a");
  assert.match(t.shown(), /5/);
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await shown, { approved: false });
});

Deno.test("ink person: read_output shows what fed the run and the exact bytes; one key asserts", async () => {
  const t = setup();
  const request: ReadOutputRequest = {
    ref: "ref:2",
    command: "cat",
    stdin: "processor answer about vendor/tinypad/package.json (ref:1)",
    lines: ["3.1.4⟦U+0009⟧"],
    finalNewline: true,
    size: 7,
    omitted: 0,
    utf8: true,
    label: UNTRUSTED_PRIVATE,
  };
  const one = t.person.approveReadOutput(request);
  await t.press("y");
  assert.deepEqual(await one, { approved: true });
  const shown = t.shown();
  assert.match(shown, /stdin: processor answer about vendor\/tinypad\/package\.json \(ref:1\)/);
  assert.match(shown, /7 bytes, 1 line, a final newline/);
  assert.match(shown, /│ 3\.1\.4⟦U\+0009⟧/);
  // Past the preview's lines, the rest takes a second key; Enter refuses.
  const long = t.person.approveReadOutput({ ...request, lines: ["1", "2", "3", "4", "5"] });
  await t.press("y");
  assert.match(t.screen.question!.title, /2 lines not shown: approve unseen\?/);
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await long, { approved: false });
});

Deno.test("ink person: text then Enter in one read answers a question field with the text", async () => {
  const t = setup();
  const own = t.person.ask({ header: "H", question: "Name?" });
  t.later();
  await t.press("mine\r");
  assert.deepEqual(await own, { kind: "text", text: "mine" });
  // Before the quiet time, the same read is type-ahead and answers nothing.
  const early = t.person.ask({ header: "H", question: "Name?" });
  await new Promise((r) => setTimeout(r, 0));
  t.screen.questionDrawn();
  t.screen.key({ input: "typed\r" });
  assert.ok(t.screen.question, "type-ahead answered a question field");
  await t.press({ input: "", escape: true });
  assert.deepEqual(await early, { kind: "skipped" });
});

/** `grep -n x file | sort | sh -c cat`: two stages, the second a runner with its warning. */
const pipeline: RunApprovalRequest = {
  ...run,
  stages: [
    { program: "grep", resolved: "/usr/bin/grep", args: ["-n", "x", "file"] },
    { program: "sort", resolved: "/usr/bin/sort", args: [] },
    { program: "sh", resolved: "/usr/bin/sh", args: ["-c", "cat"] },
  ],
  display: ["/usr/bin/grep -n x file", "/usr/bin/sort", "/usr/bin/sh -c cat"],
  warnings: ["sh runs other programs or code it is given: whatever it prints …"],
  stageWarnings: [null, null, "sh runs other programs or code it is given: whatever it prints …"],
};

Deno.test("ink person: a pipeline's stages each vouched by a prefix, Esc a stage back", async () => {
  const t = setup();
  const answer = t.person.approveRun(pipeline);
  await t.press("v");
  // A pipeline offers no single prefix, but each stage by one.
  const how = t.screen.question;
  assert.ok(how?.kind === "keys");
  assert.deepEqual(how.choices.map((c) => c.key), ["e", "s", "n"]);
  await t.press("s");
  assert.match(t.shown(), /each stage is vouched on its own/);
  const first = t.screen.question;
  assert.ok(first?.kind === "pick");
  assert.match(first.title, /^Stage 1 of 3: vouch for which prefix\?/);
  // A stage's prefixes run up to all its arguments: any others may follow each.
  assert.deepEqual(first.options, [
    "0: grep …",
    "1: grep -n …",
    "2: grep -n x …",
    "3: grep -n x file …",
  ]);
  await t.press("1");
  await t.press({ input: "\r", return: true });
  const second = t.screen.question;
  assert.ok(second?.kind === "pick");
  assert.match(second.title, /^Stage 2 of 3/);
  assert.deepEqual(second.options, ["0: sort …"]);
  // Esc goes back one stage, whose prefix is picked again.
  await t.press({ input: "", escape: true });
  assert.match(t.screen.question?.title ?? "", /^Stage 1 of 3/);
  await t.press("2");
  await t.press({ input: "\r", return: true });
  await t.press("0");
  await t.press({ input: "\r", return: true });
  // The runner's stage says what vouching it means, before its picker.
  assert.match(t.screen.question?.title ?? "", /^Stage 3 of 3/);
  assert.match(t.shown(), /stage 3:[^\n]*\n[^\n]*note: sh runs other programs or code/);
  await t.press("1");
  await t.press({ input: "\r", return: true });
  assert.deepEqual(await answer, { answer: "vouch", stagePrefixes: [2, 0, 1] });
  assert.match(t.shown(), /stage 1 by the prefix grep -n x …/);

  // Esc at the first stage goes back to "vouch for what", and from there to "run it".
  const back = t.person.approveRun(pipeline);
  await t.press("v");
  await t.press("s");
  await backTwiceThenExactly(t);
  assert.deepEqual(await back, { answer: "vouch" });
  // Ctrl-C in a stage's picker refuses and stops the turn.
  const stopped = t.person.approveRun(pipeline);
  await t.press("v");
  await t.press("s");
  await t.press("0");
  await t.press({ input: "\r", return: true });
  await t.press({ input: "c", ctrl: true });
  assert.deepEqual(await stopped, { answer: "refuse" });
  assert.equal(t.stops(), 1);
  // A single command is not offered the walk: s answers nothing there.
  const single = t.person.approveRun(run);
  await t.press("v");
  assert.deepEqual(
    t.screen.question?.kind === "keys" && t.screen.question.choices.map((c) => c.key),
    [
      "e",
      "p",
      "n",
    ],
  );
  await t.press("s");
  assert.match(t.screen.question?.title ?? "", /^Vouch for what\?/);
  await t.press("n");
  assert.deepEqual(await single, { answer: "refuse" });
});
