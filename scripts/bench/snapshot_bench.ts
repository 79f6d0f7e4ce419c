/**
 * What finding a run's file changes costs (docs/contract.md §13.5): the two snapshots every run
 * takes, in the effect worker behind its narrowed permissions, and their comparison, on the
 * generated corpus (20,000 files); beside `find -printf` printing the same keys, for scale. A run
 * that starts in a second in which the workspace changed waits for the next one; that wait is not
 * counted here (it happens only right after a change).
 */
import { EffectWorker } from "../../src/worker/client.ts";
import { compareSnapshots, type Snapshot } from "../../src/policy/run_changes.ts";
import { takeSnapshot as takePoolSnapshot } from "../../src/policy/snapshot_parts.ts";
import { DEFAULT_LIMITS } from "../../src/state/settings.ts";
import { poolSize } from "../../src/worker/pool.ts";
import type { Corpus } from "./corpus.ts";
import { systemBinds } from "../../src/worker/kernel.ts";
import {
  alternate,
  commandContender,
  type Contender,
  formatMs,
  formatTiming,
  have,
  runCommand,
} from "./measure.ts";
import type { Row } from "./report.ts";
import { formatRatio, ratio } from "./report.ts";

/** One snapshot of `root`, as a run takes it: over the whole pool of `worker`, the settings' bounds. */
export async function takeSnapshot(worker: EffectWorker, root: string): Promise<Snapshot> {
  const { snapshotEntries, snapshotChanges, snapshotMarks } = DEFAULT_LIMITS;
  const snapshot = await takePoolSnapshot(worker.pool, {
    root,
    skip: [],
    maxEntries: snapshotEntries,
    maxChanges: snapshotChanges,
    maxMarks: snapshotMarks,
  });
  if (snapshot.blind.includes(".")) throw new Error("snapshot failed");
  return snapshot;
}

export async function snapshotBench(
  corpus: Corpus,
  options: { rounds: number; log: (s: string) => void },
): Promise<Row[]> {
  const scratch = await Deno.makeTempDir({ prefix: "bb-bench-snap-" });
  // The pool a session has (pool.ts), whose workers each walk a part (snapshot_parts.ts).
  const worker = EffectWorker.start({ workspace: corpus.root, scratch, run: false }, poolSize());
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
    // The keys a snapshot holds, every entry, links not followed (-P), NUL-separated names.
    const findArgs = ["-P", corpus.root, "-printf", "%D %i %s %T@ %C@ %y %P\\0"];
    const twice = (name: string, program: string, args: string[]): Contender => ({
      name,
      run: async () => {
        for (let i = 0; i < 2; i++) {
          const out = await runCommand(program, args);
          if (out.code !== 0) {
            throw new Error(`${name}: exit ${out.code}: ${out.stderr.slice(0, 300)}`);
          }
        }
      },
    });
    const hasFind = await have("find");
    const bwrap = await have("bwrap");
    if (hasFind) {
      contenders.push(commandContender("find -printf (once)", "find", findArgs));
      contenders.push(twice("find -printf, two walks", "find", findArgs));
    }
    if (hasFind && bwrap) {
      // Confined as the kernel wall's child is: no namespace shared, no capability, only the
      // system's libraries, find itself and the tree (read-only) visible.
      const find = Deno.realPathSync("/usr/bin/find");
      contenders.push(twice("find -printf confined (bwrap), two walks", "bwrap", [
        "--unshare-all",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        ...systemBinds(),
        "--ro-bind",
        find,
        find,
        "--ro-bind",
        corpus.root,
        corpus.root,
        "--remount-ro",
        "/",
        "--",
        find,
        ...findArgs,
      ]));
    }
    const timings = await alternate(contenders, options.rounds);
    const ours = timings[0];
    const once = timings.find((t) => t.name === "find -printf (once)");
    const two = timings.find((t) => t.name === "find -printf, two walks");
    const confined = timings.find((t) => t.name.startsWith("find -printf confined"));
    options.log(
      `snapshot ${corpus.name}: ${formatTiming(ours)} for ${entries} entries · ${
        timings.slice(1).map((t) => `${t.name} ${formatTiming(t)}`).join(" · ")
      } · load ${ours.load.toFixed(1)}`,
    );
    const against = confined ?? two;
    return [{
      bench: "run snapshots",
      case: `${corpus.name}: ${entries} entries, before and after one run`,
      ours: formatTiming(ours),
      others: [
        once && `find once ${formatMs(once.median)}`,
        two && `twice ${formatTiming(two)}`,
        confined && `twice confined ${formatTiming(confined)}`,
        `load ${ours.load.toFixed(1)}`,
      ].filter(Boolean).join(" · "),
      ratio: against ? formatRatio(ratio(ours.median, against.median), "two walks") : "",
      target: "≤ 1.5× two walks",
      met: against ? ratio(ours.median, against.median) <= 1.5 : null,
    }];
  } finally {
    worker.terminate();
    await Deno.remove(scratch, { recursive: true });
  }
}
