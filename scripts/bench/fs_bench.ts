/**
 * search against `rg -F` and `grep -rF`, and list_files against `fdfind` and `find`, over one
 * corpus. Brave Bot is measured in-process through a real session (policy layer, audit log,
 * effect worker), the others as programs whose output is read through a pipe. Ignore rules are
 * off everywhere: the corpora hold no `.gitignore`, and rg and fd are told not to look.
 *
 * The tools cap what the planner is shown (200 matching lines, 1,000 entries) and stop early
 * once the cap is reached, which rg and fd do not; so a capped case is measured as the planner
 * meets it, and again with the cap lifted, which does the same work as the other programs and
 * is the row the target is judged on.
 */
import { searchTool } from "../../src/tools/search.ts";
import { listFilesTool } from "../../src/tools/list_files.ts";
import type { Limits } from "../../src/state/settings.ts";
import type { ToolDef } from "../../src/tools/tool.ts";
import type { Corpus } from "./corpus.ts";
import {
  alternate,
  commandContender,
  type Contender,
  formatMs,
  formatTiming,
  have,
} from "./measure.ts";
import { formatRatio, ratio, type Row } from "./report.ts";
import { type BenchSession, openBenchSession } from "./session.ts";

const UNCAPPED: Partial<Limits> = {
  searchLines: Number.MAX_SAFE_INTEGER,
  listEntries: Number.MAX_SAFE_INTEGER,
};

/** The last bracketed note of a tool result: its counts ("7 matching lines in 7 files; …"). */
function counts(content: string): string {
  const notes = content.split("\n").filter((l) => l.startsWith("["));
  return notes.join(" ");
}

interface ToolContender extends Contender {
  lastContent: string;
}

function toolContender(
  name: string,
  call: () => Promise<{ content: string }>,
): ToolContender {
  const c: ToolContender = {
    name,
    lastContent: "",
    async run() {
      c.lastContent = (await call()).content;
    },
  };
  return c;
}

/**
 * Where the session's worker has the kernel wall, a second session on the old in-process wall,
 * alternated with it in the same rounds: what the kernel wall costs or saves.
 */
async function processWallSession(session: BenchSession, root: string, lean?: boolean) {
  if (lean || session.open.policy.worker.wall !== "kernel") return null;
  return await openBenchSession(root, "process");
}

function wallName(session: BenchSession): string {
  return `(${session.open.policy.worker.wall} wall)`;
}

export interface FsBenchOptions {
  rounds: number;
  log(line: string): void;
  /** Leave out the warm-up and the process-wall session (the ten-times corpus: minutes a run). */
  lean?: boolean;
}

export async function searchBench(corpus: Corpus, options: FsBenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const session = await openBenchSession(corpus.root);
  const old = await processWallSession(session, corpus.root, options.lean);
  const hasRg = await have("rg");
  try {
    const cases: [string, string, boolean][] = [
      ["rare", corpus.needles.rare, false],
      ["common (first 200 lines)", corpus.needles.common, false],
      ["common (all lines)", corpus.needles.common, true],
      ["none", corpus.needles.none, false],
    ];
    for (const [label, pattern, uncapped] of cases) {
      const ours = toolContender(
        "bravebot",
        () =>
          session.call(
            searchTool as ToolDef<never>,
            { pattern },
            uncapped ? UNCAPPED : undefined,
          ),
      );
      const rg = commandContender(
        "rg",
        "rg",
        [
          "-F",
          "-n",
          "--no-ignore",
          "--hidden",
          "--no-messages",
          "--max-filesize",
          "10M",
          "--",
          pattern,
          ".",
        ],
        [0, 1],
        corpus.root,
      );
      const grep = commandContender(
        "grep",
        "grep",
        ["-r", "-F", "-n", "-I", "--", pattern, "."],
        [0, 1],
        corpus.root,
      );
      const processWall = old &&
        toolContender(
          "bravebot (process wall)",
          () =>
            old.call(searchTool as ToolDef<never>, { pattern }, uncapped ? UNCAPPED : undefined),
        );
      const contenders: Contender[] = hasRg ? [ours, rg, grep] : [ours, grep];
      if (processWall) contenders.push(processWall);
      const t = await alternate(contenders, options.rounds, options.lean ? 0 : 1);
      const [o, r, g] = hasRg ? t : [t[0], null, t[1]];
      const p = processWall ? t[t.length - 1] : null;
      const capped = !uncapped && label.startsWith("common");
      options.log(
        `search ${corpus.name} ${label}: bravebot ${wallName(session)} ${formatTiming(o)} (${
          counts(ours.lastContent)
        })${p ? ` · process wall ${formatTiming(p)}` : ""} · rg ${r ? formatTiming(r) : "—"} (${
          rg.last?.stdoutLines ?? "?"
        } lines) · grep ${formatTiming(g)} (${grep.last?.stdoutLines ?? "?"} lines) · load ${
          o.load.toFixed(1)
        }`,
      );
      const vsRg = r ? ratio(o.median, r.median) : NaN;
      const vsGrep = ratio(o.median, g.median);
      rows.push({
        bench: `search ${corpus.name}`,
        case: label,
        ours: formatTiming(o),
        others: `${p ? `process wall ${formatMs(p.median)} · ` : ""}${
          r ? `rg ${formatTiming(r)} · ` : ""
        }grep ${formatMs(g.median)} · load ${o.load.toFixed(1)}`,
        ratio: `${formatRatio(vsRg, "rg")}, ${formatRatio(vsGrep, "grep")}`,
        target: capped ? "(stops early)" : "≤ 1.5× rg, < grep",
        met: capped ? null : (Number.isFinite(vsRg) ? vsRg <= 1.5 : true) && vsGrep < 1,
      });
    }
  } finally {
    await session.close();
    await old?.close();
  }
  return rows;
}

export async function listBench(corpus: Corpus, options: FsBenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const session = await openBenchSession(corpus.root);
  const old = await processWallSession(session, corpus.root, options.lean);
  const fd = (await have("fdfind")) ? "fdfind" : (await have("fd")) ? "fd" : null;
  try {
    const cases: [string, string | undefined, boolean][] = [
      ["no pattern (first 1,000)", undefined, false],
      ["no pattern (all)", undefined, true],
      ["`**/*.ts` (first 1,000)", "**/*.ts", false],
      ["`**/*.ts` (all)", "**/*.ts", true],
    ];
    for (const [label, pattern, uncapped] of cases) {
      const ours = toolContender(
        "bravebot",
        () =>
          session.call(
            listFilesTool as ToolDef<never>,
            pattern ? { pattern } : {},
            uncapped ? UNCAPPED : undefined,
          ),
      );
      // Every entry (files and directories, hidden ones too), or every name ending in .ts.
      const fdArgs = pattern
        ? ["--hidden", "--no-ignore", "--glob", "*.ts", "."]
        : ["--hidden", "--no-ignore", ".", "."];
      const findArgs = pattern ? [".", "-name", "*.ts"] : [".", "-mindepth", "1"];
      const fdC = fd ? commandContender("fd", fd, fdArgs, [0], corpus.root) : null;
      const findC = commandContender("find", "find", findArgs, [0], corpus.root);
      const processWall = old &&
        toolContender(
          "bravebot (process wall)",
          () =>
            old.call(
              listFilesTool as ToolDef<never>,
              pattern ? { pattern } : {},
              uncapped ? UNCAPPED : undefined,
            ),
        );
      const contenders: Contender[] = fdC ? [ours, fdC, findC] : [ours, findC];
      if (processWall) contenders.push(processWall);
      const t = await alternate(contenders, options.rounds, options.lean ? 0 : 1);
      const [o, f, fi] = fdC ? t : [t[0], null, t[1]];
      const p = processWall ? t[t.length - 1] : null;
      const capped = !uncapped;
      options.log(
        `list_files ${corpus.name} ${label}: bravebot ${wallName(session)} ${formatTiming(o)} (${
          counts(ours.lastContent)
        })${p ? ` · process wall ${formatTiming(p)}` : ""} · fd ${f ? formatTiming(f) : "—"} (${
          fdC?.last?.stdoutLines ?? "?"
        } lines) · find ${formatTiming(fi)} (${findC.last?.stdoutLines ?? "?"} lines) · load ${
          o.load.toFixed(1)
        }`,
      );
      const vsFd = f ? ratio(o.median, f.median) : NaN;
      rows.push({
        bench: `list_files ${corpus.name}`,
        case: label,
        ours: formatTiming(o),
        others: `${p ? `process wall ${formatMs(p.median)} · ` : ""}${
          f ? `fd ${formatTiming(f)} · ` : ""
        }find ${formatMs(fi.median)} · load ${o.load.toFixed(1)}`,
        ratio: `${formatRatio(vsFd, "fd")}, ${formatRatio(ratio(o.median, fi.median), "find")}`,
        target: capped ? "(stops early)" : "≤ 1.2× fd",
        met: capped ? null : Number.isFinite(vsFd) ? vsFd <= 1.2 : null,
      });
    }
  } finally {
    await session.close();
    await old?.close();
  }
  return rows;
}
