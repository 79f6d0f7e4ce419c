/**
 * The glob matcher under hostile patterns: compileGlob (an NFA simulation) against picomatch
 * (regular expressions) and a naive backtracking matcher, over growing names. Each measurement
 * runs in its own process with a time limit, since the other two can take hours.
 */
import type { GlobJob, GlobResult } from "./glob_child.ts";
import { formatMs } from "./measure.ts";
import { markdownTable, type Row } from "./report.ts";

interface Case {
  name: string;
  pattern: string;
  /** A name or path of about n characters that the pattern does not match. */
  text(n: number): string;
}

const CASES: Case[] = [
  {
    name: "stars",
    pattern: "*a*a*a*a*a*a*a*a*b",
    text: (n) => "a".repeat(n),
  },
  {
    name: "questions",
    pattern: "?*?*?*?*?*?*?*?*x.ts",
    text: (n) => "y".repeat(n - 3) + ".js",
  },
  {
    name: "globstars",
    pattern: "**/a/**/a/**/a/**/a/**/a/**/b",
    text: (n) => "a/".repeat(Math.max(1, Math.floor(n / 2) - 1)) + "a",
  },
  {
    name: "mixed",
    pattern: "**/*a*a*a*/**/*b*b*b*.ts",
    text: (n) => ("aaaa/bbbb/".repeat(Math.ceil(n / 10))).slice(0, n - 3) + ".js",
  },
];

const MATCHERS = ["compileGlob", "picomatch", "naive"] as const;

async function measure(job: GlobJob, timeoutMs: number): Promise<GlobResult | "timeout"> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", new URL("./glob_child.ts", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(job)));
  await writer.close();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, timeoutMs);
  const out = await child.output();
  clearTimeout(timer);
  if (timedOut) return "timeout";
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !text) {
    return { ok: false, reason: new TextDecoder().decode(out.stderr).trim().slice(0, 200) };
  }
  return JSON.parse(text) as GlobResult;
}

export interface GlobBenchResult {
  rows: Row[];
  sizeTable: string;
}

export async function globBench(
  quick: boolean,
  log: (s: string) => void,
): Promise<GlobBenchResult> {
  const sizes = quick ? [16, 256, 4096] : [16, 64, 256, 1024, 4096];
  const timeoutMs = quick ? 1_500 : 4_000;
  const table: string[][] = [];
  const rows: Row[] = [];
  for (const c of CASES) {
    const worst = new Map<string, number>();
    const gaveUp = new Set<string>();
    const cells = new Map<string, string[]>(MATCHERS.map((m) => [m, []]));
    for (const n of sizes) {
      const text = c.text(n);
      for (const matcher of MATCHERS) {
        if (gaveUp.has(matcher)) {
          cells.get(matcher)!.push("(skipped)");
          continue;
        }
        const result = await measure(
          { matcher, pattern: c.pattern, text, budgetMs: quick ? 100 : 300 },
          timeoutMs,
        );
        let cell: string;
        if (result === "timeout") {
          cell = `> ${timeoutMs / 1000} s`;
          gaveUp.add(matcher);
          worst.set(matcher, Infinity);
        } else if (!result.ok) {
          cell = result.reason.startsWith("gave up") ? "> 2e7 steps" : `error: ${result.reason}`;
          gaveUp.add(matcher);
          worst.set(matcher, Infinity);
        } else {
          cell = formatMs(result.perMatchMs) + (result.matched ? " (matched!)" : "");
          worst.set(matcher, Math.max(worst.get(matcher) ?? 0, result.perMatchMs));
        }
        cells.get(matcher)!.push(cell);
      }
    }
    for (const m of MATCHERS) table.push([c.name, `\`${c.pattern}\``, m, ...cells.get(m)!]);
    const ours = worst.get("compileGlob") ?? NaN;
    const fmt = (m: string) => {
      const v = worst.get(m) ?? NaN;
      return v === Infinity ? `${m} gave up` : `${m} ${formatMs(v)}`;
    };
    rows.push({
      bench: "glob",
      case: `${c.name} (${sizes.at(-1)} chars)`,
      ours: formatMs(ours),
      others: `${fmt("picomatch")} · ${fmt("naive")}`,
      ratio: "",
      target: "< 1 ms",
      met: ours < 1,
    });
    log(`glob ${c.name}: compileGlob worst ${formatMs(ours)}`);
  }
  const sizeTable = markdownTable(
    ["case", "pattern", "matcher", ...sizes.map((n) => `n=${n}`)],
    table,
  );
  return { rows, sizeTable };
}
