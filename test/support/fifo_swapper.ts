/**
 * A process racing the effect worker with a FIFO: the regular file at `abs` and a FIFO take turns
 * at its name, over and over, each keeping its own inode (a hard link holds the file while the
 * FIFO is in place, and the FIFO's own name lies in another folder). A worker that checks the
 * path, finds the file, and then opens the FIFO without `O_NONBLOCK` waits in that open for a
 * writer that never comes: {@link settleOrRelease} tells such a stuck call from a slow one, and
 * frees it by opening the FIFO for writing. Bounded: `times` turns or `ms`, whichever first.
 */
import { closeSync, constants, openSync } from "node:fs";

/** Makes a FIFO at `path` (there is no Deno or node:fs call for it). */
export async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  if (made.code !== 0) throw new Error(`mkfifo failed: ${new TextDecoder().decode(made.stderr)}`);
}

export interface FifoSwapper {
  /** Whether it is still swapping (it ends on its own once its bound is reached). */
  readonly running: boolean;
  /** Ends it (if it has not ended) and puts the regular file back at `abs`. */
  stop(): Promise<void>;
}

/**
 * Starts the swapper, once it has begun: `fifo` is an existing FIFO on the same file system as
 * `abs`.
 */
export async function startFifoSwapper(
  abs: string,
  fifo: string,
  { times = 1_000_000, ms = 2500 } = {},
): Promise<FifoSwapper> {
  const script = `
    const [abs, fifo, times, ms] = Deno.args;
    const end = Date.now() + Number(ms);
    for (let i = 0; i < Number(times) && (i % 256 !== 0 || Date.now() < end); i++) {
      try {
        Deno.linkSync(abs, abs + ".hold");
        Deno.linkSync(fifo, abs + ".fifo");
        Deno.renameSync(abs + ".fifo", abs);
        Deno.renameSync(abs + ".hold", abs);
      } catch { /* left half done: put back below, once it ends */ }
    }`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script, abs, fifo, String(times), String(ms)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let running = true;
  child.status.then(() => running = false);
  // Begun once the FIFO has had a second name (bounded: a swapper that cannot start ends).
  for (let i = 0; i < 500 && running && (Deno.lstatSync(fifo).nlink ?? 2) < 2; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    get running() {
      return running;
    },
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* it ended */ }
      await child.status;
      try {
        Deno.renameSync(abs + ".hold", abs);
      } catch { /* the file was in place */ }
      try {
        Deno.removeSync(abs + ".fifo");
      } catch { /* not there */ }
    },
  };
}

/**
 * Whether a process has the FIFO open for reading (or waits in its open), and if so frees it:
 * an open for writing that does not wait succeeds only then (else `ENXIO`), and lets a reader
 * waiting in its open go on (to find no bytes).
 */
export function releaseFifo(fifo: string): boolean {
  let fd: number;
  try {
    fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  closeSync(fd);
  return true;
}

/**
 * How long a call may stay pending before the FIFO is looked at. Not a speed target: a call
 * that opens without waiting settles in microseconds, and one waiting in the open of a FIFO
 * never does; this only bounds how long the test waits to tell them apart.
 */
const LOOK_AFTER_MS = 3000;

/**
 * Waits for `call`. When it is still pending after {@link LOOK_AFTER_MS} while a reader holds
 * the FIFO, the call is stuck in its open: the FIFO is released (the call then settles) and
 * `hung` says so. A call that is slow but not on the FIFO is waited for.
 */
export async function settleOrRelease<T>(
  call: Promise<T>,
  fifo: string,
): Promise<{ value: T; hung: boolean }> {
  let hung = false;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settled = await Promise.race([
      call.then((value) => ({ value })),
      new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), LOOK_AFTER_MS)),
    ]);
    clearTimeout(timer);
    if (settled !== null) return { value: settled.value, hung };
    if (releaseFifo(fifo)) hung = true;
  }
}
