/**
 * A diff for the person's screen. Minimal version (a fuller one, with changed words
 * highlighted, is written alongside): each line escaped, coloured by kind, wrapped at `width`.
 */
import pc from "picocolors";
import { escapeForScreen } from "../util/escape.ts";
import { wrapLine } from "./markdown.ts";

export function renderDiff(
  preview: string,
  width: number,
  options: { color?: boolean } = {},
): string[] {
  const colour = options.color ?? pc.isColorSupported;
  const out: string[] = [];
  for (const raw of preview.replace(/\n$/, "").split("\n")) {
    const line = escapeForScreen(raw);
    const style = !colour
      ? (l: string) => l
      : raw.startsWith("+") && !raw.startsWith("+++")
      ? pc.green
      : raw.startsWith("-") && !raw.startsWith("---")
      ? pc.red
      : raw.startsWith("@@")
      ? pc.cyan
      : (l: string) => l;
    for (const part of wrapLine(line, width)) out.push(style(part));
  }
  return out;
}
