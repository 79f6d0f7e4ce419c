/**
 * What keeping a run's earlier bytes costs (issue 27, src/policy/run_keep.ts): before each run the
 * files the snapshot recorded, up to 1 MiB each, are read through the effect worker and kept in the
 * session's store within its budget. Measured on the generated corpus (20,000 files), from the
 * snapshot the run takes anyway: a session's first run (every file read, 64 MiB kept, the rest
 * hashed), the same with no budget (every file kept), and a later run with nothing changed since
 * (every file reused by its key). A fresh session folder is made and removed inside each first-run
 * round. Each case also gives the CPU time it took, of this process and the processes beneath it
 * (the kernel wall's child), from the bench's CPU probe (`alternate`'s samples): the machine is
 * shared, and wall time moves with its load. (Read from this process, /proc needs every
 * permission, which the bench does not have: the rows said 0.)
 */
import { EffectWorker } from "../../src/worker/client.ts";
import { takeSnapshot } from "./snapshot_bench.ts";
import { ChangeLog } from "../../src/policy/change_log.ts";
import { keepBeforeRun } from "../../src/policy/run_keep.ts";
import type { Corpus } from "./corpus.ts";
import { alternate, formatBytes, formatMs } from "./measure.ts";
import type { Row } from "./report.ts";

export async function keepBench(
  corpus: Corpus,
  options: { rounds: number; log: (s: string) => void },
): Promise<Row[]> {
  const scratch = await Deno.makeTempDir({ prefix: "bb-bench-keep-" });
  const worker = EffectWorker.start({ workspace: corpus.root, scratch, run: false }, 1);
  const workspace = { root: corpus.root, protectedDirs: [], caseInsensitive: false };
  const warmDir = await Deno.makeTempDir({ prefix: "bb-bench-keep-warm-" });
  const warm = await ChangeLog.open(warmDir);
  try {
    const before = await takeSnapshot(worker, corpus.root);
    const stored: Record<string, number> = {};
    const first = (name: string, budget: number) => ({
      name,
      run: async () => {
        const dir = await Deno.makeTempDir({ prefix: "bb-bench-keep-first-" });
        try {
          const { log } = await ChangeLog.open(dir);
          log.budget = budget;
          await keepBeforeRun({ changes: log, worker, workspace }, before);
          stored[name] = log.storedBytes;
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
    await keepBeforeRun({ changes: warm.log, worker, workspace }, before);
    const timings = await alternate([
      first("first run of a session (64 MiB budget)", warm.log.budget),
      first("first run, no budget", Infinity),
      {
        name: "later run, nothing changed",
        run: () => keepBeforeRun({ changes: warm.log, worker, workspace }, before),
      },
    ], options.rounds);
    const files = [...before.entries.values()].filter((e) => e.kind === "f").length;
    return timings.map((t) => {
      const cpuMs = t.cpuMedian;
      options.log(`keep ${corpus.name}: ${t.name}: ${formatMs(t.median)}, CPU ${formatMs(cpuMs)}`);
      const kept = stored[t.name];
      return {
        bench: "run: bytes kept before it",
        case: `${corpus.name}: ${files} files, ${t.name}`,
        ours: `${formatMs(t.median)} (CPU ${formatMs(cpuMs)})`,
        others: kept === undefined ? "all reused" : `${formatBytes(kept)} kept`,
        ratio: "",
        target: "reported",
        met: null,
      };
    });
  } finally {
    await worker.terminate();
    await Deno.remove(scratch, { recursive: true });
    await Deno.remove(warmDir, { recursive: true });
  }
}
