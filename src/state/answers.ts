/**
 * The person's answers to ask_user, kept for the whole session (docs/tools.md#ask_user: each is
 * "remembered for the session by its question"), including across a resume: one JSON line per
 * answered question in the session folder, beside the transcript.
 */
import { join } from "node:path";
import { appendJsonLine, readJsonLines } from "./jsonfile.ts";

export const ANSWERS_FILE = "answers.jsonl";

export class AnswerStore {
  readonly #path: string;
  readonly #saved = new Set<string>();

  constructor(sessionDir: string) {
    this.#path = join(sessionDir, ANSWERS_FILE);
  }

  /** Puts the stored answers into `answers`; returns problems with the file, if any. */
  async load(answers: Map<string, string>): Promise<string[]> {
    const { rows, problems } = await readJsonLines(this.#path);
    for (const row of rows) {
      const r = row as { question?: unknown; answer?: unknown };
      if (typeof r?.question === "string" && typeof r.answer === "string") {
        answers.set(r.question, r.answer);
        this.#saved.add(r.question);
      } else problems.push(`${this.#path}: a line is not an answer (skipped)`);
    }
    return problems;
  }

  /** Appends the answers not stored yet. */
  async save(answers: ReadonlyMap<string, string>): Promise<void> {
    for (const [question, answer] of answers) {
      if (this.#saved.has(question)) continue;
      await appendJsonLine(this.#path, { question, answer });
      this.#saved.add(question);
    }
  }
}
