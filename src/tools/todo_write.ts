/**
 * todo_write (docs/tools.md#todo_write): the planner's task list, the whole list every time.
 * Nothing is touched, so there is no routing; the list is the planner's own words and carries its
 * context's label.
 */
import { z } from "zod";
import { defineTool, shown } from "./tool.ts";
import type { Todo, TodoStatus } from "../policy/api.ts";
import { plural } from "../util/plural.ts";

const STATUSES: readonly TodoStatus[] = ["pending", "in_progress", "completed"];

const routing = z.strictObject({});
const content = z.strictObject({
  todos: z.array(
    z.strictObject({
      content: z.string().min(1).max(2000),
      status: z.string().describe("pending, in_progress or completed"),
    }),
  ).max(100).describe("the complete list; it replaces the previous one"),
});

/** An unrecognised status reads as outstanding work: a task is never silently marked done. */
export function normaliseStatus(status: string): TodoStatus {
  return isStatus(status) ? status : "pending";
}

/** Statuses are matched exactly, like every other name the planner sends. */
function isStatus(status: string): status is TodoStatus {
  return (STATUSES as readonly string[]).includes(status);
}

/** Screen lines for the list: one marker per status, so the person sees progress at a glance. */
export function renderTodos(todos: readonly Todo[]): string[] {
  if (todos.length === 0) return ["(no tasks)"];
  const mark = { pending: "[ ]", in_progress: "[>]", completed: "[x]" } as const;
  return todos.map((t) => `${mark[t.status]} ${t.content}`);
}

export const todoWrite = defineTool({
  name: "todo_write",
  description:
    "Record your task list: the complete list every time (it replaces the previous one), " +
    "each {content, status} with status pending, in_progress or completed.",
  routing,
  content,
  handler(args, ctx) {
    const unknown = args.todos.filter((t) => !isStatus(t.status));
    ctx.session.todos = args.todos.map((t) => ({
      content: t.content,
      status: normaliseStatus(t.status),
    }));
    const count = (s: TodoStatus) => ctx.session.todos.filter((t) => t.status === s).length;
    let text = `todo list recorded: ${ctx.session.todos.length} items (` +
      `${count("pending")} pending, ${count("in_progress")} in progress, ` +
      `${count("completed")} completed)`;
    if (unknown.length > 0) {
      text += `; ${unknown.length} with an unrecognised status read as pending ` +
        `(use pending, in_progress or completed)`;
    }
    // The planner is told only counts, which carry nothing new: the context's label is unchanged.
    const summary = `todo list: ${plural(ctx.session.todos.length, "task")}, ${
      count("completed")
    } done`;
    return Promise.resolve(shown(text, ctx.decide.todoLabel(), summary));
  },
});
