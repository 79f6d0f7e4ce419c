/**
 * A lone word on the command line that is a slip for a subcommand (`bravebot doctr`): in a
 * terminal the person is asked whether they meant it, since cli.md makes any words a prompt and
 * the word would otherwise go to the model as the first message. Nothing here runs outside a
 * terminal (docs/decisions.md).
 */

/**
 * Edit distance with adjacent transpositions (optimal string alignment): `trsut` is one step
 * from `trust`, `doctr` one from `doctor`.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The command a lone word is a near miss for, or null: one edit away (two for names of seven
 * letters or more), ignoring case; an exact name is no slip, nor is anything but letters.
 */
export function nearestCommand(word: string, names: readonly string[]): string | null {
  if (!/^[A-Za-z]{2,20}$/.test(word)) return null;
  const w = word.toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    if (word === name) return null;
    const distance = editDistance(w, name);
    if (distance > (name.length >= 7 ? 2 : 1)) continue;
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best?.name ?? null;
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
