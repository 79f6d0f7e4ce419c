/**
 * Makes text safe to put on the person's screen while showing its exact bytes: a control or
 * invisible character becomes a marker naming its code point, `⟦U+202E⟧`, so a file name or
 * argument cannot hide what it is (a right-to-left override reversing `txt.exe`, a zero-width
 * space in `pass wd`) and no escape sequence (CSI colours, OSC 52 clipboard writes, OSC 8
 * links) ever reaches the terminal. Every other character, backslashes included, is shown as it
 * is. A literal `⟦` is itself a marker, so every `⟦` on the screen opens a marker and a text that
 * looks like one cannot pass for one, with or without colour.
 *
 * Tab: a marker in text escaped as one line (a name, an argument, each line of a diff or a
 * preview: there a tab against spaces is a question of boundaries or of exact bytes), four spaces
 * in flowing multi-line text (`keepNewlines`: the planner's answer, command output), where it is
 * layout. See docs/decisions.md.
 *
 * The functions here return plain markers (for the planner, for measuring widths, for tests);
 * {@link styleMarkers} styles them for a terminal with colour, and {@link escapeStyled} does both.
 *
 * @example
 * ```ts
 * escapeForScreen("a\u202Eb\n");          // "a⟦U+202E⟧b⟦U+000A⟧"
 * escapeForScreen("const re = /\\d+/;");   // unchanged
 * formatArgv(["rm", "a b", ""]);          // "rm 'a b' ''"
 * ```
 */

/** Opens and closes a marker. */
export const MARKER_OPEN = "\u27E6";
export const MARKER_CLOSE = "\u27E7";

/**
 * Characters that render as nothing, reorder text or break a line unseen: zero-widths, bidi
 * controls, line and paragraph separators, BOM, variation selectors, tags, every other format
 * character (Cf), and lone surrogates; and the spaces that are not U+0020 (no-break, en, em,
 * thin, ideographic, the braille blank), which pass for one in code, argv and diffs.
 */
const INVISIBLE_CLASS =
  "\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000\\u2800\\p{Cf}\\p{Cs}\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF9-\\uFFFB\\u{1BCA0}-\\u{1BCA3}\\u{1D173}-\\u{1D17A}\\u{E0000}-\\u{E007F}\\u{E0100}-\\u{E01EF}";
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`, "u");
/**
 * Every control (C0, DEL, C1), bidi and invisible character: what a marker stands for on the
 * screen and a `\u` escape in JSON ({@link isControl} or {@link isInvisible}).
 */
const HIDDEN_CLASS = `\\x00-\\x1f\\x7f-\\x9f${INVISIBLE_CLASS}`;
const HIDDEN = new RegExp(`[${HIDDEN_CLASS}]`, "gu");
/** Everything shown as a marker: the hidden characters and `⟦` itself. */
const MARKED = new RegExp(`[${HIDDEN_CLASS}\\u27E6]`, "gu");
/** Text with nothing to mark, decided at once: printable ASCII (and newlines, when kept). */
const PLAIN = /^[\x20-\x7e]*$/;
const PLAIN_LINES = /^[\x20-\x7e\n]*$/;

export function isInvisible(char: string): boolean {
  return INVISIBLE.test(char);
}

export function isControl(char: string): boolean {
  const c = char.codePointAt(0)!;
  return c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0);
}

/** The marker for one character: `⟦U+` its code point in upper-case hex (4 digits at least) `⟧`. */
export function marker(char: string): string {
  const hex = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return `${MARKER_OPEN}U+${hex}${MARKER_CLOSE}`;
}

/** Every marker in escaped text (each `⟦` in it opens one). */
export const MARKER_PATTERN = /\u27E6U\+[0-9A-F]{4,6}\u27E7/g;

/** Whether the text holds anything {@link escapeForScreen} would show as a marker. */
export function hasHiddenCharacters(text: string): boolean {
  MARKED.lastIndex = 0;
  return !PLAIN.test(text) && MARKED.test(text);
}

/**
 * Escapes one line or argument, with plain markers; `keepNewlines` leaves `\n` as a real line
 * break and shows a tab as four spaces (multi-line text).
 */
export function escapeForScreen(text: string, keepNewlines = false): string {
  if ((keepNewlines ? PLAIN_LINES : PLAIN).test(text)) return text;
  return text.replace(
    MARKED,
    (ch) => keepNewlines && ch === "\n" ? ch : keepNewlines && ch === "\t" ? "    " : marker(ch),
  );
}

/** Our own colour codes (SGR), or any one hidden character. */
const HIDDEN_OR_COLOUR = new RegExp(`\\x1b\\[[0-9;]*m|[${HIDDEN_CLASS}]`, "gu");

/**
 * The last wall where text meets the terminal, for every stream a person reads: the session
 * screen hands Ink nothing else, and stdout and stderr are written only through
 * `util/output.ts`, which calls it. Any control or invisible character that reached this point
 * unescaped becomes a marker (a line break stays one); text escaped on its way here is
 * unchanged (a `⟦` is left as it is, since escaped text is full of them). `ownColour`: the
 * colour codes (SGR) the screen itself adds pass; the plain streams add none, so there none do.
 */
export function guardTerminal(text: string, ownColour = true): string {
  if (PLAIN_LINES.test(text)) return text;
  return text.replace(
    ownColour ? HIDDEN_OR_COLOUR : HIDDEN,
    (m) => m === "\n" || (m.length > 1 && m.charCodeAt(0) === 0x1b) ? m : marker(m),
  );
}

/**
 * `JSON.stringify` (on one line), with every control, bidi and invisible character — the ones
 * {@link escapeForScreen} marks — written as a `\uXXXX` escape (a pair for one past U+FFFF):
 * the parsed value is the same, and printing the text is safe (docs/cli.md#output-formats, `json`
 * and `stream-json`). `JSON.stringify` itself escapes only C0 controls and lone surrogates. The
 * pass over the serialized text is sound because outside its strings JSON holds only ASCII
 * punctuation, digits and `true`/`false`/`null`: every character it changes is inside a string.
 */
export function safeJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined || PLAIN.test(json)) return json;
  return json.replace(HIDDEN, (ch) => {
    let out = "";
    for (let i = 0; i < ch.length; i++) {
      out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    return out;
  });
}

/** Arguments shown bare: nothing in them needs a quote to be read back. */
const BARE = /^[\w@%+=:,./-]+$/;

/** One argument: bare when `bare` allows, else quoted with markers and a quote as a marker. */
function quoteArgument(a: string, bare = BARE): string {
  return bare.test(a) ? a : `'${escapeForScreen(a).replaceAll("'", marker("'"))}'`;
}

/**
 * An argv stage as the person sees it, with plain markers: an argument of ordinary characters
 * bare, any other in single quotes with {@link escapeForScreen}'s markers, and a quote inside
 * it a marker too (`⟦U+0027⟧`), so a quoted argument runs to the next `'` and `a' 'b` cannot
 * pass for two arguments. Backslashes are shown as they are; an empty argument is `''`.
 */
export function formatArgv(argv: readonly string[]): string {
  return argv.map((a) => quoteArgument(a)).join(" ");
}

/** Strings shown bare among a tool call's arguments: no `=` or `,`, which separate there. */
const BARE_VALUE = /^[\w@%+:./-]+$/;

function formatValue(v: unknown): string {
  if (typeof v === "string") return quoteArgument(v, BARE_VALUE);
  if (Array.isArray(v)) return `[${v.map(formatValue).join(", ")}]`;
  if (v !== null && typeof v === "object") return `{${formatFields(v).join(", ")}}`;
  return escapeForScreen(String(JSON.stringify(v) ?? v));
}

function formatFields(o: object): string[] {
  return Object.entries(o).map(([k, v]) => `${quoteArgument(k, BARE_VALUE)}=${formatValue(v)}`);
}

/**
 * A tool call's arguments on one line for the person: `key=value …`, each string quoted and
 * escaped as {@link formatArgv} does — so code shows its backslashes as they are, not doubled
 * as JSON writes them — lists `[…]`, objects `{…}`, numbers and booleans as they are. Arguments
 * that were not JSON are the planner's text, escaped. Longer than `max` characters, the line is
 * cut (never inside a marker) and ends with `…`.
 */
export function formatToolArguments(args: unknown, max = Infinity): string {
  return toolArgumentParts(args, max).join(" ");
}

/**
 * {@link formatToolArguments}'s line as its parts (`key=value` each, or the one raw string), so
 * a screen can break the line between arguments: joined with one space, they are that line. The
 * cut, when there is one, falls in the last part, which ends with `…`.
 */
export function toolArgumentParts(args: unknown, max = Infinity): string[] {
  const parts = typeof args === "string"
    ? [escapeForScreen(args)]
    : args !== null && typeof args === "object" && !Array.isArray(args)
    ? formatFields(args)
    : [formatValue(args)];
  const line = parts.join(" ");
  if (line.length <= max) return parts;
  let cut = line.slice(0, max);
  if (cut.lastIndexOf(MARKER_OPEN) > cut.lastIndexOf(MARKER_CLOSE)) {
    cut = cut.slice(0, cut.lastIndexOf(MARKER_OPEN));
  }
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  // The parts the cut keeps; the one it falls in (or after) ends with the ellipsis.
  const out: string[] = [];
  let at = 0;
  for (const p of parts) {
    if (at + p.length >= cut.length) {
      out.push(`${p.slice(0, cut.length - at)}…`);
      return out;
    }
    out.push(p);
    at += p.length + 1;
  }
  return [...out, "…"];
}

/** The one way to make a {@link ScreenText}, kept in this module (set by its static block). */
let make: (escaped: string) => ScreenText;

/**
 * Text for the person's screen that was escaped where it was put together: every part from
 * outside went through {@link escapeForScreen} or {@link formatArgv} on its way in, so a screen
 * shows it as it is (still through {@link guardTerminal}, the last wall). A screen escapes the
 * plain strings it is handed (a notice, by the Person seam's rule), and escaping a marker again
 * would show `⟦U+27E6⟧U+0027⟧` for formatArgv's quote; this type says it was done. Made only by
 * {@link screenText} and {@link argvText}, which escape every raw part themselves, so a string
 * from outside cannot pass for one.
 */
export class ScreenText {
  readonly #text: string;
  private constructor(text: string) {
    this.#text = text;
  }
  /** The escaped text. */
  get text(): string {
    return this.#text;
  }
  /** Put into a plain string, it is a plain string again: escaped again by a screen (never less). */
  toString(): string {
    return this.#text;
  }
  static {
    make = (escaped) => new ScreenText(escaped);
  }
}

/**
 * A tagged template for {@link ScreenText}: the literal parts are Brave Bot's own words, each
 * string put in is escaped as one line ({@link escapeForScreen}), each ScreenText kept as it is.
 */
export function screenText(
  literals: TemplateStringsArray,
  ...parts: (string | ScreenText)[]
): ScreenText {
  let out = escapeForScreen(literals[0], true);
  parts.forEach((p, i) => {
    out += (p instanceof ScreenText ? p.text : escapeForScreen(p)) +
      escapeForScreen(literals[i + 1], true);
  });
  return make(out);
}

/** Argv stages as the person sees them ({@link formatArgv}), joined by ` | `. */
export function argvText(stages: readonly (readonly string[])[]): ScreenText {
  return make(stages.map(formatArgv).join(" | "));
}

/**
 * What a screen shows for text handed to it: a plain string escaped ({@link escapeForScreen},
 * line breaks kept), a {@link ScreenText} as it is. The one place either is decided.
 */
export function shownOnScreen(text: string | ScreenText): string {
  return text instanceof ScreenText ? text.text : escapeForScreen(text, true);
}
