/**
 * Processes a run leaves behind (docs/contract.md §13.5: nothing a command starts outlives the
 * run). A confined run's PID namespace ends with it. An unconfined one escapes its stages' process
 * groups as soon as it calls `setsid`, so:
 *
 * - **Where a cgroup v2 folder of this process is writable**, every unconfined run starts in a
 *   folder of its own beneath it and is killed whole (`cgroup.kill`) once its stages exited; the
 *   snapshot after the run is taken only when the kernel says nothing is left in it
 *   ({@link runCgroup} finds and tries the folder once a session; `worker/ops/cgroup.ts` acts).
 * - **Elsewhere** (macOS, most containers, a session whose cgroup belongs to root), or when a
 *   run's folder could not be emptied, what it left behind may still be writing. Until the next
 *   snapshot (the one before the next run) a **watch** stands: a file whose change time is at or
 *   after that run's start takes that run's label, and a name the snapshot after it did not hold
 *   is an untrusted name; the next snapshot records every change since as that run's
 *   ({@link openLeftoverWatch}, {@link closeLeftoverWatch}). A leftover that waits past that
 *   snapshot is not seen: docs/trust.md says so.
 */
import type {
  ChangeRecords,
  FileLabels,
  Recording,
  RunMemory,
  TrustChanges,
  WorkspaceFiles,
} from "./capabilities.ts";
import type { Spawner } from "./sandbox.ts";
import type { OpenWatch, RunCgroupPlan } from "./session_memory.ts";
import type { SpawnCgroup } from "../worker/protocol.ts";
import { lookupOnPath, searchPath } from "./programs.ts";
import { type Integrity, label } from "../util/label.ts";
import {
  compareSnapshots,
  fingerprintFiles,
  hotToHashAgain,
  recordRunChanges,
  secondOf,
  type Snapshot,
} from "./run_changes.ts";
import type { RunChanges } from "./run_changes.ts";
import { err, ok, type Result } from "../util/result.ts";
import { type AuditLine, recordDone } from "./verdict.ts";

/**
 * Prints this process's cgroup v2 folder, when it and its `cgroup.procs` are writable: the `0::`
 * line of /proc/self/cgroup, placed under the cgroup2 mount of /proc/self/mountinfo whose root
 * holds it. Run by a machine `sh` (Deno does not open /proc without every permission); the
 * child's cgroup and mounts are this process's, inherited at its start.
 */
const LOCATE = `cg=
while IFS= read -r line; do
  case $line in 0::*) cg=\${line#0::} ;; esac
done < /proc/self/cgroup
case $cg in /*) ;; *) exit 10 ;; esac
case "$cg/" in */../*|*/./*) exit 11 ;; esac
while read -r _id _parent _dev root mnt rest; do
  case " $rest" in *" - cgroup2 "*) ;; *) continue ;; esac
  case "$root$mnt" in *\\\\*) continue ;; esac
  r=\${root%/}
  case $cg in
    "$r"|"$r"/*)
      rel=\${cg#"$r"}
      dir=\${mnt%/}\${rel%/}
      [ -n "$dir" ] || dir=/
      [ -w "$dir" ] && [ -w "$dir/cgroup.procs" ] || exit 12
      printf '%s\\n' "$dir"
      exit 0 ;;
  esac
done < /proc/self/mountinfo
exit 13`;

export type { RunCgroupPlan };

/**
 * The cgroup folder this session's unconfined runs are made in: found and tried once a session
 * (a `true` started in a run folder of its own, which must then be killed and found empty).
 */
export function runCgroup(
  policy: WorkspaceFiles & RunMemory,
  spawner: Spawner,
): Promise<RunCgroupPlan> {
  const known = policy.runState.cgroup;
  if (known) return known;
  const plan = findRunCgroup(policy.workspace.root, policy.scratch, spawner)
    .then((found): RunCgroupPlan =>
      found.ok ? { cgroup: found.value } : { cgroup: null, why: found.error }
    );
  policy.runState.cgroup = plan;
  return plan;
}

/** The folder found and tried (see {@link runCgroup}), or why there is none. */
export async function findRunCgroup(
  workspace: string,
  scratch: string,
  spawner: Spawner,
): Promise<Result<SpawnCgroup>> {
  if (Deno.build.os !== "linux") return err("cgroups exist only on Linux");
  // Programs of the machine, never ones the repository ships.
  const programs: Record<string, string> = {};
  for (const name of ["sh", "mkdir", "rmdir", "true"]) {
    const found = await lookupOnPath(name, searchPath(), workspace);
    if (!found.ok) return err(`no '${name}' program on PATH`);
    programs[name] = found.value;
  }
  const base = {
    stdin: null,
    cwd: scratch,
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: 10_000,
    maxOutputBytes: 4096,
  };
  const located = await spawner({
    ...base,
    stages: [{ program: programs.sh, args: ["-c", LOCATE, "bravebot-cgroup"] }],
  });
  if (!located.ok) return err(`the cgroup could not be looked for (${located.error})`);
  const parent = new TextDecoder().decode(located.value.stdout).replace(/\n$/, "");
  if (located.value.code !== 0 || !parent.startsWith("/") || parent.includes("\n")) {
    return err("this process's cgroup v2 folder is not writable here");
  }
  const cgroup = { parent, sh: programs.sh, mkdir: programs.mkdir, rmdir: programs.rmdir };
  const tried = await spawner({ ...base, stages: [{ program: programs.true, args: [] }], cgroup });
  if (!tried.ok || tried.value.code !== 0 || tried.value.cgroupEnded !== true) {
    return err("a run could not be started and ended in a cgroup folder of its own here");
  }
  return ok(cgroup);
}

/**
 * After an unconfined run whose processes were not all confirmed ended: until the next snapshot,
 * files changed since `since` take `integrity`, and names `after` did not hold are untrusted.
 * A hot file the run left as it was (`steady`) changed already in the second the run started,
 * so its change time cannot tell: its bytes and mode do.
 */
export function openLeftoverWatch(
  policy: WorkspaceFiles & TrustChanges & RunMemory,
  watch: OpenWatch,
): void {
  policy.runState.leftoverWatch = watch;
  const since = secondOf(watch.since);
  policy.watchLeftovers({
    since,
    integrity: watch.integrity,
    known: watch.after.entries,
    changedSince: async (rel) => {
      const print = watch.steady?.get(rel);
      const entry = watch.after.entries.get(rel);
      if (print !== undefined && entry !== undefined) {
        const now = await fingerprintFiles(policy, [[rel, entry]]);
        return now.get(rel) !== print;
      }
      const times = await policy.worker.call({
        op: "changeTimes",
        paths: [`${policy.workspace.root}/${rel}`],
      });
      const ctime = times.ok ? times.value[0] : null;
      return ctime === null || ctime >= since;
    },
  });
}

/** While a watch is open, the time from which the next snapshot must keep what changed. */
export function leftoverWatchSince(policy: RunMemory): number | undefined {
  return policy.runState.leftoverWatch?.afterBegun;
}

/**
 * The next snapshot, `now`, closes the watch: whatever changed since the snapshot after the run
 * is recorded with that run's label (and audited), as if the run had done it.
 */
export async function closeLeftoverWatch(
  policy: ChangeRecords & FileLabels & Recording & WorkspaceFiles & RunMemory,
  now: Snapshot,
): Promise<void> {
  const watch = policy.runState.leftoverWatch;
  if (!watch) return;
  policy.runState.leftoverWatch = null;
  policy.watchLeftovers(null);
  const steady = watch.steady;
  const hot = steady === undefined ? undefined : {
    before: steady,
    after: await fingerprintFiles(policy, hotToHashAgain(steady, watch.after, now)),
  };
  const changes = compareSnapshots(watch.after, now, watch.afterBegun, hot);
  const { created, changed, unsure, blind } = changes;
  if (created.length + changed.length + unsure.length + blind.length === 0) return;
  await recordRunChanges(policy, changes, watch.integrity);
  await recordDone(policy, leftoversLine(watch.command, watch.integrity, changes));
}

/** The line a closed watch leaves: what changed after the run, recorded as the run's, by rule. */
export function leftoversLine(
  command: string,
  integrity: Integrity,
  changes: Pick<RunChanges, "created" | "changed" | "unsure" | "removed" | "blind">,
): AuditLine {
  const { created, changed, unsure, removed, blind } = changes;
  return {
    tool: "run",
    routing: { pipeline: command },
    labels: { files: label(integrity, "pub") },
    decision: "files changed after the unconfined run ended",
    by: "rule",
    reason: `${created.length} created, ${changed.length + unsure.length} changed, ` +
      `${removed.length} removed, ${blind.length} folders not seen into, while processes it ` +
      "started may have been running",
  };
}
