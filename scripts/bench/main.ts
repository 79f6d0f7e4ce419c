/**
 * `deno task bench [--quick] [--only a,b] [--rounds N] [--no-real] [--ten]`: Brave Bot's benchmarks
 * (docs/benchmarks.md), printed as one table. Sections: search, list, glob, overhead, startup, memory,
 * prompt, textcalls, snapshot, tokens, render, highlight. Corpora are made on first use under bench-data/ and reused afterwards; `--quick` uses
 * a corpus a tenth the size and fewer rounds, for trying things out. Progress goes to stderr,
 * the table to stdout; the table, the glob size table and the machine are also written to
 * bench-data/results.md for docs/benchmarks.md.
 *
 * Not part of the test suite or CI: the figures are for people, and the machines are noisy.
 */
import { join } from "node:path";
import {
  type Corpus,
  dataDirFor,
  FULL,
  generatedCorpus,
  QUICK,
  realCorpus,
  TEN,
} from "./corpus.ts";
import { listBench, searchBench } from "./fs_bench.ts";
import { globBench } from "./glob_bench.ts";
import { overheadBench } from "./overhead_bench.ts";
import { startupBench } from "./startup_bench.ts";
import { memoryBench } from "./memory_bench.ts";
import { promptBench } from "./prompt_bench.ts";
import { textCallsBench } from "./text_calls_bench.ts";
import { snapshotBench } from "./snapshot_bench.ts";
import { keepBench } from "./keep_bench.ts";
import { tokensBench } from "./tokens_bench.ts";
import { renderBench } from "./render_bench.ts";
import { highlightBench } from "./highlight_bench.ts";
import { formatBytes } from "./measure.ts";
import { type Row, summaryTable } from "./report.ts";

const SECTIONS = [
  "search",
  "list",
  "glob",
  "overhead",
  "startup",
  "memory",
  "prompt",
  "textcalls",
  "snapshot",
  "tokens",
  "render",
  "highlight",
] as const;
type Section = typeof SECTIONS[number];

interface Options {
  quick: boolean;
  /** Also the corpus ten times `gen` (search, list, memory, snapshot). */
  ten: boolean;
  only: Set<Section>;
  rounds: number;
  real: boolean;
}

function parseArgs(args: string[]): Options {
  let quick = false;
  let ten = false;
  let only = new Set<Section>(SECTIONS);
  let rounds = 0;
  let real = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const eq = a.indexOf("=");
      if (eq >= 0) return a.slice(eq + 1);
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--quick") quick = true;
    else if (a === "--ten") ten = true;
    else if (a === "--no-real") real = false;
    else if (a.startsWith("--only")) {
      const names = value().split(",").map((s) => s.trim()).filter(Boolean);
      for (const n of names) {
        if (!(SECTIONS as readonly string[]).includes(n)) {
          throw new Error(`unknown section '${n}'; the sections are ${SECTIONS.join(", ")}`);
        }
      }
      only = new Set(names as Section[]);
    } else if (a.startsWith("--rounds")) {
      rounds = Number(value());
      if (!Number.isInteger(rounds) || rounds < 1) {
        throw new Error("--rounds takes a whole number ≥ 1");
      }
    } else if (a === "-h" || a === "--help") {
      console.log(
        "deno task bench [--quick] [--only search,list,glob,overhead,startup,memory,prompt,textcalls,snapshot,tokens,render,highlight] " +
          "[--rounds N] [--no-real] [--ten]",
      );
      Deno.exit(0);
    } else throw new Error(`unknown argument '${a}'`);
  }
  return { quick, ten, only, rounds: rounds || (quick ? 3 : 5), real };
}

async function commandLine(program: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "null" })
      .output();
    return new TextDecoder().decode(out.stdout).split("\n")[0].trim();
  } catch {
    return "(not installed)";
  }
}

/** nproc, memory, CPU model and tool versions, for the record (Deno reads /proc only with -A). */
async function machine(): Promise<string[]> {
  const cpu = (await commandLine("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo"]))
    .replace(/^model name\s*:\s*/, "") || "unknown";
  const memKb = Number(
    (await commandLine("sh", ["-c", "grep MemTotal /proc/meminfo"])).match(/(\d+)/)?.[1] ?? NaN,
  );
  return [
    `CPU: ${cpu}, ${await commandLine("nproc", [])} cores (nproc)`,
    `memory: ${Number.isFinite(memKb) ? formatBytes(memKb * 1024) : "unknown"}`,
    `deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ${Deno.build.target}`,
    `${await commandLine("rg", ["--version"])}; ${await commandLine("fdfind", [
      "--version",
    ])}; ${await commandLine("grep", ["--version"])}; ${await commandLine("find", ["--version"])}`,
  ];
}

async function run(options: Options): Promise<void> {
  const repo = join(new URL(".", import.meta.url).pathname, "..", "..");
  const dataDir = dataDirFor(import.meta.url);
  await Deno.mkdir(dataDir, { recursive: true });
  const log = (line: string) => console.error(`· ${line}`);
  const started = performance.now();
  const rows: Row[] = [];
  let globTable = "";
  const wants = (s: Section) => options.only.has(s);

  const corpora: Corpus[] = [];
  if (wants("search") || wants("list") || wants("memory") || wants("snapshot")) {
    corpora.push(await generatedCorpus(dataDir, options.quick ? QUICK : FULL, log));
    if (options.real) corpora.push(await realCorpus(dataDir, log));
    if (options.ten) corpora.push(await generatedCorpus(dataDir, TEN, log));
    for (const c of corpora) {
      log(`corpus ${c.name}: ${c.files} files, ${formatBytes(c.bytes)} at ${c.root}`);
    }
  }
  const fsOptions = { rounds: options.rounds, log };
  // The ten-times corpus without warm-ups or the process-wall session: a search of it takes a
  // quarter of a minute.
  const optionsFor = (c: Corpus) => c.name === TEN.name ? { ...fsOptions, lean: true } : fsOptions;
  if (wants("search")) {
    for (const c of corpora) rows.push(...await searchBench(c, optionsFor(c)));
  }
  if (wants("list")) { for (const c of corpora) rows.push(...await listBench(c, optionsFor(c))); }
  if (wants("memory")) rows.push(...await memoryBench(corpora[0], dataDir, options.quick, log));
  const tenfold = corpora.find((c) => c.name === TEN.name);
  if (wants("memory") && tenfold) rows.push(...await memoryBench(tenfold, null, false, log));
  if (wants("glob")) {
    const g = await globBench(options.quick, log);
    rows.push(...g.rows);
    globTable = g.sizeTable;
  }
  if (wants("overhead")) rows.push(...await overheadBench(1_000, log));
  if (wants("startup")) rows.push(...await startupBench(repo, dataDir, options.rounds, log));
  if (wants("prompt")) rows.push(...promptBench(log));
  if (wants("textcalls")) rows.push(...await textCallsBench(options.quick, log));
  if (wants("snapshot")) {
    rows.push(...await snapshotBench(corpora[0], fsOptions));
    rows.push(...await keepBench(corpora[0], fsOptions));
  }
  if (wants("snapshot") && tenfold) rows.push(...await snapshotBench(tenfold, fsOptions));
  if (wants("tokens")) rows.push(...await tokensBench(repo, log));
  if (wants("render")) rows.push(...await renderBench(repo, options.rounds, log));
  if (wants("highlight")) rows.push(...await highlightBench(dataDir, options.rounds, log));

  const table = summaryTable(rows);
  const about = await machine();
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const header = `Brave Bot benchmarks, ${new Date().toISOString()}${
    options.quick ? " (--quick)" : ""
  }; medians of ${options.rounds} alternated rounds after a warm-up; ${seconds} s in all`;
  console.log(`\n${header}\n\n${table}\n`);
  if (globTable) console.log(`glob matcher, time per match by name length:\n\n${globTable}\n`);
  console.log(about.join("\n"));
  const missed = rows.filter((r) => r.met === false);
  if (missed.length) {
    console.log(`\nmissed targets: ${missed.map((r) => `${r.bench} / ${r.case}`).join("; ")}`);
  }
  await Deno.writeTextFile(
    join(dataDir, options.quick ? "results-quick.md" : "results.md"),
    [header, "", table, "", globTable, "", ...about.map((l) => `- ${l}`), ""].join("\n"),
  );
}

if (import.meta.main) {
  let options: Options;
  try {
    options = parseArgs(Deno.args);
  } catch (e) {
    console.error(`bench: ${(e as Error).message}`);
    Deno.exit(2);
  }
  await run(options);
  // Exit explicitly: the textcalls bench's regex Worker can be stuck inside V8 on a hostile
  // pattern, where terminate() does not stop it, and a live Worker keeps the process running
  // (at 100% CPU) after the table is printed.
  Deno.exit(0);
}
