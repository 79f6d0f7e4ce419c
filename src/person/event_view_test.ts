import assert from "node:assert/strict";
import { EventView } from "./event_view.ts";
import { Screen } from "./ink/screen.ts";
import type { DriverEvent } from "../util/events.ts";

/** A view over a plain Screen, with the person's notices and the todo list in the open. */
function viewed(todos: { content: string; status: string }[] = [], now?: () => number) {
  const screen = new Screen();
  const notices: string[] = [];
  const remarks: string[] = [];
  let labelChanges = 0;
  const view = new EventView({
    screen,
    person: { notice: (t) => notices.push(String(t)), remark: (t) => remarks.push(t) },
    width: () => 80,
    todos: () => ({
      key: JSON.stringify(todos),
      lines: todos.map((t) => `[${t.status}] ${t.content}`),
    }),
    onContextLabel: () => labelChanges++,
    now,
  });
  // deno-lint-ignore no-control-regex
  const printed = () => screen.items.map((i) => i.text.replace(/\x1b\[[0-9;]*m/g, ""));
  return { screen, view, notices, remarks, printed, todos, labels: () => labelChanges };
}

const result = (
  name: string,
  content: string,
): Extract<DriverEvent, { type: "tool_result" }> => ({
  type: "tool_result",
  id: "c1",
  name,
  content,
  is_error: false,
  label: "(T,pub)",
});

Deno.test("event view: a notice with a `once` key is said once; one without, every time", () => {
  const v = viewed();
  try {
    const skill = { type: "notice", text: "skills/x: no name; skipped", once: "skill: x" } as const;
    // A happening, said as often as it happens, even in the same words.
    const retry = {
      type: "notice",
      text: "the planner wrote 1 tool call as text; handled as calls",
    } as const;
    for (let i = 0; i < 3; i++) {
      v.view.event(skill);
      v.view.event(retry);
    }
    // Another key with the same words is other news: said.
    v.view.event({ ...skill, once: "skill: y" });
    assert.deepEqual(v.notices, [
      skill.text,
      retry.text,
      retry.text,
      retry.text,
      skill.text,
    ]);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: the todo list is printed after a todo_write that changed it", () => {
  const v = viewed();
  try {
    v.view.event(result("todo_write", "todo list recorded: 0 items"));
    assert.equal(v.printed().filter((t) => t.includes("todo list:")).length, 0);
    v.todos.push({ content: "write hello", status: "pending" });
    v.view.event(result("todo_write", "todo list recorded: 1 items"));
    v.view.event(result("todo_write", "todo list recorded: 1 items"));
    // Another tool's result never prints it.
    v.todos.push({ content: "read it", status: "pending" });
    v.view.event(result("read_file", "ok"));
    const lists = v.printed().filter((t) => t.includes("todo list:"));
    assert.equal(lists.length, 1);
    assert.match(lists[0], /\[pending\] write hello/);
    // `/clear` emptied the list: an empty list after it is not news.
    v.todos.length = 0;
    v.view.todosSeen();
    v.view.event(result("todo_write", "todo list recorded: 0 items"));
    assert.equal(v.printed().filter((t) => t.includes("todo list:")).length, 1);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a rule's decision waits for the result, which may say its reason", () => {
  const v = viewed();
  try {
    v.view.event({
      type: "decision",
      tool: "ask_user",
      decision: "refused",
      by: "rule",
      reason: "asking has stopped",
      routing: {},
      labels: {},
    });
    assert.deepEqual(v.printed(), []);
    v.view.event(result("ask_user", "error: asking has stopped"));
    assert.deepEqual(v.printed(), [
      "  ask_user: refused (rule)",
      "  ← error: asking has stopped  (/expand: in full)",
    ]);
    // The person's own answers are not repeated as decisions.
    v.view.event({
      type: "decision",
      tool: "run",
      decision: "approved",
      by: "person",
      routing: {},
      labels: {},
    });
    v.view.settle();
    assert.equal(v.printed().length, 2);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: streamed text is printed once, whole, when the reply ends", () => {
  const v = viewed();
  try {
    v.view.event({ type: "model_request", turn: 1 });
    assert.match(v.screen.activity, /^waiting for the model… \d+s · Esc to interrupt$/);
    v.view.event({ type: "text_delta", text: "Hello " });
    v.view.event({ type: "text_delta", text: "there." });
    assert.match(v.screen.activity, /^answering… \d+s · ~3 tokens · Esc to interrupt$/);
    v.view.event({ type: "assistant_text", text: "Hello there." });
    assert.equal(v.screen.activity, "", "the reply's end ends the live line");
    v.view.event({ type: "final", result: "", status: "finished", turns: 1, context_label: "" });
    assert.deepEqual(v.printed(), ["Hello there."]);
    assert.deepEqual(v.screen.streaming, []);
    // A reply that was not streamed is printed from its text.
    v.view.event({ type: "model_request", turn: 2 });
    v.view.event({ type: "assistant_text", text: "Unstreamed." });
    assert.deepEqual(v.printed(), ["Hello there.", "Unstreamed."]);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a label change redraws the prompt; only turning U is said", () => {
  const v = viewed();
  try {
    // The prompt line's label says it: a T label is not repeated on a line of its own.
    v.view.event({ type: "context_label", label: "(T,priv)" });
    assert.equal(v.labels(), 1);
    assert.deepEqual(v.printed(), []);
    v.view.event({ type: "context_label", label: "(U,priv)" });
    v.view.event({ type: "context_label", label: "(U,priv)" });
    assert.equal(v.labels(), 3);
    assert.deepEqual(v.printed(), [
      "the planner has seen untrusted text: it cannot ask you now; every command asks",
    ]);
    // After /clear (T again), turning U is news again.
    v.view.event({ type: "context_label", label: "(T,pub)" });
    v.view.event({ type: "context_label", label: "(U,pub)" });
    assert.equal(v.printed().length, 2);
    assert.doesNotMatch(v.printed().join("\n"), /context is now/);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: shown text is framed, in words that follow its label", () => {
  const v = viewed();
  try {
    v.view.shown({
      ref: "ref:3",
      source: "output of ls",
      lines: 5,
      label: "(U,priv)",
      text: "a\x1b[2Jb",
      omitted: 2,
    });
    const frame = v.printed()[0].split("\n");
    assert.match(frame[0], /^┌ ref:3: output of ls, 5 lines, untrusted \(U,priv\)/);
    assert.equal(frame[1], "│ a⟦U+001B⟧[2Jb");
    assert.equal(frame[2], "└ 2 more lines: /show ref:3");
    // A vouched command's output is trusted: its frame says so, never "untrusted (T,priv)".
    v.view.shown({
      ref: "ref:4",
      source: "output of git status",
      lines: 1,
      label: "(T,priv)",
      text: "clean",
      omitted: 0,
    });
    const vouched = v.printed()[1].split("\n")[0];
    assert.match(vouched, /^┌ ref:4: output of git status, 1 line, trusted \(T,priv\)/);
    assert.doesNotMatch(vouched, /untrusted|not to the planner/);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a tool result is its summary; /expand shows what the planner was shown", () => {
  const v = viewed();
  try {
    const planner = "src/app.ts: lines 1-3 of 3\n1\texport function a() {\n2\t  return 1;\n3\t}";
    v.view.event({ ...result("read_file", planner), summary: "read src/app.ts, 3 lines" });
    v.view.event({
      ...result("edit_file", "edited src/app.ts: replaced 1 occurrence"),
      summary: "edited src/app.ts, 1 replacement",
    });
    // An error without a summary says itself, on one line; the hint is given once.
    v.view.event({ ...result("run", "error: stage 1\nwas refused"), is_error: true });
    assert.deepEqual(v.printed(), [
      "  ← read src/app.ts, 3 lines  (/expand: in full)",
      "  ← edited src/app.ts, 1 replacement",
      "  ✗ error: stage 1 was refused",
    ]);
    assert.doesNotMatch(v.printed().join("\n"), /lines 1-3 of 3/);
    // The third last: the read, whole, with its line breaks (tabs laid out as spaces).
    assert.equal(v.view.expand(3), true);
    assert.deepEqual(v.printed()[3].split("\n"), [
      "┌ read_file: what the planner was shown, (T,pub)",
      "│ src/app.ts: lines 1-3 of 3",
      "│ 1    export function a() {",
      "│ 2      return 1;",
      "│ 3    }",
      "└",
    ]);
    assert.equal(v.view.expand(), true);
    assert.match(
      v.printed()[4],
      /^┌ run \(error\): what the planner was shown[^\n]*\n│ error: stage 1\n│ was refused\n└$/,
    );
    assert.equal(v.view.expand(4), false);
    assert.equal(v.view.expandable, 3);
    // What the planner was shown is escaped in the expansion too.
    v.view.event({ ...result("read_file", "a\x1b]52;c;x\x07b"), summary: "read x, 1 line" });
    v.view.expand();
    assert.match(v.printed().at(-1)!, /│ a⟦U\+001B⟧\]52;c;x⟦U\+0007⟧b/);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a tool call wrapped at 80 columns keeps every space of a quoted string", () => {
  const v = viewed();
  try {
    const newText = '  return s.trim().split(".").slice(0, 2).join(".");';
    // The call the README's session showed with "new_text='  return" / "s.trim()…": the space
    // at the row's end was lost (Ink trims it). Rows now break between arguments.
    v.view.event({
      type: "tool_call",
      id: "c1",
      name: "edit_file",
      arguments: { path: "src/version.ts", old_text: "  return s.trim();", new_text: newText },
    });
    assert.deepEqual(v.printed()[0].split("\n"), [
      "→ edit_file path=src/version.ts old_text='  return s.trim();'",
      `new_text='${newText}'`,
    ]);
    // An argument wider than a row is cut; the spaces where it is cut begin the next row.
    const note = `abcdefghi   jk${"l".repeat(62)}`;
    v.view.event({
      type: "tool_call",
      id: "c2",
      name: "edit_file",
      arguments: { path: "src/version.ts", new_text: newText, note },
    });
    const rows = v.printed()[1].split("\n");
    for (const r of rows) {
      assert.ok(r.length <= 80, r);
      assert.doesNotMatch(r, / $/, "a space at a row's end is lost on the screen");
    }
    assert.deepEqual(rows, [
      "→ edit_file path=src/version.ts",
      `new_text='${newText}' note='abcdefghi`,
      `   jk${"l".repeat(62)}'`,
    ]);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: the live line says the time taken, the answer's tokens so far and Esc", () => {
  let now = 50_000;
  const v = viewed([], () => now);
  try {
    v.view.event({ type: "model_request", turn: 1 });
    assert.equal(v.screen.activity, "waiting for the model… 0s · Esc to interrupt");
    now += 3_400;
    v.view.event({ type: "text_delta", text: "x".repeat(40) });
    assert.equal(v.screen.activity, "answering… 3s · ~10 tokens · Esc to interrupt");
    v.view.event({ type: "assistant_text", text: "x".repeat(40) });
    v.view.event({ type: "tool_call", id: "c1", name: "run", arguments: {} });
    now += 2_000;
    v.view.questionClosed();
    now += 5_000;
    v.view.tick();
    assert.equal(v.screen.activity, "run… 5s · Esc to interrupt", "counted from the answer");
    now += 1_000;
    v.view.tick();
    assert.equal(v.screen.activity, "run… 6s · Esc to interrupt", "the clock ticks");
    // A shell line says its own way to stop.
    v.view.setActivity("running ls…", "Ctrl-C to stop");
    assert.equal(v.screen.activity, "running ls… 0s · Ctrl-C to stop");
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a retry's notice is rewritten in place; a partial reply retried is discarded", () => {
  const v = viewed();
  const retry = (n: number) => ({
    type: "notice" as const,
    text: `the model endpoint http://x: cut off; trying again in 1.0 s (try ${n})`,
    progress: "retry http://x",
  });
  try {
    v.view.event({ type: "model_request", turn: 1 });
    v.view.event({ type: "text_delta", text: "Half an ans" });
    v.view.event(retry(2));
    assert.deepEqual(v.screen.streaming, [], "the cut reply is still live");
    assert.match(v.screen.progress.join(""), /\(try 2\)/);
    v.view.event(retry(3));
    assert.equal(v.screen.progress.length, 1);
    assert.match(v.screen.progress[0], /\(try 3\)/);
    assert.deepEqual(v.notices, [], "a retry's notice was printed as a line of its own");
    v.view.event({ type: "text_delta", text: "The whole answer." });
    assert.deepEqual(v.screen.progress, []);
    v.view.event({ type: "assistant_text", text: "The whole answer." });
    const printed = v.printed();
    assert.equal(printed.filter((l) => l.includes("Half an ans")).length, 0);
    assert.equal(printed.filter((l) => /trying again/.test(l)).length, 1);
    assert.match(printed.find((l) => /trying again/.test(l))!, /try 3/);
    assert.ok(printed.some((l) => /cut off and is discarded/.test(l)));
    assert.equal(printed.at(-1), "The whole answer.");
  } finally {
    v.view.close();
  }
});

Deno.test("event view: a {{ref:N}}'s content stands where the marker does, not after the reply", () => {
  const v = viewed();
  try {
    v.view.event({ type: "model_request", turn: 1 });
    v.view.event({
      type: "assistant_text",
      text: "Here it is: {{ref:1}}\nand then {{ref:2}} too.\n\nAfter both.",
    });
    const frame = (ref: string) => ({
      type: "shown" as const,
      ref,
      kind: "output",
      label: "(U,priv)",
      source: "a command's output",
      text: `CONTENT-${ref}`,
      lines: 1,
      omitted: 0,
    });
    assert.equal(v.printed().join("\n").includes("After both"), false, "the rest waits");
    v.view.event(frame("ref:1"));
    v.view.event(frame("ref:2"));
    v.view.event({ type: "final", result: "", status: "finished", turns: 1, context_label: "" });
    const s = v.printed().join("\n");
    const at = (t: string) => s.indexOf(t);
    assert.ok(at("Here it is") < at("CONTENT-ref:1"), s);
    assert.ok(at("CONTENT-ref:1") < at("and then"), s);
    assert.ok(at("and then") < at("CONTENT-ref:2"), s);
    assert.ok(at("CONTENT-ref:2") < at("After both"), s);
    // A marker whose content never comes (an unknown reference) holds nothing back for long.
    v.view.event({ type: "model_request", turn: 2 });
    v.view.event({ type: "assistant_text", text: "See {{ref:9}}\n\nThe end." });
    v.view.event({ type: "notice", text: "{{ref:9}}: ref:9 names no reference of this session" });
    v.view.event({ type: "final", result: "", status: "finished", turns: 2, context_label: "" });
    assert.match(v.printed().join("\n"), /See \{\{ref:9\}\}[\s\S]*The end\./);
  } finally {
    v.view.close();
  }
});

Deno.test("event view: blocks of a streamed reply printed apart keep a blank line between them", async () => {
  const v = viewed();
  try {
    v.view.event({ type: "model_request", turn: 1 });
    v.view.event({ type: "text_delta", text: "First paragraph.\n\nSecond" });
    // The first block is printed on the next frame of the stream (polled, bounded).
    for (let i = 0; i < 100 && v.printed().length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(v.printed(), ["First paragraph."]);
    v.view.event({ type: "text_delta", text: " paragraph." });
    v.view.event({ type: "assistant_text", text: "First paragraph.\n\nSecond paragraph." });
    assert.deepEqual(v.printed(), ["First paragraph.", "\nSecond paragraph."]);
    // A new reply starts without one.
    v.view.event({ type: "model_request", turn: 2 });
    v.view.event({ type: "assistant_text", text: "Next." });
    assert.equal(v.printed().at(-1), "Next.");
  } finally {
    v.view.close();
  }
});
