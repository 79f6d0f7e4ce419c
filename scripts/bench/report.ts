/** The benchmark's one table: a row per measured case, with its ratio and whether its target held. */

export interface Row {
  /** Section, e.g. "search gen". */
  bench: string;
  case: string;
  /** Brave Bot's figure (a median time, a size, a count). */
  ours: string;
  /** The other contenders' figures, e.g. "rg 120 ms · grep 900 ms". */
  others: string;
  /** The ratio the target is about, e.g. "1.21× rg". */
  ratio: string;
  target: string;
  /** null: no target for this row (context only). */
  met: boolean | null;
  note?: string;
}

function pad(s: string, n: number): string {
  const len = [...s].length;
  return len >= n ? s : s + " ".repeat(n - len);
}

/** A Markdown table, readable as plain text and pasteable into docs/benchmarks.md. */
export function markdownTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) =>
    Math.max([...h].length, ...rows.map((r) => [...(r[i] ?? "")].length))
  );
  const line = (cells: string[]) => `| ${cells.map((c, i) => pad(c, widths[i])).join(" | ")} |`;
  return [
    line(headers),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(line),
  ].join("\n");
}

export function summaryTable(rows: readonly Row[]): string {
  return markdownTable(
    ["benchmark", "case", "Brave Bot", "others", "ratio", "target", "met"],
    rows.map((r) => [
      r.bench,
      r.case,
      r.ours,
      r.others,
      r.ratio,
      r.target,
      r.met === null ? "" : r.met ? "yes" : "NO",
    ]),
  );
}

export function ratio(ours: number, theirs: number): number {
  return theirs > 0 ? ours / theirs : NaN;
}

export function formatRatio(r: number, versus: string): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}× ${versus}` : "—";
}
