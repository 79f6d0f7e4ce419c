/**
 * Planner text for the person's screen. Minimal version (a fuller markdown renderer is written
 * alongside): each line escaped and wrapped at word boundaries; `splitStable` says which part of
 * streamed text will not change any more (whole lines), so it can be printed for good.
 */
import { escapeForScreen } from "../util/escape.ts";

/** Breaks one escaped line at spaces to fit `width` columns (a longer word is cut). */
export function wrapLine(line: string, width: number): string[] {
  const w = Math.max(10, width);
  const chars = [...line];
  if (chars.length <= w) return [line];
  const out: string[] = [];
  let rest = chars;
  while (rest.length > w) {
    let cut = rest.lastIndexOf(" ", w);
    if (cut <= 0) cut = w;
    out.push(rest.slice(0, cut).join("").trimEnd());
    rest = rest.slice(rest[cut] === " " ? cut + 1 : cut);
  }
  out.push(rest.join(""));
  return out;
}

export function renderMarkdown(
  text: string,
  width: number,
  _options: { color?: boolean } = {},
): string[] {
  const lines = text.replace(/\r\n/g, "\n").replace(/\t/g, "    ").replace(/\n$/, "").split("\n");
  return lines.flatMap((l) => wrapLine(escapeForScreen(l), width));
}

/** The text up to its last line break is stable; what follows may still grow. */
export function splitStable(text: string): { stable: string; rest: string } {
  const at = text.lastIndexOf("\n");
  return at < 0
    ? { stable: "", rest: text }
    : { stable: text.slice(0, at + 1), rest: text.slice(at + 1) };
}
