/**
 * The planner's markdown as terminal lines (issue 17: headings, emphasis, lists, tables, fenced
 * code with syntax highlighting, wrapped at word boundaries to the terminal's width).
 *
 * The planner's words are trusted for integrity but never trusted by the terminal: every piece
 * of text taken from the markdown goes through {@link escapeForScreen} before it is styled, so
 * escape, CSI and OSC sequences and bidi controls show as markers, and the only escape
 * sequences in the output are the SGR colours added here (none when `color` is false). A link
 * whose text differs from its target shows the target; no OSC 8 hyperlink is ever written.
 *
 * marked's lexer parses; the tokens are laid out here (docs/decisions.md says why not
 * marked-terminal). Every line is at most `width` cells (text_layout.ts measures).
 */
import { Lexer, type Token, type Tokens } from "marked";
// lowlight's own types would add the DOM library to the program (lowlight_types.d.ts says why).
// @ts-types="./lowlight_types.d.ts"
import { all, createLowlight, type Lowlight, type LowlightNode } from "lowlight";
import pc from "picocolors";
import { escapeForScreen } from "../util/escape.ts";
import {
  cells,
  fitPrefix,
  graphemes,
  type Line,
  lineCells,
  MIN_ROOM,
  MIN_WIDTH,
  pad,
  paint,
  type Run,
  run,
  styled,
  type StyleName,
  trimEnd,
  wrapExact,
  wrapWords,
} from "./text_layout.ts";

export interface RenderOptions {
  /** SGR colours and styles; false (the default) writes plain text. */
  color?: boolean;
}

interface Ctx {
  color: boolean;
}

/** The markdown as lines of at most `width` cells (widths under 20 are laid out at 20). */
export function renderMarkdown(text: string, width: number, options: RenderOptions = {}): string[] {
  const ctx: Ctx = { color: options.color === true };
  const w = Math.max(Math.floor(Number.isFinite(width) ? width : 80), MIN_WIDTH);
  const colors = pc.createColors(ctx.color);
  let lines: Line[];
  try {
    const tokens = Lexer.lex(text, { gfm: true, breaks: false, pedantic: false });
    lines = blocks(tokens, w, ctx);
  } catch {
    // The lexer or a deep nesting gave up: the text as it is, every character kept.
    lines = text.split("\n").flatMap((l) => wrapExact([run(escapeForScreen(l))], w));
  }
  return lines.map((l) => paint(l, colors));
}

/**
 * Splits a partial markdown text at the end of its last complete block: `stable` (possibly empty)
 * renders now and never again (Ink's `<Static>`), `rest` is re-rendered as more arrives. The cut
 * is after a blank line outside a fenced code block that is followed by a line starting in its
 * first column, so a list item's indented continuation or an indented code block is never cut.
 * Render each stable piece on its own and put one blank line between pieces that render to
 * lines. As the text grows, `stable` only grows.
 */
export function splitStable(text: string): { stable: string; rest: string } {
  let cut = 0;
  let fence: { char: string; length: number } | null = null;
  let blankBefore = false;
  let at = 0;
  while (at < text.length) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) {
      // The last line is still arriving; it can only start the next block.
      if (!fence && blankBefore && /^\S/.test(text.slice(at))) cut = at;
      break;
    }
    const line = text.slice(at, nl);
    if (!fence && blankBefore && /^\S/.test(line)) cut = at;
    const mark = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (mark && mark[1][0] === fence.char && mark[1].length >= fence.length && !mark[2].trim()) {
        fence = null;
      }
      blankBefore = false;
    } else if (mark && !(mark[1][0] === "`" && mark[2].includes("`"))) {
      fence = { char: mark[1][0], length: mark[1].length };
      blankBefore = false;
    } else {
      blankBefore = line.trim() === "";
    }
    at = nl + 1;
  }
  return { stable: text.slice(0, cut), rest: text.slice(cut) };
}

// --- blocks ---------------------------------------------------------------------------------

const BLANK: Line = [];

function blocks(tokens: readonly Token[], width: number, ctx: Ctx): Line[] {
  const out: Line[] = [];
  for (const t of tokens) {
    const lines = block(t, width, ctx);
    if (!lines.length) continue;
    if (out.length) out.push(BLANK);
    out.push(...lines);
  }
  return out;
}

function block(token: Token, width: number, ctx: Ctx): Line[] {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "space":
    case "def":
      // A definition's target shows at each link that uses it.
      return [];
    case "paragraph":
      return wrapWords(inline((t as Tokens.Paragraph).tokens, ctx), width);
    case "text": {
      const x = t as Tokens.Text;
      return wrapWords(x.tokens ? inline(x.tokens, ctx) : prose(x.text), width);
    }
    case "heading":
      return heading(t as Tokens.Heading, width, ctx);
    case "code":
      return code(t as Tokens.Code, width, ctx);
    case "blockquote": {
      const bar = [run("│ ", "dim")];
      return nest(width, bar, bar, (w) => blocks((t as Tokens.Blockquote).tokens, w, ctx));
    }
    case "list":
      return list(t as Tokens.List, width, ctx);
    case "table":
      return table(t as Tokens.Table, width, ctx);
    case "hr":
      return [[run("─".repeat(width), "dim")]];
    case "html":
      return t.text.replace(/\n+$/, "").split("\n").flatMap((l: string) =>
        wrapExact([run(escapeForScreen(l), "dim")], width)
      );
    default:
      // Anything the layout does not know is shown as it was written.
      return String(t.raw ?? "").replace(/\n+$/, "").split("\n").flatMap((l) =>
        wrapExact([run(escapeForScreen(l))], width)
      );
  }
}

const HEADING_STYLE: Record<number, StyleName[]> = {
  1: ["bold", "underline", "magenta"],
  2: ["bold", "magenta"],
  3: ["bold", "cyan"],
};

function heading(t: Tokens.Heading, width: number, ctx: Ctx): Line[] {
  const style = HEADING_STYLE[t.depth] ?? ["bold"];
  const body = styled(inline(t.tokens, ctx), ...style);
  // Without colour the level is only readable from the markdown's own marks.
  const mark = ctx.color ? [] : [run(`${"#".repeat(t.depth)} `)];
  return wrapWords(body, width, mark, mark.map((r) => ({ ...r, text: " ".repeat(r.text.length) })));
}

/**
 * Runs `render` at the width left by a prefix, then puts `first` before its first line and
 * `rest` before the others; the prefix is cut when the room would fall under {@link MIN_ROOM}.
 */
function nest(
  width: number,
  first: readonly Run[],
  rest: readonly Run[],
  render: (width: number) => Line[],
): Line[] {
  const want = Math.max(lineCells(first), lineCells(rest));
  const keep = Math.max(0, Math.min(want, width - MIN_ROOM));
  // Indentation is cut from the left, so the marker itself survives.
  const p1 = pad(fitPrefix(first, keep), keep);
  const p2 = pad(fitPrefix(rest, keep), keep);
  const inner = render(width - keep);
  if (!inner.length) return [trimEnd(p1)];
  return inner.map((l, i) =>
    l.length ? [...(i === 0 ? p1 : p2), ...l] : trimEnd(i === 0 ? p1 : p2)
  );
}

const BULLETS = ["•", "◦", "▪"];

function list(t: Tokens.List, width: number, ctx: Ctx, depth = 0): Line[] {
  const start = typeof t.start === "number" ? t.start : 1;
  const markers = t.items.map((item, i) =>
    item.task
      ? `[${item.checked ? "x" : " "}]`
      : t.ordered
      ? `${start + i}.`
      : BULLETS[depth % BULLETS.length]
  );
  const widest = Math.max(...markers.map(cells));
  const out: Line[] = [];
  t.items.forEach((item, i) => {
    if (i > 0 && t.loose) out.push(BLANK);
    // Numbers are right-aligned (` 9.` over `10.`), bullets and boxes left.
    const gap = " ".repeat(widest - cells(markers[i]));
    const marker = t.ordered && !item.task ? gap + markers[i] : markers[i] + gap;
    const first = [run(`${marker} `, "dim")];
    const rest = [run(" ".repeat(widest + 1))];
    out.push(...nest(width, first, rest, (w) => itemBlocks(item, w, ctx, depth)));
  });
  return out;
}

function itemBlocks(item: Tokens.ListItem, width: number, ctx: Ctx, depth: number): Line[] {
  const out: Line[] = [];
  for (const t of item.tokens) {
    if (t.type === "checkbox") continue;
    const lines = t.type === "list"
      ? list(t as Tokens.List, width, ctx, depth + 1)
      : block(t, width, ctx);
    if (!lines.length) continue;
    if (out.length && item.loose) out.push(BLANK);
    out.push(...lines);
  }
  return out;
}

// --- code -----------------------------------------------------------------------------------

/** Blocks larger than this are shown unhighlighted: highlight.js has no time bound of its own. */
const HIGHLIGHT_MAX_CHARS = 64 * 1024;

function code(t: Tokens.Code, width: number, ctx: Ctx): Line[] {
  const source = t.text.replace(/\n$/, "").split("\n").map((l) => escapeForScreen(expandTabs(l)));
  const lang = (t.lang ?? "").trim().split(/\s/)[0];
  const rows = ctx.color ? highlighted(source, lang) : null;
  const indent = [run("  ")];
  const more = [run("↪ ", "dim")];
  return (rows ?? source.map((l) => [run(l)])).flatMap((l) => wrapExact(l, width, indent, more));
}

/**
 * Tabs in a code block as spaces to the next stop of {@link TAB_STOP}: an answer's Go or
 * Makefile would otherwise be a row of tab markers. (An approval's diff keeps them as markers:
 * there the person must see the exact bytes.)
 */
function expandTabs(line: string): string {
  if (!line.includes("\t")) return line;
  let out = "";
  let column = 0;
  for (const g of graphemes(line)) {
    if (g === "\t") {
      const n = TAB_STOP - (column % TAB_STOP);
      out += " ".repeat(n);
      column += n;
    } else {
      out += g;
      column += cells(g);
    }
  }
  return out;
}

const TAB_STOP = 4;

/** Token classes of highlight.js and their style here; unnamed classes stay plain. */
export const CODE_STYLE: Readonly<Record<string, readonly StyleName[]>> = {
  keyword: ["blue"],
  built_in: ["cyan"],
  type: ["cyan"],
  literal: ["blue"],
  number: ["yellow"],
  string: ["green"],
  regexp: ["red"],
  comment: ["gray"],
  doctag: ["gray"],
  meta: ["gray"],
  title: ["yellow"],
  params: [],
  attr: ["cyan"],
  attribute: ["cyan"],
  name: ["blue"],
  tag: ["gray"],
  symbol: ["magenta"],
  variable: ["magenta"],
  addition: ["green"],
  deletion: ["red"],
  section: ["bold"],
};

/**
 * highlight.js 11 with every grammar it ships, through lowlight, which returns the tokens as a
 * tree instead of HTML (docs/decisions.md says why these two and why every grammar). Made at the
 * first code block that names a language, not when the module loads: registering every grammar
 * runs each one's definition, about 40–50 ms of CPU that held up the session's prompt (issue 24).
 */
let highlighter: Lowlight | null = null;
const theHighlighter = () => highlighter ??= createLowlight(all);

/**
 * Highlighted lines of (already escaped) code, or null when the language is unknown or the
 * block too large. The highlighter only splits the text into classed tokens; the styles are
 * applied here, so no escape sequence of its own reaches the screen. The tokens' text must be
 * exactly the text given, or the block is shown plain.
 */
function highlighted(lines: readonly string[], lang: string): Line[] | null {
  const source = lines.join("\n");
  if (!lang || source.length > HIGHLIGHT_MAX_CHARS || !theHighlighter().registered(lang)) {
    return null;
  }
  let tree: LowlightNode;
  try {
    tree = theHighlighter().highlight(lang, source, { prefix: "" });
  } catch {
    return null;
  }
  const out: Line[] = [[]];
  let plain = "";
  // Depth-first, children in order; a token without a style of its own keeps its parent's.
  const todo: { node: LowlightNode; style: readonly StyleName[] }[] = [{ node: tree, style: [] }];
  while (todo.length) {
    const { node, style } = todo.pop()!;
    if (node.type === "text") {
      const pieces = String(node.value ?? "").split("\n");
      pieces.forEach((piece, i) => {
        if (i > 0) out.push([]);
        if (piece) out.at(-1)!.push(run(piece, ...style));
      });
      plain += node.value ?? "";
    } else if (node.type === "root" || node.type === "element") {
      const names = node.properties?.className;
      const cls = Array.isArray(names) ? String(names[0] ?? "") : "";
      const own = Object.hasOwn(CODE_STYLE, cls) ? CODE_STYLE[cls] : style;
      const children = node.children ?? [];
      for (let i = children.length - 1; i >= 0; i--) todo.push({ node: children[i], style: own });
    }
  }
  return plain === source && out.length === lines.length ? out : null;
}

// --- tables ---------------------------------------------------------------------------------

const COLUMN_GAP = " │ ";
const MIN_COLUMN = 6;

function table(t: Tokens.Table, width: number, ctx: Ctx): Line[] {
  const head = t.header.map((c) => styled(inline(c.tokens, ctx), "bold"));
  const body = t.rows.map((r) => t.header.map((_, i) => inline(r[i]?.tokens ?? [], ctx)));
  const n = head.length;
  const natural = head.map((h, i) =>
    Math.max(lineCells(h), ...body.map((r) => lineCells(r[i])), 1)
  );
  const gaps = cells(COLUMN_GAP) * (n - 1);
  const room = width - gaps;
  if (room < n * MIN_COLUMN) return records(head, body, width);
  const widths = share(natural, room);
  const rule = [run(widths.map((w) => "─".repeat(w)).join("─┼─"), "dim")];
  const row = (cellsOfRow: readonly Run[][]) => {
    const wrapped = cellsOfRow.map((c, i) => wrapWords(c, widths[i]));
    const height = Math.max(...wrapped.map((w) => w.length));
    const lines: Line[] = [];
    for (let k = 0; k < height; k++) {
      const line: Run[] = [];
      wrapped.forEach((w, i) => {
        if (i > 0) line.push(run(COLUMN_GAP, "dim"));
        line.push(...pad(w[k] ?? [], widths[i], t.align[i]));
      });
      lines.push(trimEnd(line));
    }
    return lines;
  };
  return [...row(head), rule, ...body.flatMap(row)];
}

/**
 * Column widths within `room`: columns narrower than a fair share keep their width, the others
 * share what is left (each at least {@link MIN_COLUMN}).
 */
function share(natural: readonly number[], room: number): number[] {
  const total = natural.reduce((a, b) => a + b, 0);
  if (total <= room) return [...natural];
  const widths = natural.map(() => 0);
  let open = natural.map((_, i) => i);
  let left = room;
  for (;;) {
    const fair = Math.floor(left / open.length);
    const small = open.filter((i) => natural[i] <= fair);
    if (!small.length) {
      // fair never falls under MIN_COLUMN: the caller gives each column that much, and
      // setting aside columns narrower than the share only raises it.
      open.forEach((i, k) => widths[i] = fair + (k < left - fair * open.length ? 1 : 0));
      return widths;
    }
    for (const i of small) {
      widths[i] = natural[i];
      left -= natural[i];
    }
    open = open.filter((i) => !small.includes(i));
    if (!open.length) return widths;
  }
}

/** A table too wide for its columns: each row as `header: value` lines, rows apart. */
function records(head: readonly Run[][], body: readonly Run[][][], width: number): Line[] {
  const out: Line[] = [];
  body.forEach((r, k) => {
    if (k > 0) out.push([run("─".repeat(Math.min(width, 20)), "dim")]);
    r.forEach((c, i) => out.push(...wrapWords([...head[i], run(": "), ...c], width)));
  });
  if (!body.length) {
    out.push(...wrapWords(head.flatMap((h, i) => i ? [run(" │ "), ...h] : h), width));
  }
  return out;
}

// --- inline ---------------------------------------------------------------------------------

/** Prose text: character references decoded, line breaks and runs of blanks as one space. */
function prose(text: string, ...style: StyleName[]): Run[] {
  return [run(escapeForScreen(decodeEntities(text).replace(/[ \t\n]+/g, " ")), ...style)];
}

function inline(tokens: readonly Token[], ctx: Ctx): Run[] {
  return tokens.flatMap((t) => inlineOne(t, ctx));
}

function inlineOne(token: Token, ctx: Ctx): Run[] {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "text":
      return t.tokens ? inline(t.tokens, ctx) : prose(t.text);
    case "escape":
      return [run(escapeForScreen(t.text))];
    case "strong":
      return styled(inline(t.tokens ?? [], ctx), "bold");
    case "em":
      return styled(inline(t.tokens ?? [], ctx), "italic");
    case "del":
      return styled(inline(t.tokens ?? [], ctx), "strikethrough");
    case "codespan": {
      const text = escapeForScreen(t.text);
      // Without colour, the backticks are what sets code apart.
      return [run(ctx.color ? text : `\`${text}\``, "cyan")];
    }
    case "br":
      return [{ text: "", style: [], br: true }];
    case "link":
      return link(t as Tokens.Link, ctx);
    case "image": {
      const alt = t.text ? prose(t.text) : [run("image")];
      return [run("["), ...alt, run("] ("), run(escapeForScreen(t.href), "underline"), run(")")];
    }
    case "html":
      return prose(t.text, "dim");
    case "checkbox":
      return [run(t.checked ? "[x] " : "[ ] ")];
    default:
      return prose(String(t.raw ?? ""));
  }
}

/**
 * A link as text: its target is shown unless its text says exactly that target, so a link
 * cannot hide where it goes. Never an OSC 8 hyperlink.
 */
function link(t: Tokens.Link, ctx: Ctx): Run[] {
  const label = t.autolink ? [run(escapeForScreen(t.text))] : inline(t.tokens, ctx);
  const shown = label.map((r) => r.text).join("");
  const href = escapeForScreen(t.href);
  const same = [shown, `http://${shown}`, `https://${shown}`, `mailto:${shown}`].includes(href);
  if (same) return styled(label, "underline", "blue");
  return [...styled(label, "blue"), run(" ("), run(href, "underline"), run(")")];
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  copy: "©",
  reg: "®",
  hellip: "…",
  mdash: "—",
  ndash: "–",
};

/**
 * Character references as the markdown's reader would see them (a browser decodes them). The
 * result is escaped afterwards, so `&#27;` shows as a marker like a raw ESC would.
 */
function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);/g, (all, body: string) => {
    if (body[0] !== "#") return NAMED[body] ?? all;
    const code = body[1] === "x" || body[1] === "X"
      ? parseInt(body.slice(2), 16)
      : parseInt(body.slice(1), 10);
    const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
    return String.fromCodePoint(valid ? code : 0xfffd);
  });
}
