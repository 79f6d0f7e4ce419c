/**
 * The terminal views' cost (src/person/markdown.ts, diff_view.ts): a 500-line planner answer
 * rendered whole at 120 and 40 columns, the same answer streamed in small pieces the way the
 * session shows it (splitStable: stable blocks rendered once, the tail again at each piece), a
 * 400-line diff, and what importing the markdown module costs a fresh process (highlight.js
 * and its grammars are most of it; highlight_bench.ts compares highlighters).
 */
import { join } from "node:path";
import { renderMarkdown, splitStable } from "../../src/person/markdown.ts";
import { renderDiff } from "../../src/person/diff_view.ts";
import { diffPreview } from "../../src/policy/writes.ts";
import { median } from "./measure.ts";
import type { Row } from "./report.ts";

/** A planner answer of `lines` lines: headings, prose, lists, a table and code, repeated. */
export function sampleAnswer(lines: number): string {
  const section = (i: number) => [
    `## Step ${i}: what changed`,
    "",
    `The parser in \`src/parse_${i}.ts\` now reads **every** token once; see [the notes]` +
    `(https://example.com/notes/${i}) for why the *old* loop was quadratic on long inputs, and`,
    "what the benchmark measured before and after the change on the shared machine.",
    "",
    "- the lexer keeps its position",
    "  - nested: the reader no longer copies slices",
    "- errors name the line and the column",
    "",
    "| case | before | after |",
    "|------|-------:|------:|",
    `| small | ${i} ms | 1 ms |`,
    "| large | 900 ms | 12 ms |",
    "",
    "```ts",
    `export function parse${i}(text: string): Token[] {`,
    "  const out: Token[] = [];",
    "  for (let at = 0; at < text.length; at++) out.push(read(text, at));",
    "  return out; // one pass",
    "}",
    "```",
    "",
  ];
  const out: string[] = [];
  for (let i = 1; out.length < lines; i++) out.push(...section(i));
  return out.slice(0, lines).join("\n");
}

function timeIt(rounds: number, f: () => unknown): number {
  f();
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    f();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** Streams `text` in pieces of `size` characters as the session would render it. */
function streamed(text: string, size: number, width: number): number {
  let shown = 0;
  let lines = 0;
  for (let end = size; end < text.length + size; end += size) {
    const sofar = text.slice(0, end);
    const { stable } = splitStable(sofar);
    if (stable.length > shown) {
      lines += renderMarkdown(stable.slice(shown), width, { color: true }).length;
      shown = stable.length;
    }
    lines += renderMarkdown(sofar.slice(shown), width, { color: true }).length;
  }
  return lines;
}

async function importCost(repo: string, rounds: number): Promise<number> {
  const module = new URL(`file://${join(repo, "src/person/markdown.ts")}`).href;
  const code = `const t = performance.now(); await import(${JSON.stringify(module)}); ` +
    "console.log(performance.now() - t);";
  const samples: number[] = [];
  for (let r = 0; r < rounds + 1; r++) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", `--config=${join(repo, "deno.json")}`, code],
      stdout: "piped",
      stderr: "null",
    }).output();
    const ms = Number(new TextDecoder().decode(out.stdout).trim());
    if (r > 0 && Number.isFinite(ms)) samples.push(ms);
  }
  return median(samples);
}

export async function renderBench(
  repo: string,
  rounds: number,
  log: (s: string) => void,
): Promise<Row[]> {
  const answer = sampleAnswer(500);
  const wide = timeIt(rounds, () => renderMarkdown(answer, 120, { color: true }));
  const narrow = timeIt(rounds, () => renderMarkdown(answer, 40, { color: true }));
  const stream = timeIt(Math.min(rounds, 3), () => streamed(answer, 40, 120));
  const before = Array.from({ length: 400 }, (_, i) => `line ${i} of the old text, word ${i % 7}`);
  const after = before.map((l, i) => i % 5 ? l : l.replace("old", "new"));
  const diff = diffPreview("a.txt", before.join("\n") + "\n", after.join("\n") + "\n");
  const diffMs = timeIt(rounds, () => renderDiff(diff, 120, { color: true }));
  const load = await importCost(repo, Math.min(rounds, 3));
  log(
    `render: 500-line answer ${wide.toFixed(1)} ms at 120, ${narrow.toFixed(1)} ms at 40; ` +
      `streamed ${stream.toFixed(0)} ms; diff ${diffMs.toFixed(1)} ms; import ${
        load.toFixed(0)
      } ms`,
  );
  const row = (c: string, ms: number, target: string, limit: number | null): Row => ({
    bench: "render",
    case: c,
    ours: `${ms.toFixed(1)} ms`,
    others: "",
    ratio: "",
    target,
    met: limit === null ? null : ms <= limit,
  });
  return [
    row("markdown, 500-line answer, 120 cols", wide, "≤ 50 ms", 50),
    row("markdown, 500-line answer, 40 cols", narrow, "≤ 50 ms", 50),
    row("markdown, same answer streamed in 40-char pieces", stream, "", null),
    row("diff view, 400-line file, 80 lines changed", diffMs, "≤ 50 ms", 50),
    row("import src/person/markdown.ts (fresh process)", load, "", null),
  ];
}
