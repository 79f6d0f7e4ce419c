/**
 * What the session's screen shows, kept outside React so the session and the Person can drive
 * it with plain calls: finished output (printed once, for good, in Ink's `<Static>`), a live
 * area (the answer still streaming, a command's output as it comes), the input box, the queue
 * of messages typed ahead, a status line, and at most one question (an approval) at a time.
 *
 * Keys reach either the question or the input box, never both. A question takes no key until it
 * has been drawn (the component calls {@link Screen.questionDrawn}) and then {@link ARM_MS} have
 * passed with no key at all: a key sooner was typed with something else in mind (type-ahead, a
 * held key), is dropped with a note, and starts the quiet time again, so a person typing on
 * never answers one. Esc and Ctrl-C always answer, with the safe answer. A paste never answers.
 */
import { applyKey, type EditorState, emptyEditor, type KeyPress, paste } from "./editor.ts";

/**
 * How long a question must be on screen with no key pressed before it takes one: longer than
 * the gaps of ordinary typing and of key repeat, shorter than anyone reads a question.
 */
export const ARM_MS = 400;

export interface Choice<T> {
  key: string;
  label: string;
  value: T;
}

export type Question =
  | {
    kind: "keys";
    title: string;
    choices: Choice<string>[];
    /** What Enter alone, Esc and Ctrl-C answer (Enter: undefined means it does nothing). */
    enter?: string;
    escape: string;
    interrupt: string;
    resolve: (value: string, interrupted: boolean) => void;
  }
  | {
    kind: "text";
    title: string;
    text: string;
    /** What Esc / Ctrl-C give (null: nothing typed). */
    resolve: (value: string | null, interrupted: boolean) => void;
  }
  | {
    kind: "pick";
    title: string;
    options: string[];
    at: number;
    /** The digit that picks `options[0]` (1 for numbered answers, 0 for a count). */
    digitBase: number;
    /** Multiple choice: the marked options; null for a single choice. */
    marked: Set<number> | null;
    resolve: (value: number[] | null, interrupted: boolean) => void;
  };

export interface ScreenHooks {
  /** Esc while busy. */
  onInterrupt(): void;
  /** Ctrl-C while busy (or at a question: after the safe answer). */
  onStop(): void;
  /** A message submitted (while idle or busy); `shown`: as the box showed it (a paste collapsed). */
  onSubmit(text: string, shown?: string): void;
  onExit(): void;
  onClearScreen(): void;
  /** A question was answered: what the session waits on next starts now (a run's clock). */
  onQuestionClosed?(): void;
}

let nextId = 0;

export class Screen {
  /** Finished output: each item is printed once, above everything else. */
  items: { id: number; text: string }[] = [];
  /** A running command's output as it comes (the Person's runOutput). */
  live: string[] = [];
  /** The answer still streaming: its last, unfinished lines. */
  streaming: string[] = [];
  /** What is happening now ("waiting for the model… 3s"), or nothing. */
  activity = "";
  /** A notice of something under way (a retry's wait), rewritten in place as it goes. */
  progress: string[] = [];
  editor: EditorState;
  busy = false;
  queued: string[] = [];
  question: Question | null = null;
  /** A note about the question (keys dropped, a paste ignored). */
  questionNote = "";
  promptLabel = "›";
  status = "";
  commands: readonly string[] = [];
  /**
   * The session is over: only the finished output is drawn, so the live frame (prompt, status
   * line) can be erased for good and the shell's prompt follows the last finished line.
   */
  closed = false;
  hooks: ScreenHooks | null = null;
  #armedAt = 0;
  #listeners = new Set<() => void>();
  #version = 0;

  readonly #now: () => number;

  constructor(history: readonly string[] = [], now: () => number = Date.now) {
    this.editor = emptyEditor(history);
    this.#now = now;
  }

  subscribe = (listener: () => void): () => void => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  version = (): number => this.#version;

  changed(): void {
    this.#version++;
    for (const l of this.#listeners) l();
  }

  /** Prints finished text (lines may be many; a trailing newline is an empty line). */
  print(text: string): void {
    const t = text;
    // A new array each time: Ink's <Static> notices new items by the array changing.
    this.items = [...this.items, { id: nextId++, text: t }];
    this.changed();
  }

  setLive(lines: string[]): void {
    this.live = lines;
    this.changed();
  }

  /** Questions asked while one is up: each is put up when the one before is answered. */
  #waiting: Question[] = [];

  /** Puts a question up (or after the one that is up); resolves through its own `resolve`. */
  ask(q: Question): void {
    if (this.question) {
      this.#waiting.push(q);
      return;
    }
    this.question = q;
    this.questionNote = "";
    this.#armedAt = Infinity;
    this.changed();
  }

  /** The question is on the terminal now: it takes keys from {@link ARM_MS} on. */
  questionDrawn(): void {
    if (this.question && this.#armedAt === Infinity) this.#armedAt = this.#now() + ARM_MS;
  }

  #close(): void {
    this.question = null;
    this.questionNote = "";
    this.hooks?.onQuestionClosed?.();
    const next = this.#waiting.shift();
    if (next) this.ask(next);
    else this.changed();
  }

  /** A paste: into the input box, or ignored with a note while a question is up. */
  paste(text: string): void {
    const q = this.question;
    if (q) {
      if (q.kind === "text" && this.#now() >= this.#armedAt) {
        q.text += text.replace(/[\r\n]+/g, " ");
      } else {
        this.questionNote = "(a paste does not answer a question: it was ignored; press a key)";
      }
      this.changed();
      return;
    }
    this.editor = paste(this.editor, text);
    this.changed();
  }

  key(k: KeyPress): void {
    if (this.question) {
      const q = this.question;
      // The safe answer needs no quiet time: Esc and Ctrl-C are never an approval.
      const safe = k.escape || (k.ctrl && k.input === "c");
      if (!safe && this.#now() < this.#armedAt) {
        // Typed before the question appeared, or with no pause since: ignored, and the quiet
        // time starts again (once the question is drawn).
        if (this.#armedAt !== Infinity) this.#armedAt = this.#now() + ARM_MS;
        this.questionNote =
          "(keys typed before this question appeared, or without a pause, were ignored: answer it now)";
        this.changed();
        return;
      }
      this.#questionKey(q, k);
      return;
    }
    const [editor, action] = applyKey(this.editor, k, {
      busy: this.busy,
      commands: this.commands,
      now: this.#now(),
    });
    this.editor = editor;
    this.changed();
    const h = this.hooks;
    switch (action.kind) {
      case "submit":
        h?.onSubmit(action.text, action.shown);
        return;
      case "interrupt":
        h?.onInterrupt();
        return;
      case "stop":
        h?.onStop();
        return;
      case "exit":
        h?.onExit();
        return;
      case "clear-screen":
        h?.onClearScreen();
        return;
      case "hint-exit":
        this.print("(Ctrl-C again within 2 seconds, Ctrl-D or /exit to leave)");
        return;
    }
  }

  #questionKey(q: Question, k: KeyPress): void {
    const ctrlC = k.ctrl && k.input === "c";
    if (q.kind === "keys") {
      if (ctrlC) return this.#answer(() => q.resolve(q.interrupt, true), true);
      if (k.escape) return this.#answer(() => q.resolve(q.escape, false));
      if (k.return) {
        if (q.enter !== undefined) this.#answer(() => q.resolve(q.enter!, false));
        return;
      }
      if (k.input.length !== 1 || k.ctrl || k.meta) {
        if (k.input.length > 1) {
          this.questionNote = "(several keys at once do not answer a question: press one)";
          this.changed();
        }
        return;
      }
      const choice = q.choices.find((c) => c.key === k.input.toLowerCase());
      if (choice) this.#answer(() => q.resolve(choice.value, false));
      return;
    }
    if (q.kind === "text") {
      if (ctrlC) return this.#answer(() => q.resolve(null, true), true);
      if (k.escape) return this.#answer(() => q.resolve(null, false));
      if (k.return) return this.#answer(() => q.resolve(q.text, false));
      if (k.backspace || k.delete) q.text = [...q.text].slice(0, -1).join("");
      else if (!k.ctrl && !k.meta && k.input) {
        // Keys that came in one read: the text, then an Enter in it answers with that text.
        const enter = k.input.search(/[\r\n]/);
        const typed = enter < 0 ? k.input : k.input.slice(0, enter);
        // deno-lint-ignore no-control-regex
        q.text += typed.replace(/[\u0000-\u001f\u007f]/g, "");
        if (enter >= 0) return this.#answer(() => q.resolve(q.text, false));
      }
      this.changed();
      return;
    }
    if (ctrlC) return this.#answer(() => q.resolve(null, true), true);
    if (k.escape) return this.#answer(() => q.resolve(null, false));
    const n = q.options.length;
    // Nothing is chosen until a digit or an arrow chose it (`at` -1): Enter alone picks nothing.
    if (k.upArrow) q.at = q.at < 0 ? n - 1 : (q.at + n - 1) % n;
    else if (k.downArrow) q.at = q.at < 0 ? 0 : (q.at + 1) % n;
    else if (/^[0-9]$/.test(k.input) && Number(k.input) - q.digitBase in q.options) {
      q.at = Number(k.input) - q.digitBase;
      if (q.marked) toggle(q.marked, q.at);
    } else if (k.input === " " && q.marked && q.at >= 0) toggle(q.marked, q.at);
    else if (k.return) {
      if (!q.marked && q.at < 0) {
        this.questionNote = "(choose one first: a digit or the arrows, then Enter; Esc refuses)";
        this.changed();
        return;
      }
      const chosen = q.marked ? [...q.marked].sort((a, b) => a - b) : [q.at];
      return this.#answer(() => q.resolve(chosen, false));
    }
    this.changed();
  }

  #answer(resolve: () => void, interrupted = false): void {
    this.#close();
    resolve();
    if (interrupted) this.hooks?.onStop();
  }
}

function toggle(set: Set<number>, i: number): void {
  if (set.has(i)) set.delete(i);
  else set.add(i);
}
