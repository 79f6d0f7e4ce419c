/**
 * A write's approval preview (WriteApprovalRequest.preview, made in src/policy/writes.ts) as
 * terminal lines: removed lines red, added green, and where a removed line is followed by its
 * replacement, the words that changed highlighted (issue 17). The preview is data — a diff's
 * hunks, or the new contents whole — so nothing here parses text: line numbers come from the
 * hunks' starts. The person approving must see every byte: each line goes through
 * {@link escapeForScreen}, and a line wider than the screen is wrapped onto rows marked `↪`,
 * never cut.
 */
import { diffWordsWithSpace } from "diff";
import pc from "picocolors";
import { escapeForScreen } from "../util/escape.ts";
import { plural } from "../util/plural.ts";
import type { DiffHunk, WritePreview } from "./person.ts";
import {
  type Line,
  MIN_WIDTH,
  paint,
  type Run,
  run,
  type StyleName,
  wrapExact,
} from "./text_layout.ts";

export interface DiffViewOptions {
  /** SGR colours; false (the default) writes plain text. */
  color?: boolean;
}

type Kind = "added" | "removed" | "context" | "hunk" | "file" | "meta";

interface Row {
  kind: Kind;
  /** The line without its `+`, `-` or ` `. */
  text: string;
  /** The line's number in the new file (old file for removed lines), when it has one. */
  number?: number;
  /** The changed parts of a paired line, for word highlighting. */
  parts?: { text: string; changed: boolean }[];
}

/**
 * A hunk's header as unified diffs write it: where a side is empty, its start is the line before
 * it (`-0,0`, `-3,0`).
 */
function hunkHeader(h: DiffHunk): string {
  const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
  const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
  return `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`;
}

/** A hunk's lines, each with its kind and number. */
function hunkRows(h: DiffHunk): Row[] {
  const rows: Row[] = [{ kind: "hunk", text: hunkHeader(h) }];
  let oldNo = h.oldStart;
  let newNo = h.newStart;
  for (const line of h.lines) {
    const text = line.slice(1);
    if (line[0] === " ") {
      rows.push({ kind: "context", text, number: newNo++ });
      oldNo++;
    } else if (line[0] === "-") rows.push({ kind: "removed", text, number: oldNo++ });
    else if (line[0] === "+") rows.push({ kind: "added", text, number: newNo++ });
    else rows.push({ kind: "meta", text: line });
  }
  return rows;
}

/** The preview's rows: a diff's file names and hunks, or new contents numbered from 1. */
function rowsOf(preview: WritePreview): Row[] {
  if (preview.kind === "diff") {
    return [
      { kind: "file", text: `--- ${preview.oldName}` },
      { kind: "file", text: `+++ ${preview.newName}` },
      ...preview.hunks.flatMap(hunkRows),
    ];
  }
  const rows: Row[] = [];
  const why = preview.instead;
  if (why?.kind === "binary") {
    rows.push({
      kind: "meta",
      text: `replaces a binary file of ${plural(why.bytes, "byte")} with:`,
    });
  } else if (why?.kind === "too many changes") {
    rows.push({
      kind: "meta",
      text: `(the changes to ${preview.name} are too many to show as a diff: ${
        plural(why.lines, "line")
      } become ${preview.lineCount}; the new contents follow)`,
    });
  }
  rows.push({
    kind: "file",
    text: `new file ${preview.name} (${plural(preview.lineCount, "line")})`,
  });
  preview.lines.forEach((text, i) => rows.push({ kind: "added", text, number: i + 1 }));
  const more = preview.lineCount - preview.lines.length;
  if (more > 0) rows.push({ kind: "meta", text: `… ${plural(more, "more line")}` });
  return rows;
}

/** Lines longer than this (either side) are not word-diffed: the diff is quadratic at worst. */
const WORD_DIFF_MAX_CHARS = 4000;

/**
 * Pairs each run of removed lines with the added run right after it, line by line, and marks
 * the words that changed when the two lines are alike (at least half of the shorter line's
 * non-blank characters are kept); a line rewritten whole is only coloured.
 */
function pairWords(rows: Row[]): void {
  let i = 0;
  while (i < rows.length) {
    if (rows[i].kind !== "removed") {
      i++;
      continue;
    }
    let r = i;
    while (r < rows.length && rows[r].kind === "removed") r++;
    let a = r;
    while (a < rows.length && rows[a].kind === "added") a++;
    const pairs = Math.min(r - i, a - r);
    for (let k = 0; k < pairs; k++) mark(rows[i + k], rows[r + k]);
    i = a;
  }
}

function mark(removed: Row, added: Row): void {
  if (Math.max(removed.text.length, added.text.length) > WORD_DIFF_MAX_CHARS) return;
  const changes = diffWordsWithSpace(removed.text, added.text, {
    maxEditLength: 400,
    timeout: 100,
  });
  if (!changes) return;
  const solid = (s: string) => s.replace(/\s/g, "").length;
  const same = changes.filter((c) => !c.added && !c.removed).reduce(
    (n, c) => n + solid(c.value),
    0,
  );
  const shorter = Math.min(solid(removed.text), solid(added.text));
  if (shorter > 0 && same * 2 < shorter) return;
  removed.parts = changes.filter((c) => !c.added).map((c) => ({
    text: c.value,
    changed: c.removed,
  }));
  added.parts = changes.filter((c) => !c.removed).map((c) => ({ text: c.value, changed: c.added }));
}

const SIGN: Record<Kind, string> = {
  added: "+",
  removed: "-",
  context: " ",
  hunk: "",
  file: "",
  meta: "",
};

const LINE_STYLE: Record<Kind, StyleName[]> = {
  added: ["green"],
  removed: ["red"],
  context: [],
  hunk: ["cyan"],
  file: ["bold"],
  meta: ["dim"],
};

const CHANGED_STYLE: Partial<Record<Kind, StyleName[]>> = {
  added: ["bgGreen"],
  removed: ["bgRed"],
};

/**
 * The spaces ending an added or removed line, on the highlight colour: they change the file
 * and would otherwise not be seen.
 */
function markTrailingBlanks(body: Run[], changed: StyleName[] | undefined): Run[] {
  const last = body.at(-1);
  const blanks = last ? / +$/.exec(last.text) : null;
  if (!changed || !last || !blanks) return body;
  const keep = last.text.slice(0, blanks.index);
  return [
    ...body.slice(0, -1),
    ...(keep ? [{ ...last, text: keep }] : []),
    run(blanks[0], ...changed),
  ];
}

/** Removed, added and context lines after a gutter (`number sign `); other lines alone. */
export function renderDiff(
  preview: WritePreview,
  width: number,
  options: DiffViewOptions = {},
): string[] {
  const colors = pc.createColors(options.color === true);
  const w = Math.max(Math.floor(Number.isFinite(width) ? width : 80), MIN_WIDTH);
  const rows = rowsOf(preview);
  pairWords(rows);
  const digits = Math.max(
    0,
    ...rows.map((r) => r.number === undefined ? 0 : String(r.number).length),
  );
  const lines: Line[] = [];
  for (const row of rows) {
    const style = LINE_STYLE[row.kind];
    const changed = CHANGED_STYLE[row.kind];
    const parts = row.parts ?? [{ text: row.text, changed: false }];
    const body = markTrailingBlanks(
      parts.map((p) => run(escapeForScreen(p.text), ...(p.changed && changed ? changed : style))),
      changed,
    );
    const sign = SIGN[row.kind];
    if (!sign) {
      lines.push(...wrapExact(body, w, [], [run("↪ ", "dim")]));
      continue;
    }
    const number = row.number === undefined ? "" : String(row.number);
    const first = [run(number.padStart(digits) + " ", "dim"), run(`${sign} `, ...style)];
    const rest = [run(" ".repeat(digits + 1)), run("↪ ", "dim")];
    lines.push(...wrapExact(body, w, first, rest));
  }
  return lines.map((l) => paint(l, colors));
}

/**
 * One file of what a session changed (`/diff`, `/undo`, `bravebot diff`): its name escaped,
 * marked when a run changed it, a note (why there is no diff), then its diff drawn as an
 * approval's.
 */
export function renderChangedFile(
  file: { rel: string; preview: WritePreview | null; note: string | null; byRun?: boolean },
  width: number,
  options: DiffViewOptions = {},
): string[] {
  const colors = pc.createColors(options.color === true);
  return [
    colors.bold(escapeForScreen(file.rel)) +
    (file.byRun ? colors.yellow(" (changed by a run)") : "") +
    (file.note ? colors.dim(` — ${escapeForScreen(file.note)}`) : ""),
    ...(file.preview ? renderDiff(file.preview, width, options) : []),
  ];
}
