/**
 * What a session remembers besides references: the todo list, the person's answers to
 * ask_user (question by question), and the skills listed at the start of the turn.
 */
import type { SkillEntry } from "../util/skill_file.ts";

export type TodoStatus = "pending" | "in_progress" | "completed";

export interface Todo {
  content: string;
  /** An unrecognised status reads as outstanding work (docs/tools.md#todo_write). */
  status: TodoStatus;
}

export type { SkillEntry };

export class SessionState {
  todos: Todo[] = [];
  /** Keyed by the question text. */
  readonly answers = new Map<string, string>();
  skills: SkillEntry[] = [];
  /** Set for one-shot runs: nobody can be asked. */
  constructor(readonly id: string, readonly oneShot: boolean) {}
}
