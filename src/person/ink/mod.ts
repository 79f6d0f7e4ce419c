/**
 * The session screen's entry point, imported (dynamically) only by an interactive session, so
 * one-shot runs, `--version` and the subcommands never load Ink or React. The Screen and the
 * Person (screen.ts, person.ts) do not need Ink: a session starts with them while Ink loads.
 */
import process from "node:process";
import React from "react";
import { render } from "ink";
import { App } from "./app.ts";
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
  const resized = () => process.stdout.emit("resize");
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
