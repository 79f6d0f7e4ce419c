/**
 * What a terminal shows after a PTY run: the bytes the program wrote (test/support/pty.ts),
 * played into a headless xterm.js with the run's resizes at the points they happened. The plain
 * screen text of a run is every byte ever written, erased rows included; this is what stays —
 * rows erased are gone, and a narrower window re-wraps the rows already there, as tmux, xterm.js
 * and most terminals do. A test tool only, pinned here (docs/decisions.md, "Test and bench
 * dependencies").
 */
import xterm from "npm:@xterm/headless@6.0.0";
import type { PtyRun } from "./pty.ts";

/** The rows left on the terminal (scrollback then screen, trailing spaces cut) and the cursor. */
export interface Shown {
  rows: string[];
  /** The cursor's row as an index into `rows`, and its column. */
  cursor: { row: number; column: number };
}

/** Plays `run` into a terminal of the driver's height (40 rows) with room to scroll back. */
export async function shownAfter(run: PtyRun): Promise<Shown> {
  const term = new xterm.Terminal({
    cols: run.columns,
    rows: 40,
    scrollback: 100_000,
    allowProposedApi: true,
  });
  const write = (bytes: Uint8Array) => new Promise<void>((done) => term.write(bytes, done));
  let from = 0;
  for (const { at, columns } of run.resizes) {
    await write(run.bytes.subarray(from, at));
    term.resize(columns, 40);
    from = at;
  }
  await write(run.bytes.subarray(from));
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let i = 0; i < buffer.length; i++) {
    rows.push(buffer.getLine(i)?.translateToString(true) ?? "");
  }
  const cursor = { row: buffer.baseY + buffer.cursorY, column: buffer.cursorX };
  term.dispose();
  return { rows, cursor };
}

/** The rows up to the cursor's, the last blank ones dropped: what a shell prompt would follow. */
export function above(shown: Shown): string[] {
  const rows = shown.rows.slice(0, shown.cursor.row + 1);
  while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
  return rows;
}
