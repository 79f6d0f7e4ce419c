/**
 * A lone word on the command line that is a slip for a subcommand (`bravebot doctr`): in a
 * terminal the person is asked whether they meant it, since docs/cli.md#commands joins the words
 * after the options into the first message, and the word would otherwise go to the model as that
 * message. Nothing here runs outside a terminal (docs/decisions.md).
 */

import { editDistance, nearestName } from "../util/edit_distance.ts";

export { editDistance };

/**
 * The command a lone word is a near miss for, or null ({@link nearestName}); anything but a
 * plain word of letters is no slip.
 */
export function nearestCommand(word: string, names: readonly string[]): string | null {
  if (!/^[A-Za-z]{2,20}$/.test(word)) return null;
  return nearestName(word, names);
}

/**
 * Asks a yes/no question on the terminal with a plain line of input: true for yes (Enter alone
 * included), false for no, null when the input ended (Ctrl-D).
 */
export async function askYesNo(
  question: string,
  io: { write(text: string): void; read(): Promise<string | null> },
): Promise<boolean | null> {
  for (let tries = 0; tries < 3; tries++) {
    io.write(question);
    const line = await io.read();
    if (line === null) return null;
    const answer = line.trim().toLowerCase();
    if (answer === "" || answer === "y" || answer === "yes") return true;
    if (answer === "n" || answer === "no") return false;
  }
  return false;
}

/** One line from standard input (cooked terminal mode: it arrives on Enter), or null at its end. */
export async function readStdinLine(): Promise<string | null> {
  const buf = new Uint8Array(1024);
  const decoder = new TextDecoder();
  let line = "";
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null || n === 0) return line === "" ? null : line;
    line += decoder.decode(buf.subarray(0, n), { stream: true });
    const end = line.indexOf("\n");
    if (end >= 0) return line.slice(0, end);
    if (line.length > 4096) return line;
  }
}
