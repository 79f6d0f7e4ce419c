/**
 * The session screen's entry point, imported (dynamically) only by an interactive session, so
 * one-shot runs, `--version` and the subcommands never load Ink or React.
 */
import process from "node:process";
import React from "react";
import { render } from "ink";
import { App } from "./app.ts";
import type { Screen } from "./screen.ts";

export { Screen } from "./screen.ts";
export { InkPerson } from "./person.ts";

/**
 * The terminal's size as the kernel reports it (an ioctl, no program run), 80×24 when it
 * reports none. Ink asks `stdout.columns`/`rows` and, when either is 0, falls back to a
 * lookup that may run `tput` or `resize` from the main thread: giving the stream a size
 * that is never 0 means that fallback is never reached (docs/decisions.md).
 */
function terminalSize(): { columns: number; rows: number } {
  try {
    const { columns, rows } = Deno.consoleSize();
    return { columns: columns > 0 ? columns : 80, rows: rows > 0 ? rows : 24 };
  } catch {
    return { columns: 80, rows: 24 };
  }
}

export function screenWidth(): number {
  return terminalSize().columns;
}

export interface Mounted {
  /** Clears the screen and draws the live part again (Ctrl+L). */
  clear(): void;
  /** Unmounts Ink, giving the terminal back (raw mode and bracketed paste off). */
  stop(): Promise<void>;
}

export function mount(screen: Screen): Mounted {
  const out = process.stdout as unknown as Record<string, unknown>;
  Object.defineProperty(out, "columns", { configurable: true, get: () => terminalSize().columns });
  Object.defineProperty(out, "rows", { configurable: true, get: () => terminalSize().rows });
  const instance = render(React.createElement(App, { screen }), {
    exitOnCtrlC: false,
    patchConsole: true,
  });
  return {
    clear() {
      process.stdout.write("\x1b[2J\x1b[3J\x1b[H");
      instance.clear();
      screen.changed();
    },
    async stop() {
      instance.unmount();
      await instance.waitUntilExit().catch(() => {});
    },
  };
}
