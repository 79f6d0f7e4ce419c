import assert from "node:assert/strict";
import { EventView } from "./event_view.ts";
import { Screen } from "./ink/screen.ts";
import type { DriverEvent } from "../util/events.ts";

/** A view over a plain Screen, with the person's notices and the todo list in the open. */
function viewed(todos: { content: string; status: string }[] = []) {
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
  });
  // deno-lint-ignore no-control-regex
  const printed = () => screen.items.map((i) => i.text.replace(/\x1b\[[0-9;]*m/g, ""));
  return { screen, view, notices, remarks, printed, todos, labels: () => labelChanges };
}

const result = (name: string, content: string): DriverEvent => ({
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
    assert.deepEqual(v.printed(), ["  ask_user: refused (rule)", "  ← error: asking has stopped"]);
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
    assert.match(v.screen.activity, /^waiting for the model… \d+s$/);
    v.view.event({ type: "text_delta", text: "Hello " });
    v.view.event({ type: "text_delta", text: "there." });
    assert.equal(v.screen.activity, "", "text ends the wait");
    v.view.event({ type: "assistant_text", text: "Hello there." });
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

Deno.test("event view: a label change is said and redraws the prompt; shown text is framed", () => {
  const v = viewed();
  try {
    v.view.event({ type: "context_label", label: "(U,priv)" });
    assert.equal(v.labels(), 1);
    assert.match(v.printed()[0], /now \(U,priv\): asking stops/);
    v.view.shown({
      ref: "ref:3",
      source: "output of ls",
      lines: 5,
      label: "(U,priv)",
      text: "a\x1b[2Jb",
      omitted: 2,
    });
    const frame = v.printed()[1].split("\n");
    assert.match(frame[0], /^┌ ref:3: output of ls, 5 lines, untrusted \(U,priv\)/);
    assert.equal(frame[1], "│ a⟦U+001B⟧[2Jb");
    assert.equal(frame[2], "└ 2 more lines: /show ref:3");
  } finally {
    v.view.close();
  }
});
