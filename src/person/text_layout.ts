/**
 * Laying styled text out in terminal cells, shared by the markdown and diff views: text is kept
 * as runs (already escaped text plus the names of its styles) until a line is final, so wrapping
 * measures plain text and every painted line opens and closes its own styles (a line can be
 * shown, cut or dropped by the UI without leaking a colour into the next).
 *
 * Widths are display cells as `string-width` counts them (Ink's own measure): CJK and emoji
 * count 2, combining marks 0. Only the ASCII space is a place to break prose; a word longer than
 * the room is cut between grapheme clusters, never inside one.
 */
import stringWidth from "string-width";
import pc from "picocolors";

/** picocolors' style functions that the views use. */
export type StyleName =
  | "bold"
  | "dim"
  | "italic"
  | "underline"
  | "strikethrough"
  | "inverse"
  | "red"
  | "green"
  | "yellow"
  | "blue"
  | "magenta"
  | "cyan"
  | "gray"
  | "bgRed"
  | "bgGreen";

/** A piece of text with one style; the text is already escaped for the screen. */
export interface Run {
  text: string;
  style: readonly StyleName[];
  /** A hard line break (markdown's `br`); its text is empty. */
  br?: true;
}

export type Line = Run[];

const PLAIN: readonly StyleName[] = [];

export function run(text: string, ...style: StyleName[]): Run {
  return { text, style: style.length ? style : PLAIN };
}

/** The style names added to every run, outer ones first. */
export function styled(runs: readonly Run[], ...style: StyleName[]): Run[] {
  return runs.map((r) => ({ ...r, style: [...new Set([...style, ...r.style])] }));
}

export function cells(text: string): number {
  // Printable ASCII, the common case, is one cell a character.
  return /^[\x20-\x7e]*$/.test(text) ? text.length : stringWidth(text);
}

export function lineCells(line: readonly Run[]): number {
  let n = 0;
  for (const r of line) n += cells(r.text);
  return n;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** A line of runs as terminal text, each run painted on its own (SGR only, none when off). */
export function paint(line: readonly Run[], colors: ReturnType<typeof pc.createColors>): string {
  let out = "";
  // Neighbouring runs of one style are painted together: fewer sequences, same look.
  let i = 0;
  while (i < line.length) {
    const style = line[i].style;
    let text = line[i].text;
    let j = i + 1;
    while (j < line.length && sameStyle(line[j].style, style)) text += line[j++].text;
    let painted = text;
    for (let k = style.length - 1; k >= 0; k--) painted = colors[style[k]](painted);
    out += painted;
    i = j;
  }
  return out;
}

function sameStyle(a: readonly StyleName[], b: readonly StyleName[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

/**
 * The last `max` cells of a prefix (indentation is cut from the left, so a bullet or a quote bar
 * survives deep nesting).
 */
export function fitPrefix(prefix: readonly Run[], max: number): Run[] {
  let width = lineCells(prefix);
  if (width <= max) return [...prefix];
  const out: Run[] = [];
  for (const r of prefix) {
    let text = "";
    for (const g of graphemes(r.text)) {
      const w = cells(g);
      if (width > max) width -= w;
      else text += g;
    }
    if (text) out.push({ ...r, text });
  }
  return out;
}

/** A piece of a word or a space between words, as the wrapper sees it. */
interface Piece {
  run: Run;
  width: number;
}

/** Splits runs into words (lists of pieces, possibly across styles) and the spaces between. */
function tokenize(runs: readonly Run[]): ({ kind: "word" | "space"; pieces: Piece[] } | {
  kind: "br";
})[] {
  const out: ({ kind: "word" | "space"; pieces: Piece[] } | { kind: "br" })[] = [];
  for (const r of runs) {
    if (r.br) {
      out.push({ kind: "br" });
      continue;
    }
    for (const part of r.text.split(/( +)/)) {
      if (!part) continue;
      const kind = part[0] === " " ? "space" : "word";
      const piece = { run: { ...r, text: part }, width: cells(part) };
      const last = out.at(-1);
      if (last && last.kind === kind) last.pieces.push(piece);
      else out.push({ kind, pieces: [piece] });
    }
  }
  return out;
}

/**
 * Cuts a word's pieces into rows of at most `room` cells between grapheme clusters (a word
 * longer than a line).
 */
function cutPieces(pieces: readonly Piece[], room: number): Run[][] {
  const rows: Run[][] = [[]];
  let left = room;
  for (const p of pieces) {
    let text = "";
    for (const g of graphemes(p.run.text)) {
      const w = cells(g);
      if (w > left && (text || rows.at(-1)!.length)) {
        if (text) rows.at(-1)!.push({ ...p.run, text });
        text = "";
        rows.push([]);
        left = room;
      }
      text += g;
      left -= w;
    }
    if (text) rows.at(-1)!.push({ ...p.run, text });
  }
  return rows;
}

/**
 * Word wrap: words never split unless one is wider than the room; the spaces where a line
 * breaks are dropped (prose), spaces inside a line kept as they are. `first` and `rest` are
 * prefixes (a list marker and its indentation) of equal width, cut if the room would fall
 * under {@link MIN_ROOM}.
 */
export function wrapWords(
  runs: readonly Run[],
  width: number,
  first: readonly Run[] = [],
  rest: readonly Run[] = first,
): Line[] {
  const [p1, p2, room] = prefixes(width, first, rest);
  const lines: Line[] = [];
  let line: Run[] = [...p1];
  let used = 0;
  let pending: Piece[] = [];
  const newLine = () => {
    lines.push(line);
    line = [...p2];
    used = 0;
    pending = [];
  };
  for (const t of tokenize(runs)) {
    if (t.kind === "br") {
      newLine();
      continue;
    }
    if (t.kind === "space") {
      if (used > 0) pending.push(...t.pieces);
      continue;
    }
    const spaceWidth = pending.reduce((n, p) => n + p.width, 0);
    const wordWidth = t.pieces.reduce((n, p) => n + p.width, 0);
    if (used > 0 && used + spaceWidth + wordWidth <= room) {
      line.push(...pending.map((p) => p.run), ...t.pieces.map((p) => p.run));
      used += spaceWidth + wordWidth;
      pending = [];
      continue;
    }
    if (used > 0) newLine();
    pending = [];
    if (wordWidth <= room) {
      line.push(...t.pieces.map((p) => p.run));
      used = wordWidth;
      continue;
    }
    const rows = cutPieces(t.pieces, room);
    rows.forEach((row, i) => {
      if (i > 0) newLine();
      line.push(...row);
      used = lineCells(row);
    });
  }
  lines.push(line);
  return lines;
}

/**
 * Wrap that keeps every character (code and diffs): a row breaks after the last space in its
 * second half if there is one, else at the room's edge; spaces stay where they were. One pass
 * over the graphemes, so a megabyte-long line costs linear time.
 */
export function wrapExact(
  runs: readonly Run[],
  width: number,
  first: readonly Run[] = [],
  rest: readonly Run[] = first,
): Line[] {
  const [p1, p2, room] = prefixes(width, first, rest);
  const flat: Grapheme[] = [];
  for (const r of runs) {
    if (r.br || !r.text) continue;
    for (const g of graphemes(r.text)) flat.push({ g, w: cells(g), run: r });
  }
  const rows: Run[][] = [];
  let i = 0;
  while (i < flat.length) {
    let used = 0;
    let j = i;
    let breakAt = -1;
    while (j < flat.length && (j === i || used + flat[j].w <= room)) {
      used += flat[j].w;
      j++;
      if (flat[j - 1].g === " " && used > room / 2) breakAt = j;
    }
    const end = j < flat.length && breakAt > i ? breakAt : j;
    rows.push(groupRuns(flat.slice(i, end)));
    i = end;
  }
  if (!rows.length) rows.push([]);
  return rows.map((row, k) => [...(k === 0 ? p1 : p2), ...row]);
}

interface Grapheme {
  g: string;
  w: number;
  run: Run;
}

function groupRuns(flat: readonly Grapheme[]): Run[] {
  const out: Run[] = [];
  let from: Run | null = null;
  for (const f of flat) {
    const last = out.at(-1);
    if (last && from === f.run) last.text += f.g;
    else out.push({ ...f.run, text: f.g });
    from = f.run;
  }
  return out;
}

/** The room a prefix must leave for text, when the width allows it. */
export const MIN_ROOM = 10;

/**
 * Narrowest screen the views lay out for; a narrower request is laid out at this width (a
 * terminal that narrow cannot show a diff's gutter and its text).
 */
export const MIN_WIDTH = 20;

function prefixes(
  width: number,
  first: readonly Run[],
  rest: readonly Run[],
): [Run[], Run[], number] {
  // Two cells at least, so a wide character always fits a row.
  const w = Math.max(Math.floor(width), 2);
  const keep = Math.max(0, Math.min(lineCells(first), w - MIN_ROOM));
  const p1 = fitPrefix(first, keep);
  const p2 = fitPrefix(rest, keep);
  return [p1, p2, w - Math.max(lineCells(p1), lineCells(p2))];
}

/** The line without the spaces at its end (padding, an empty quote line's bar). */
export function trimEnd(line: readonly Run[]): Run[] {
  const out = [...line];
  while (out.length) {
    const last = out[out.length - 1];
    const text = last.text.replace(/ +$/, "");
    if (text) {
      out[out.length - 1] = { ...last, text };
      break;
    }
    out.pop();
  }
  return out;
}

/** Pads a line with spaces to `width` cells, placed by `align`. */
export function pad(
  line: readonly Run[],
  width: number,
  align: "left" | "right" | "center" | null = "left",
): Run[] {
  const gap = Math.max(0, width - lineCells(line));
  if (!gap) return [...line];
  const before = align === "right" ? gap : align === "center" ? Math.floor(gap / 2) : 0;
  const out: Run[] = [];
  if (before) out.push(run(" ".repeat(before)));
  out.push(...line);
  if (gap - before) out.push(run(" ".repeat(gap - before)));
  return out;
}

/** A marker of escaped text (`⟦U+000A⟧`): one unit, never cut across rows. */
const MARKER_UNIT = /(\u27E6U\+[0-9A-F]{4,6}\u27E7)/;

/** Graphemes, with each marker one unit. */
function units(text: string): string[] {
  return text.split(MARKER_UNIT).flatMap((piece, i) => i % 2 ? [piece] : graphemes(piece));
}

/**
 * Lays out plain, escaped parts (a tool call's `key=value` arguments, a summary's words) in rows
 * of at most `width` cells, for a screen that trims the spaces at a row's end (Ink does, and a
 * terminal shows none there). Parts are joined by one space and a row breaks between parts where
 * it can, dropping only that separator; a part wider than the rest of a row is cut between
 * graphemes (a marker stays whole), and the spaces that would end a row begin the next instead,
 * so none inside a quoted string is lost. No row is indented: a row's first space is the text's.
 */
export function wrapParts(parts: readonly string[], width: number): string[] {
  const w = Math.max(Math.floor(width), MIN_ROOM);
  const rows: string[] = [];
  let row = "";
  let used = 0;
  const breakRow = () => {
    const body = row.replace(/ +$/, "");
    const carried = body === "" ? 0 : row.length - body.length;
    rows.push(body === "" ? row : body);
    row = " ".repeat(carried);
    used = carried;
  };
  for (const part of parts) {
    const width = cells(part);
    if (used > 0) {
      if (used + 1 + width <= w) {
        row += ` ${part}`;
        used += 1 + width;
        continue;
      }
      // A part that fits a row of its own starts one; a longer one fills this row first.
      if (width <= w || w - used < MIN_ROOM) breakRow();
      else {
        row += " ";
        used += 1;
      }
    }
    for (const u of units(part)) {
      const uw = cells(u);
      if (used > 0 && used + uw > w) breakRow();
      row += u;
      used += uw;
    }
  }
  if (row !== "" || rows.length === 0) rows.push(row);
  return rows;
}

/**
 * Escaped lines under a margin (`│ `) of `margin` cells, each cut into rows that fit `width`
 * with the margin: every row, wrapped ones too, gets it through `mark`. Cut as {@link wrapParts}
 * cuts one part (between graphemes, a marker whole, no character lost), so the text stays exactly
 * as it was escaped.
 */
export function marginRows(
  lines: readonly string[],
  width: number,
  margin: number,
  mark: (row: string) => string,
): string[] {
  return lines.flatMap((line) => wrapParts([line], width - margin).map(mark));
}

/**
 * Text split at its spaces, except those inside a `'…'` or `` `…` `` quote: the parts for
 * {@link wrapParts}, which joins them with one space again (a run of spaces outside quotes
 * gives empty parts, so nothing is lost).
 */
export function quotedWords(text: string): string[] {
  const out: string[] = [];
  let word = "";
  let quote: string | null = null;
  for (const ch of text) {
    if (quote === null && ch === " ") {
      out.push(word);
      word = "";
      continue;
    }
    if (ch === quote) quote = null;
    else if (quote === null && (ch === "'" || ch === "`")) quote = ch;
    word += ch;
  }
  out.push(word);
  return out;
}
