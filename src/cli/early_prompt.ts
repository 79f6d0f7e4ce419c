/**
 * A plain prompt painted the moment a session starts, before the session's modules and Ink are
 * loaded (a few dozen milliseconds instead of a few hundred): the person may start typing at
 * once, and the screen takes over what was typed. The screen erases it when it is drawn; an
 * error before that erases it too, so the message starts on a clean line.
 */
import { basename, resolve } from "node:path";
import { escapeForScreen } from "../util/escape.ts";
import { eraseLine, writeOut } from "../util/output.ts";

export interface EarlyPrompt {
  /** The prompt as painted (without the trailing space), for the screen to keep showing. */
  text: string;
  erase(): void;
}

export function paintEarlyPrompt(workspace: string | undefined): EarlyPrompt {
  const text = `bravebot ${escapeForScreen(basename(resolve(workspace ?? ".")))} ›`;
  writeOut(`${text} `);
  let erased = false;
  return {
    text,
    erase() {
      if (!erased) eraseLine();
      erased = true;
    },
  };
}
