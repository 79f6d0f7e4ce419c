import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { fixture } from "../../test/support/person_side.ts";
import { formatLabel, UNTRUSTED_PUBLIC } from "../util/label.ts";
import { normaliseStatus, renderTodos, todoWrite } from "./todo_write.ts";

Deno.test("todo_write: the whole list replaces the previous one", async () => {
  const f = await fixture();
  try {
    await todoWrite.handler({
      todos: [{ content: "a", status: "pending" }, { content: "b", status: "in_progress" }],
    }, f.ctx);
    const out = await todoWrite.handler({ todos: [{ content: "c", status: "completed" }] }, f.ctx);
    assert.deepEqual(f.session.todos, [{ content: "c", status: "completed" }]);
    assert.match(out.content, /1 items \(0 pending, 0 in progress, 1 completed\)/);
    assert.deepEqual(renderTodos(f.session.todos), ["[x] c"]);
  } finally {
    await f.close();
  }
});

Deno.test("todo_write: an unrecognised status reads as outstanding work", async () => {
  const f = await fixture();
  try {
    const out = await todoWrite.handler({
      todos: [
        { content: "a", status: "done" },
        { content: "b", status: "Completed" },
        { content: "c", status: "completed " },
        { content: "d", status: "completed" },
      ],
    }, f.ctx);
    assert.deepEqual(f.session.todos.map((t) => t.status), [
      "pending",
      "pending",
      "pending",
      "completed",
    ]);
    assert.match(out.content, /3 with an unrecognised status read as pending/);
  } finally {
    await f.close();
  }
});

Deno.test("todo_write: nothing but an exact known status ever reads as completed", () => {
  fc.assert(fc.property(fc.string(), (s) => {
    const n = normaliseStatus(s);
    if (s !== "completed") assert.notEqual(n, "completed");
    if (!["pending", "in_progress", "completed"].includes(s)) assert.equal(n, "pending");
  }));
});

Deno.test("todo_write: the result carries the context's label and has no routing", async () => {
  const f = await fixture();
  try {
    f.policy.placeInContext(UNTRUSTED_PUBLIC);
    const out = await todoWrite.handler({ todos: [] }, f.ctx);
    assert.equal(formatLabel(out.label), "(U,pub)");
    assert.deepEqual(Object.keys(todoWrite.routing.shape), []);
    assert.equal(todoWrite.schema.safeParse({ todos: [], path: "x" }).success, false);
  } finally {
    await f.close();
  }
});
