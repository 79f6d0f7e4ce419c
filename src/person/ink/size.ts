/**
 * The terminal's size as the kernel reports it (an ioctl, no program run), 80×24 when it
 * reports none. Ink asks `stdout.columns`/`rows` and, when either is 0, falls back to a lookup
 * that may run `tput` or `resize` from the main thread: the screen gives the stream a size
 * from here, never 0, so that fallback is never reached (docs/decisions.md).
 */
export function terminalSize(): { columns: number; rows: number } {
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
