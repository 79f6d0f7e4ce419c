/**
 * The one writer of stdout and stderr (issue 21): every byte Brave Bot prints outside the
 * session screen goes through here, and here it passes {@link guardTerminal}, the same last wall
 * the screen's text passes. Text is escaped where it is composed (`escapeForScreen`,
 * `formatArgv`: untrusted parts marked, quoted, cut), and whatever reached this point unescaped
 * — a message that quoted a repository's key, an answer printed as it came — still cannot send
 * a control or invisible character to the terminal: it becomes a marker. A line break is the only
 * control that passes; colour codes pass only where a caller says it adds its own
 * (`bravebot doctor`'s ok/warn/FAIL).
 *
 * test/streams_test.ts fails when any other file of `src/` writes to stdout or stderr itself.
 */
import { guardTerminal } from "./escape.ts";

export interface WriteOptions {
  /** Let through the colour codes (SGR) the caller added itself; nothing else. */
  colour?: boolean;
}

const encoder = new TextEncoder();

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(file.writeSync(bytes));
}

/** A progress line is on stderr's terminal, with no line break after it yet. */
let progressOpen = false;

/** Ends an open progress line, so that what follows starts on a line of its own. */
function closeProgress(): void {
  if (!progressOpen) return;
  progressOpen = false;
  writeAll(Deno.stderr, "\n");
}

/** Text to stdout as it is given (no line break added), through the wall. */
export function writeOut(text: string, options: WriteOptions = {}): void {
  closeProgress();
  writeAll(Deno.stdout, guardTerminal(text, options.colour ?? false));
}

/** Text to stderr as it is given (no line break added), through the wall. */
export function writeErr(text: string, options: WriteOptions = {}): void {
  closeProgress();
  writeAll(Deno.stderr, guardTerminal(text, options.colour ?? false));
}

/**
 * One line to stderr that the next progress line replaces (a retry's countdown, issue 25). On a
 * terminal it is written in place of the one before — a carriage return and CSI 2K, constants,
 * then the line, cut to the terminal's width so that no wrapped row is left behind — and
 * whatever is written next starts on a fresh line below it, so the last one stays as the record.
 * On a pipe or a file each is a line of its own: a log keeps them all.
 */
export function progressErr(line: string): void {
  if (!Deno.stderr.isTerminal()) {
    printErr(line);
    return;
  }
  const text = [...guardTerminal(line, false).replace(/\n/g, " ")];
  const width = terminalColumns() - 1;
  const shown = text.length > width
    ? `${text.slice(0, Math.max(0, width - 1)).join("")}…`
    : text.join("");
  writeAll(Deno.stderr, `\r\x1b[2K${shown}`);
  progressOpen = true;
}

function terminalColumns(): number {
  try {
    return Math.max(20, Deno.consoleSize().columns);
  } catch {
    return 80;
  }
}

/**
 * How wide text written to stdout (or stderr) may be: the terminal's width when that stream is a
 * terminal, 80 columns on a pipe or a file (what a log or a test reads the same way every time).
 */
export function columnsFor(stream: "out" | "err"): number {
  const isTerminal = stream === "out" ? Deno.stdout.isTerminal() : Deno.stderr.isTerminal();
  return isTerminal ? terminalColumns() : 80;
}

/** One line to stdout. */
export function printOut(line: string, options?: WriteOptions): void {
  writeOut(`${line}\n`, options);
}

/** One line to stderr. */
export function printErr(line: string, options?: WriteOptions): void {
  writeErr(`${line}\n`, options);
}

/**
 * Erases the line the cursor is on (carriage return, then CSI 2K): the early prompt's, before
 * the screen or a message takes its place. The one control sequence written here, a constant.
 */
export function eraseLine(): void {
  writeAll(Deno.stdout, "\r\x1b[2K");
}
