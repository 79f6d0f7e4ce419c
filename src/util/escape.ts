/**
 * Makes text safe to put on the person's screen: control characters, invisible and
 * bidirectional Unicode become visible escapes, so a file name or argument cannot hide what it
 * is (a right-to-left override reversing `txt.exe`, a zero-width space in `pass wd`).
 *
 * @example
 * ```ts
 * escapeForScreen("a\u202Eb\n"); // "a\\u{202E}b\\n"
 * ```
 */

/**
 * Characters that render as nothing, reorder text or break a line unseen: zero-widths, bidi
 * controls, line and paragraph separators, BOM, variation selectors, tags.
 */
const INVISIBLE =
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB\u{1BCA0}-\u{1BCA3}\u{1D173}-\u{1D17A}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u;

export function isInvisible(char: string): boolean {
  return INVISIBLE.test(char);
}

export function isControl(char: string): boolean {
  const c = char.codePointAt(0)!;
  return c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0);
}

/** Whether the text holds anything {@link escapeForScreen} would change (besides `\`). */
export function hasHiddenCharacters(text: string): boolean {
  for (const ch of text) if (isControl(ch) || isInvisible(ch)) return true;
  return false;
}

/** Escapes one line or argument; `keepNewlines` leaves `\n` as a real line break. */
export function escapeForScreen(text: string, keepNewlines = false): string {
  let out = "";
  for (const ch of text) {
    if (ch === "\n" && keepNewlines) out += ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\\") out += "\\\\";
    else if (isControl(ch) || isInvisible(ch)) {
      out += `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`;
    } else out += ch;
  }
  return out;
}

/**
 * An argv stage as the person sees it: every argument escaped and quoted, so spaces show. A
 * quote inside an argument is written `\'`, so `a' 'b` cannot pass for two arguments.
 */
export function formatArgv(argv: readonly string[]): string {
  return argv.map((a) =>
    /^[\w@%+=:,./-]+$/.test(a) ? a : `'${escapeForScreen(a).replaceAll("'", "\\'")}'`
  ).join(" ");
}
