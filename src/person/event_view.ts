/**
 * The session screen's view of what the driver reports (src/util/events.ts): how each event
 * becomes lines on the Ink screen (src/person/ink/screen.ts). The planner's text streams in a
 * live area and is printed for good once it will not change; a tool call is its arguments, wrapped
 * so that no space is lost at a row's edge, and its result is the tool's short summary for the
 * person — `/expand` prints what the planner was shown in full (see {@link EventView.expand}); a
 * rule's decision is held until the result shows whether it says the reason; the
 * todo list is printed when it changes; a line says what the session waits on, and for how long.
 *
 * It is given plain data and a few callbacks, never the session: it decides nothing, and
 * imports only the person's side and `src/util/`.
 */
import pc from "picocolors";
import type { DriverEvent } from "../util/events.ts";
import { escapeForScreen, toolArgumentParts } from "../util/escape.ts";
import { plural } from "../util/plural.ts";
import { SHOWN_MARKER, shownHeading } from "../util/shown.ts";
import { renderMarkdown, splitStable } from "./markdown.ts";
import { quotedWords, wrapParts } from "./text_layout.ts";
import type { Screen } from "./ink/screen.ts";
import type { Person } from "./person.ts";
import { noticeLine } from "./ink/person.ts";

/**
 * The line for a decision a rule or the policy file made. Its reason is left out when the tool's
 * result, shown next, says it already (a refusal is the planner's error message too): each is
 * said once.
 */
export function decisionLine(
  d: { tool: string; decision: string; by: string; reason?: string },
  resultContent?: string,
): string {
  const said = d.reason !== undefined && resultContent?.includes(d.reason) === true;
  const reason = d.reason && !said ? `: ${escapeForScreen(clip(d.reason))}` : "";
  return `  ${escapeForScreen(d.tool)}: ${escapeForScreen(d.decision)} (${d.by}${reason})`;
}

/** `text` on one line, cut to `max` characters. */
export function clip(text: string, max = 200): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** The tool results `/expand` can show, newest last (older ones are forgotten). */
const KEPT_RESULTS = 20;

/** A tool result as `/expand` shows it: what the planner was shown, whole. */
interface KeptResult {
  name: string;
  content: string;
  label: string;
  isError: boolean;
}

/** At most this often the streaming answer is redrawn. */
const STREAM_FRAME_MS = 80;
/** How much of an unfinished block the live area renders (its last part). */
const STREAM_TAIL_CHARS = 8_192;

/** A reference shown to the person: the `shown` event, or what `/show` found. */
export interface ShownFrame {
  ref: string;
  source: string;
  lines: number;
  /** As written, e.g. `(U,priv)`. */
  label: string;
  text: string;
  omitted: number;
  asserted?: string | null;
}

export interface EventViewOptions {
  screen: Screen;
  /** Notices and a processor's remarks are the person's own kinds of line. */
  person: Pick<Person, "notice" | "remark">;
  /** The terminal's width now. */
  width: () => number;
  /**
   * The planner's task list as it is now: its lines for the screen, and a key that changes
   * whenever the list does (the list is printed after a todo_write that changed it).
   */
  todos: () => { key: string; lines: readonly string[] };
  /** The planner context's label changed: the prompt line is drawn again. */
  onContextLabel: () => void;
  /** The clock (ms) for the live line's elapsed time; tests give their own. */
  now?: () => number;
}

/** What the live line says while the model writes its answer. */
const ANSWERING = "answering…";

/** Characters of streamed text per token, for the live line's count (an estimate, said `~`). */
const CHARS_PER_TOKEN = 4;

type Decision = Extract<DriverEvent, { type: "decision" }>;

export class EventView {
  readonly #o: EventViewOptions;
  /** Streamed answer text not yet printed for good (its last, unfinished part). */
  #streamed = "";
  /** Whether any text of the current reply was streamed. */
  #streamedAny = false;
  /** Whether a piece of the current reply was printed: the next starts after a blank line. */
  #printedPiece = false;
  /**
   * The reply's text after a `{{ref:N}}` whose content is not shown yet: printed once it is
   * (the content stands where the marker does), or when anything else comes.
   */
  #heldText: string | null = null;
  /** The references of this reply already shown (a marker again is not waited for). */
  #shownRefs = new Set<string>();
  /** A redraw of the streaming answer that is due, at most one per {@link STREAM_FRAME_MS}. */
  #streamTimer: ReturnType<typeof setTimeout> | undefined;
  /** The key of the todo list last printed. */
  #lastTodos: string;
  /** The `once` keys of the notices said (a notice is dropped when its key was said). */
  readonly #said = new Set<string>();
  /** A rule's decision, held until the tool's result shows whether it says the reason. */
  #held: Decision | null = null;
  /** What the session waits on now (the model, a tool, a command), and since when. */
  #activity: { label: string; since: number; stop: string } | null = null;
  readonly #ticker: ReturnType<typeof setInterval>;
  /** The last tool results, for `/expand`. */
  readonly #results: KeptResult[] = [];
  /** Whether the `/expand` hint was given (once a session). */
  #hinted = false;
  /** The planner context's integrity as last reported: the U line is said when it turns U. */
  #integrity = "T";
  /** The model request under way: since when, and how much text it streamed so far. */
  #request: { since: number; chars: number } | null = null;
  /** A notice of something under way (a retry's wait), shown in place until it is over. */
  #progress: { key: string; text: string } | null = null;
  readonly #now: () => number;

  constructor(options: EventViewOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#lastTodos = options.todos().key;
    this.#ticker = setInterval(() => this.tick(), 1000);
  }

  #print(text: string): void {
    this.#o.screen.print(text);
  }

  /** One event from the driver or the session, onto the screen. */
  event(e: DriverEvent): void {
    // Text held for a reference's content goes out before anything but that content.
    if (
      e.type !== "shown" && e.type !== "text_delta" && e.type !== "assistant_text" &&
      e.type !== "notice"
    ) {
      this.#flushStream(true);
      this.#releaseHeld();
    }
    // A retry's notice stands until what it waited for goes on (or gives up): then its last
    // state is printed once, for good.
    if (e.type !== "notice" || e.progress === undefined) this.#endProgress();
    // Whatever comes next ends the wait (a tool's own events keep its line until its result).
    if (
      e.type !== "model_request" && e.type !== "decision" && e.type !== "notice" &&
      e.type !== "text_delta"
    ) {
      this.setActivity(null);
      this.#request = null;
    }
    this.#flushDecision(e.type === "tool_result" ? e.content : undefined);
    switch (e.type) {
      case "model_request":
        this.#streamedAny = false;
        this.#printedPiece = false;
        this.#shownRefs.clear();
        this.setWaiting(true);
        this.#request = { since: this.#activity!.since, chars: 0 };
        return;
      case "text_delta":
        this.#streamedAny = true;
        this.#streamed += e.text;
        if (this.#request) {
          this.#request.chars += e.text.length;
          // The live line is redrawn with the streamed text's frame, not at every piece.
          const stop = this.#activity?.stop ?? "Esc to interrupt";
          this.#activity = { label: ANSWERING, since: this.#request.since, stop };
          this.#o.screen.activity = this.#activityLine();
        }
        this.#streamSoon();
        return;
      case "assistant_text":
        if (!this.#streamedAny) this.#streamed = e.text;
        this.#flushStream(true);
        return;
      case "tool_call":
        this.#flushStream(true);
        this.setActivity(`${escapeForScreen(e.name)}…`);
        this.#printRows([`→ ${escapeForScreen(e.name)}`, ...toolArgumentParts(e.arguments, 200)]);
        return;
      case "tool_result": {
        this.#results.push({
          name: e.name,
          content: e.content,
          label: e.label,
          isError: e.is_error,
        });
        if (this.#results.length > KEPT_RESULTS) this.#results.shift();
        // The tool's summary is screen-ready (it escaped what it quotes); an error says itself.
        const said = e.summary ?? escapeForScreen(clip(e.content));
        const hint = !this.#hinted ? "  (/expand: in full)" : "";
        this.#hinted = true;
        this.#printRows([`  ${e.is_error ? "✗" : "←"}`, ...quotedWords(said + hint)]);
        if (e.name !== "todo_write") return;
        const todos = this.#o.todos();
        if (todos.key === this.#lastTodos) return;
        this.#lastTodos = todos.key;
        this.#print(
          [pc.bold("todo list:"), ...todos.lines.map((l) => `  ${escapeForScreen(l)}`)].join("\n"),
        );
        return;
      }
      case "decision":
        if (e.by !== "person") this.#held = e;
        return;
      case "remark":
        this.#flushStream(true);
        this.#o.person.remark(e.text);
        return;
      case "shown": {
        this.#flushStream(true);
        this.shown(e);
        this.#shownRefs.add(e.ref);
        // The reply goes on after the content, up to its next marker.
        const rest = this.#heldText;
        this.#heldText = null;
        if (rest !== null) this.#printText(rest);
        return;
      }
      case "notice":
        // A notice made again while it still holds (a skill's problem, the AGENTS.md note) is
        // said once; a happening (a retry, a cut reply) every time.
        if (e.once !== undefined) {
          if (this.#said.has(e.once)) return;
          this.#said.add(e.once);
        }
        if (e.progress !== undefined) {
          this.#showProgress(e.progress, e.text);
          return;
        }
        this.#flushStream(true);
        this.#o.person.notice(e.text);
        return;
      case "context_label": {
        // The prompt line's label says the rest; turning U is said, for what it stops.
        const integrity = e.label.startsWith("(U") ? "U" : "T";
        if (integrity === "U" && this.#integrity !== "U") {
          this.#flushStream(true);
          this.#print(
            pc.red(
              "the planner has seen untrusted text: it cannot ask you now; every command asks",
            ),
          );
        }
        this.#integrity = integrity;
        this.#o.onContextLabel();
        return;
      }
      case "error":
        this.#flushStream(true);
        this.#print(pc.red(`error: ${escapeForScreen(e.message)}`));
        return;
      case "final":
        this.#flushStream(true);
        return;
    }
  }

  /** A reference's content for the person only, framed as untrusted and escaped (§15). */
  shown(s: ShownFrame): void {
    this.#print(
      [
        pc.yellow(`┌ ${shownHeading(s)}`),
        ...escapeForScreen(s.text, true).split("\n").map((l) => `${pc.yellow("│")} ${l}`),
        pc.yellow(s.omitted > 0 ? `└ ${plural(s.omitted, "more line")}: /show ${s.ref}` : "└"),
      ].join("\n"),
    );
  }

  /**
   * `/expand [N]`: the Nth last tool result (1, the last, by default) as the planner was shown
   * it, whole, with its line breaks, escaped and framed; false when there is none.
   */
  expand(back = 1): boolean {
    const r = this.#results.at(-back);
    if (back < 1 || r === undefined) return false;
    const head = `${escapeForScreen(r.name)}${
      r.isError ? " (error)" : ""
    }: what the planner was shown, ${r.label}`;
    this.#print(
      [
        pc.dim(`┌ ${head}`),
        ...escapeForScreen(r.content, true).split("\n").map((l) => `${pc.dim("│")} ${l}`),
        pc.dim("└"),
      ].join("\n"),
    );
    return true;
  }

  /** How many tool results `/expand` can show now. */
  get expandable(): number {
    return this.#results.length;
  }

  /** Screen-ready parts laid out at the width, dim, with no space lost where a row breaks. */
  #printRows(parts: readonly string[]): void {
    this.#print(wrapParts(parts, this.#o.width()).map((r) => pc.dim(r)).join("\n"));
  }

  /** The planner's markdown at the terminal's width, coloured where the terminal has colour. */
  markdown(text: string): string[] {
    return renderMarkdown(text, this.#o.width(), { color: pc.isColorSupported });
  }

  /** The todo list as it is now counts as printed (`/clear` emptied it). */
  todosSeen(): void {
    this.#lastTodos = this.#o.todos().key;
  }

  /**
   * What the session waits on now, or nothing; its clock starts now. `stop` says how to stop it
   * (Esc stops a turn; a shell line stops on Ctrl-C).
   */
  setActivity(label: string | null, stop = "Esc to interrupt"): void {
    this.#activity = label === null ? null : { label, since: this.#now(), stop };
    this.#showActivity();
  }

  setWaiting(on: boolean): void {
    this.setActivity(on ? "waiting for the model…" : null);
  }

  /** A question was answered: a command's elapsed time counts from here, not from the call. */
  questionClosed(): void {
    if (this.#activity) this.#activity = { ...this.#activity, since: this.#now() };
  }

  /** A turn or a shell line ended: nothing is waited on, and everything held is printed. */
  settle(): void {
    this.#flushStream(true);
    this.#releaseHeld();
    this.#endProgress();
    this.#request = null;
    this.setWaiting(false);
    this.#flushDecision();
    this.#flushStream(true);
  }

  close(): void {
    clearInterval(this.#ticker);
    clearTimeout(this.#streamTimer);
  }

  /** The live line's clock moved on (each second): it is drawn again. */
  tick(): void {
    if (this.#activity) this.#showActivity();
  }

  #showActivity(): void {
    this.#o.screen.activity = this.#activityLine();
    this.#o.screen.changed();
  }

  /** The live line: what is waited on, for how long, the answer's tokens so far, and Esc. */
  #activityLine(): string {
    const a = this.#activity;
    if (!a) return "";
    const chars = this.#request?.chars ?? 0;
    const tokens = chars > 0 ? ` · ~${plural(Math.ceil(chars / CHARS_PER_TOKEN), "token")}` : "";
    return `${a.label} ${Math.floor((this.#now() - a.since) / 1000)}s${tokens} · ${a.stop}`;
  }

  /**
   * A retry's notice, in place of the one before it with the same key. A reply that had begun
   * streaming is asked again: what of it is still live is dropped, and what was printed is
   * said to be discarded, so the retried answer is not read as a second one.
   */
  #showProgress(key: string, text: string): void {
    if (this.#streamedAny) {
      clearTimeout(this.#streamTimer);
      this.#streamTimer = undefined;
      this.#streamed = "";
      this.#o.screen.streaming = [];
      this.#streamedAny = false;
      this.#print(pc.yellow("(the reply so far was cut off and is discarded: asking again)"));
      if (this.#request) this.#request.chars = 0;
      if (this.#activity?.label === ANSWERING) {
        this.#activity = { ...this.#activity, label: "waiting for the model…" };
      }
    }
    this.#progress = { key, text };
    this.#o.screen.progress = [noticeLine(text)];
    this.#showActivity();
  }

  /** The notice of what was under way, printed for good in its last state. */
  #endProgress(): void {
    if (!this.#progress) return;
    this.#progress = null;
    this.#print(this.#o.screen.progress.join("\n"));
    this.#o.screen.progress = [];
    this.#o.screen.changed();
  }

  #flushDecision(resultContent?: string): void {
    if (this.#held) this.#print(pc.dim(decisionLine(this.#held, resultContent)));
    this.#held = null;
  }

  /** Prints streamed text that will not change any more; keeps the rest live. */
  #flushStream(all: boolean): void {
    clearTimeout(this.#streamTimer);
    this.#streamTimer = undefined;
    const { stable, rest } = all
      ? { stable: this.#streamed, rest: "" }
      : splitStable(this.#streamed);
    this.#printText(stable);
    this.#streamed = rest;
    // The live area shows the unfinished part's end: rendering all of a long one at every
    // frame would cost the square of its length (it is rendered whole once it is finished).
    const live = all ? "" : (this.#heldText ?? "") + rest;
    this.#o.screen.streaming = live ? this.markdown(live.slice(-STREAM_TAIL_CHARS)) : [];
    this.#o.screen.changed();
  }

  /**
   * Finished text of the reply, printed up to the end of the line of its first marker whose
   * content is still to come; the rest is held until that content is shown.
   */
  #printText(text: string): void {
    if (this.#heldText !== null) {
      this.#heldText += text;
      return;
    }
    for (const m of text.matchAll(SHOWN_MARKER)) {
      if (this.#shownRefs.has(m[1])) continue;
      const end = text.indexOf("\n", m.index + m[0].length);
      const cut = end < 0 ? text.length : end + 1;
      this.#printMarkdown(text.slice(0, cut));
      this.#heldText = text.slice(cut);
      return;
    }
    this.#printMarkdown(text);
  }

  /** Text held for a reference's content that did not come: printed as it is. */
  #releaseHeld(): void {
    const held = this.#heldText;
    this.#heldText = null;
    if (held !== null) this.#printMarkdown(held);
  }

  /** One piece of the reply's markdown; a blank line between pieces, as between blocks. */
  #printMarkdown(text: string): void {
    if (text.trim() === "") return;
    const lines = this.markdown(text);
    if (lines.length === 0) return;
    this.#print([...(this.#printedPiece ? [""] : []), ...lines].join("\n"));
    this.#printedPiece = true;
  }

  /** Text arrived: the screen is redrawn soon, not at every piece (a reply may come in 16 MiB). */
  #streamSoon(): void {
    this.#streamTimer ??= setTimeout(() => this.#flushStream(false), STREAM_FRAME_MS);
  }
}
