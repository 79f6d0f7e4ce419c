/**
 * A cgroup v2 folder per unconfined run (docs/contract.md §13.5: nothing a command starts outlives
 * the run): every stage enters it before its program starts, whatever the program then does
 * (`setsid`, double forks) its processes stay in it, and once the stages have exited the folder
 * is killed whole with `cgroup.kill` and removed. The policy layer found the folder to make it
 * in (policy/leftovers.ts); this module only acts.
 *
 * Deno refuses to touch `/sys` and `/proc` without every permission, and we use no FFI, so every
 * operation here is a plain file operation done by a program of the machine: `mkdir` and `rmdir`
 * for the folder, and `sh` for writing a pid into `cgroup.procs` (the stage's own shell writes
 * `$$`, then `exec`s the program: it is the same process) and `1` into `cgroup.kill`.
 */
import type { SpawnCgroup } from "../protocol.ts";

/** The exit status of a stage whose process could not enter the run's cgroup (nothing ran). */
export const CGROUP_ENTER_FAILED = 125;

/**
 * The wrapper a stage starts through: `sh -c ENTER bravebot-cgroup DIR PROGRAM ARGS…` moves the
 * shell into DIR and becomes PROGRAM. A stage that cannot enter does not run at all.
 */
const ENTER = `{ echo $$ > "$1/cgroup.procs"; } 2>/dev/null || exit ${CGROUP_ENTER_FAILED}
shift
exec "$@"`;

/**
 * Kills everything in DIR (and in any folder a process made beneath it), waits a bounded number
 * of reads for it to be empty, and removes it: exit 0 when nothing is left in it (removed, or
 * kept because a process made a folder in it), 4 when something still is, 3 when it could not
 * be killed.
 */
const END = `{ echo 1 > "$1/cgroup.kill"; } 2>/dev/null || exit 3
i=0
while [ "$i" -lt 200 ]; do
  [ -r "$1/cgroup.events" ] || exit 3
  populated=
  while read -r key value; do
    if [ "$key" = populated ]; then populated=$value; fi
  done < "$1/cgroup.events"
  if [ "$populated" = 0 ]; then
    "$2" -- "$1" 2>/dev/null
    exit 0
  fi
  i=$((i + 1))
done
exit 4`;

/** How many times the end is tried, and how long apart, before the cgroup counts as not ended. */
const END_TRIES = 50;
const END_PAUSE_MS = 20;

let runs = 0;

async function quietly(program: string, args: string[]): Promise<number> {
  try {
    const out = await new Deno.Command(program, {
      args,
      clearEnv: true,
      env: {},
      stdin: "null",
      stdout: "null",
      stderr: "null",
      // Out of the terminal's group, so the person's Ctrl-C does not end the clean-up.
      detached: true,
    }).output();
    return out.code;
  } catch {
    return -1;
  }
}

/** Makes this run's folder under the one found; null when it cannot be made. */
export async function makeRunCgroup(cgroup: SpawnCgroup): Promise<string | null> {
  const dir = `${cgroup.parent}/bravebot-${Deno.pid}-${++runs}-${crypto.randomUUID().slice(0, 8)}`;
  return await quietly(cgroup.mkdir, ["--", dir]) === 0 ? dir : null;
}

/** A stage's argv, started inside the run's folder `dir`. */
export function enterArgv(cgroup: SpawnCgroup, dir: string, argv: string[]): string[] {
  return [cgroup.sh, "-c", ENTER, "bravebot-cgroup", dir, ...argv];
}

/**
 * Ends every process in the run's folder and removes it. True only once the kernel says no
 * process is left in it (`populated 0`).
 */
export async function endRunCgroup(cgroup: SpawnCgroup, dir: string): Promise<boolean> {
  for (let i = 0; i < END_TRIES; i++) {
    const code = await quietly(cgroup.sh, ["-c", END, "bravebot-cgroup", dir, cgroup.rmdir]);
    if (code === 0) return true;
    if (code !== 4) return false;
    await new Promise((r) => setTimeout(r, END_PAUSE_MS));
  }
  return false;
}
