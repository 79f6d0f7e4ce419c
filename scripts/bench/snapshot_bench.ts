/**
 * What finding a run's file changes costs (docs/contract.md §13.5): the two snapshots every run
 * takes, in the effect worker behind its narrowed permissions, and their comparison, on the
 * generated corpus (20,000 files); beside `find -printf` printing the same keys, for scale. A run
 * that starts in a second in which the workspace changed waits for the next one; that wait is not
 * counted here (it happens only right after a change).
 */
import { EffectWorker } from "../../src/worker/client.ts";
import {
  compareSnapshots,
  type Snapshot,
  SNAPSHOT_MAX_ENTRIES,
  unpackSnapshot,
} from "../../src/policy/run_changes.ts";
import type { Corpus } from "./corpus.ts";
import { alternate, commandContender, type Contender, formatMs, have } from "./measure.ts";
import type { Row } from "./report.ts";
import { formatRatio, ratio } from "./report.ts";

/** One snapshot of `root`, as a run takes it, through `worker`. */
export async function takeSnapshot(worker: EffectWorker, root: string): Promise<Snapshot> {
  const r = await worker.call({ op: "snapshot", root, skip: [], maxEntries: SNAPSHOT_MAX_ENTRIES });
  if (!r.ok) throw new Error(`snapshot failed: ${r.error.name}`);
  return unpackSnapshot(r.value);
}

export async function snapshotBench(
  corpus: Corpus,
  options: { rounds: number; log: (s: string) => void },
): Promise<Row[]> {
  const scratch = await Deno.makeTempDir({ prefix: "bb-bench-snap-" });
  const worker = EffectWorker.start({ workspace: corpus.root, scratch, run: false }, 1);
  try {
    const take = () => takeSnapshot(worker, corpus.root);
    let entries = 0;
    const contenders: Contender[] = [{
      name: "brave bot: two snapshots and the comparison",
      run: async () => {
        const before = await take();
        const after = await take();
        entries = before.entries.size;
        compareSnapshots(before, after, Date.now());
      },
    }];
    if (await have("find")) {
      contenders.push(
        commandContender("find -printf (once)", "find", [
          corpus.root,
          "-printf",
          "%D %i %s %T@ %C@ %p\\n",
        ]),
      );
    }
    const timings = await alternate(contenders, options.rounds);
    const ours = timings[0].median;
    const find = timings[1]?.median;
    options.log(`snapshot ${corpus.name}: ${formatMs(ours)} for ${entries} entries`);
    return [{
      bench: "run snapshots",
      case: `${corpus.name}: ${entries} entries, before and after one run`,
      ours: formatMs(ours),
      others: find === undefined ? "" : `find -printf once: ${formatMs(find)}`,
      ratio: find === undefined ? "" : formatRatio(ratio(ours, find), "find (one walk)"),
      target: "reported",
      met: null,
    }];
  } finally {
    worker.terminate();
    await Deno.remove(scratch, { recursive: true });
  }
}
