/**
 * Drives @inquirer/prompts with scripted keystrokes: a fake keyboard (input stream) and a
 * screen that records everything drawn. `answer` waits until the screen shows a pattern, then
 * types — bounded in count and time, never a fixed sleep standing in for a check.
 */
import { PassThrough, Writable } from "node:stream";

export const KEY = {
  up: "\x1b[A",
  down: "\x1b[B",
  enter: "\r",
  space: " ",
  ctrlC: "\x03",
} as const;

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export class FakeTerminal {
  readonly input = new PassThrough();
  #screen = "";
  /** Where in the screen text the next `answer` starts looking. */
  #seen = 0;
  readonly output: Writable;

  constructor() {
    this.output = new Writable({
      write: (chunk, _enc, done) => {
        this.#screen += String(chunk);
        done();
      },
    });
    // Prompts expect a terminal-sized output, and end their piped stream after each prompt:
    // a real terminal outlives that, so this one ignores the end.
    Object.assign(this.output, { columns: 200, rows: 50, isTTY: true, end: () => this.output });
  }

  /** Text written outside prompts (screens of the Person). */
  write = (text: string) => {
    this.#screen += text;
  };

  get screen(): string {
    return this.#screen.replace(ANSI, "");
  }

  /** Waits (bounded) for `pattern` to appear after the last answer, then types `keys`. */
  async answer(pattern: RegExp | string, ...keys: string[]): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const rest = this.#screen.slice(this.#seen).replace(ANSI, "");
      const found = typeof pattern === "string" ? rest.includes(pattern) : pattern.test(rest);
      if (found) {
        this.#seen = this.#screen.length;
        // Let the prompt finish attaching its key listener before typing.
        await new Promise((r) => setTimeout(r, 5));
        for (const k of keys) {
          this.input.write(k);
          await new Promise((r) => setTimeout(r, 1));
        }
        return;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`the screen never showed ${pattern}; it shows:\n${this.screen.slice(-2000)}`);
  }
}
