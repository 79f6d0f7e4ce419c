/**
 * The session screen's entry point, imported (dynamically) only by an interactive session, so
 * one-shot runs, `--version` and the subcommands never load Ink or React. The Screen and the
 * Person (screen.ts, person.ts) do not need Ink: a session starts with them while Ink loads.
 */
import process from "node:process";
import React from "react";
import { render, renderToString } from "ink";
import stringWidth from "string-width";
import { App, Frame } from "./app.ts";
import type { Screen } from "./screen.ts";

import { terminalSize } from "./size.ts";

export interface Mounted {
  /** Clears the screen and draws the live part again (Ctrl+L). */
  clear(): void;
  /**
   * Unmounts Ink, giving the terminal back (raw mode and bracketed paste off): the finished
   * output stays, the live frame is erased, and the cursor is left where the shell's prompt goes.
   */
  stop(): Promise<void>;
}

/** Draws the screen; `erase` first removes the plain prompt painted before Ink was loaded. */
export function mount(screen: Screen, erase: () => void = () => {}): Mounted {
  const out = process.stdout as unknown as Record<string, unknown>;
  Object.defineProperty(out, "columns", { configurable: true, get: () => terminalSize().columns });
  Object.defineProperty(out, "rows", { configurable: true, get: () => terminalSize().rows });
  // The stream says "resize" only when its own idea of the size changed, and the getters above
  // always give the size now: the signal is heard here instead, and the frame drawn again.
  let columns = terminalSize().columns;
  const resized = () => {
    const before = columns;
    columns = terminalSize().columns;
    // Narrower: the terminal has re-wrapped the frame onto more rows than Ink will erase.
    if (columns < before && !screen.closed) {
      const frame = renderToString(React.createElement(Frame, { screen }), { columns: before });
      process.stdout.write(eraseRewrapped(frame, columns));
    }
    process.stdout.emit("resize");
  };
  Deno.addSignalListener("SIGWINCH", resized);
  erase();
  const instance = render(React.createElement(App, { screen }), {
    exitOnCtrlC: false,
    patchConsole: true,
    // Where the terminal speaks the kitty keyboard protocol, Shift+Enter is told from Enter.
    kittyKeyboard: { mode: "auto" },
  });
  return {
    clear() {
      process.stdout.write("\x1b[2J\x1b[3J\x1b[H");
      instance.clear();
      screen.changed();
    },
    async stop() {
      Deno.removeSignalListener("SIGWINCH", resized);
      // The last finished lines are written with a frame of nothing, then that (one empty row,
      // Ink's frame ends in a newline) is erased: unmount draws no frame that is unchanged.
      screen.closed = true;
      screen.changed();
      await instance.waitUntilRenderFlush();
      instance.clear();
      instance.unmount();
      await instance.waitUntilExit().catch(() => {});
    },
  };
}

/**
 * Erases Ink's last frame (`frame`, laid out at the old width) after the terminal narrowed to
 * `columns`, with the cursor where Ink left it, on the row after the frame.
 *
 * Ink erases a frame line by line, one row each, from the cursor up: it counts the lines it
 * wrote, and on a narrower window it erases those before drawing again. But the terminal has
 * re-wrapped them first (tmux, xterm.js, VTE, iTerm2, kitty: most terminals do), and a line
 * wider than the new width now takes more rows, so the frame's top rows were left on the screen
 * above the new one (a stale prompt line). Here the rows each line takes at the new width are
 * counted and all of them erased; then the cursor goes down again as many rows as Ink will go up,
 * so that Ink's own erase stays within the rows just cleared and none of the finished output
 * above is touched. (On a terminal that does not re-wrap, as many rows of finished output as
 * the re-wrap would have added above the frame are erased: docs/decisions.md.)
 */
export function eraseRewrapped(frame: string, columns: number): string {
  // Ink writes the frame and a newline: the row the cursor is on comes last.
  const lines = `${frame}\n`.split("\n");
  const rows = lines.reduce(
    (n, line) => n + Math.max(1, Math.ceil(stringWidth(line) / Math.max(1, columns))),
    0,
  );
  const move = (n: number, dir: "A" | "B") => n > 0 ? `\x1b[${n}${dir}` : "";
  return `${move(rows - 1, "A")}\r\x1b[J${move(lines.length - 1, "B")}`;
}
