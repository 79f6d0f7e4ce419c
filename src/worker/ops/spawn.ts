/**
 * Runs a pipeline of programs with no shell: each stage is an argv handed to the OS as is, and
 * each stage's stdout feeds the next stage's stdin. The first stage gets the bytes it was given
 * or an empty stream — never the terminal. Each stage leads its own session and process group
 * (and so has no controlling terminal), which lets a timeout or an output flood stop the stage
 * and every child it started.
 *
 * Every way out of here ends with all stages reaped and every stream closed: a timeout, a flood,
 * a stage that leaves a background child holding a pipe, a stage that never reads its stdin.
 *
 * A timeout and a flood kill at once. The person stopping a run (Ctrl-C) climbs a ladder instead,
 * the way a terminal would treat a foreground command: SIGINT, then SIGTERM, then SIGKILL
 * ({@link STOP_LADDER}, climbed only by {@link Pipeline.climb}), so a command that cleans up on
 * SIGINT gets to.
 *
 * A process that left its group (`setsid`) escapes those signals. With `request.cgroup` (an
 * unconfined run where a cgroup is writable, ops/cgroup.ts) every stage starts in a cgroup
 * folder of the run's own, and once the stages have exited everything left in it is killed, so
 * nothing the run started outlives it; the result says whether that was confirmed.
 */
import type { OutputChunk, SpawnRequest, SpawnResult } from "../protocol.ts";
import { endRunCgroup, enterArgv, makeRunCgroup } from "./cgroup.ts";

/**
 * After the last stage exits, how long a leftover process that escaped its group (it called
 * setsid) may keep a pipe open before the streams are closed on it. Without this, a daemon
 * started by a finished command would hold the run until its timeout.
 */
const POST_EXIT_GRACE_MS = 1_000;

interface Collected {
  bytes: Uint8Array;
  /** Every byte seen, including those past the cap that were dropped. */
  total: number;
}

/** Reads a stream, keeping at most `cap` bytes; past it, calls `onOverflow` once. */
function collect(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onOverflow: () => void,
  readers: ReadableStreamDefaultReader<Uint8Array>[],
  onChunk?: (bytes: Uint8Array) => void,
): Promise<Collected> {
  const reader = stream.getReader();
  readers.push(reader);
  return (async () => {
    const chunks: Uint8Array[] = [];
    let kept = 0;
    let total = 0;
    let overflowed = false;
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        onChunk?.(value);
        total += value.length;
        if (kept < cap) {
          const take = value.subarray(0, cap - kept);
          chunks.push(take.slice());
          kept += take.length;
        }
        if (total > cap && !overflowed) {
          overflowed = true;
          onOverflow();
        }
      }
    } catch { /* the stream was cancelled or the stage killed mid-stream: keep what was read */ }
    return { bytes: concat(chunks), total };
  })();
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
}

function check(request: SpawnRequest): void {
  if (request.stages.length === 0) throw new TypeError("the pipeline has no stages");
  for (const stage of request.stages) {
    if (typeof stage.program !== "string" || stage.program === "") {
      throw new TypeError("a stage has no program");
    }
  }
  if (!(request.timeoutMs > 0)) throw new TypeError("the timeout must be positive");
  if (!(request.maxOutputBytes >= 0)) throw new TypeError("the output cap must not be negative");
}

/**
 * What stopping a run sends, in order, and how long each step waits for every stage to end
 * before the next: SIGINT (what Ctrl-C in a terminal sends), SIGTERM 2 s later, SIGKILL 2 s
 * after that. The worker holds it: the policy layer decides that a run stops, not how.
 */
export const STOP_LADDER: readonly { signal: Deno.Signal; waitMs: number }[] = [
  { signal: "SIGINT", waitMs: 2_000 },
  { signal: "SIGTERM", waitMs: 2_000 },
  { signal: "SIGKILL", waitMs: 0 },
];

/** The pipelines running now, for {@link stopAllSpawns}. */
const running = new Set<Pipeline>();

/**
 * The person stops every pipeline running in this worker (Ctrl-C: stages lead their own process
 * groups, so the terminal's signal does not reach them): each starts down {@link STOP_LADDER};
 * one already on it goes straight to SIGKILL. Returns how many were running.
 */
export function stopAllSpawns(): number {
  const count = running.size;
  for (const p of [...running]) p.stopByPerson();
  return count;
}

/** A signal to the group each stage leads: the stage and every child that stayed in it. */
function signalGroups(children: readonly Deno.ChildProcess[], signal: Deno.Signal): void {
  for (const child of children) {
    try {
      Deno.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    }
  }
}

function killGroups(children: readonly Deno.ChildProcess[]): void {
  signalGroups(children, "SIGKILL");
}

/** A signal to one process group; false when there is no such group (yet, or any more). */
function signalGroup(group: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The process group a wrapped stage's command runs in, when the wrapper says it is led by the
 * wrapper's only child (bwrap `--new-session` with a PID namespace: that child is the sandbox's
 * pid 1, and it calls setsid before it forks the command). Its pid is read from
 * `/proc/PID/task/PID/children` by the `reader` program, since Deno opens /proc only for a thread
 * with every permission. Null when it cannot be found (not started yet, no such file, the reader
 * not allowed to run).
 */
async function wrappedGroup(pid: number, reader: string): Promise<number | null> {
  try {
    const out = await new Deno.Command(reader, {
      args: [`/proc/${pid}/task/${pid}/children`],
      clearEnv: true,
      env: {},
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      // Out of the terminal's group, so the person's next Ctrl-C does not end the look-up.
      detached: true,
    }).output();
    const first = new TextDecoder().decode(out.stdout).trim().split(/\s+/)[0] ?? "";
    return out.success && /^[1-9][0-9]*$/.test(first) ? Number(first) : null;
  } catch {
    return null;
  }
}

/**
 * Starts one stage as its own session and process group, with only the environment given; in
 * the run's cgroup folder `cgroupDir` when there is one.
 */
function spawnStage(
  request: SpawnRequest,
  index: number,
  cgroupDir: string | null,
): Deno.ChildProcess {
  const stage = request.stages[index];
  const command = [...(request.wrapper ?? []), stage.program, ...stage.args];
  const argv = request.cgroup && cgroupDir
    ? enterArgv(request.cgroup, cgroupDir, command)
    : command;
  try {
    return new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: request.cwd,
      env: request.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: Deno.build.os !== "windows",
    }).spawn();
  } catch (e) {
    // The OS's message quotes the program's real path, which may be an untrusted name behind
    // a link: only the kind of failure and the stage cross the wall.
    const name = e instanceof Error ? e.name : "Error";
    const failed = Object.assign(new Error(`stage ${index + 1} could not start (${name})`), {
      stage: index,
    });
    failed.name = name;
    throw failed;
  }
}

/**
 * Starts every stage in order. When one cannot start, those that did are stopped and reaped,
 * so nothing outlives a failed pipeline, and that stage's failure is thrown.
 */
async function spawnStages(
  request: SpawnRequest,
  cgroupDir: string | null,
): Promise<Deno.ChildProcess[]> {
  const children: Deno.ChildProcess[] = [];
  try {
    for (let i = 0; i < request.stages.length; i++) {
      children.push(spawnStage(request, i, cgroupDir));
    }
  } catch (e) {
    killGroups(children);
    await Promise.all(children.map(async (c) => {
      await Promise.allSettled([c.stdin.close(), c.stdout.cancel(), c.stderr.cancel()]);
      await c.status;
    }));
    throw e;
  }
  return children;
}

/** A started pipeline: its stages, the readers of its output, and the ways it is stopped. */
class Pipeline {
  readonly readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  readonly #plumbing = new AbortController();
  timedOut = false;
  truncated = false;
  /** The signals the person's stop sent, in order, before every stage had ended. */
  readonly stopSignals: Deno.Signal[] = [];
  /** Set once every stage has exited: the ladder sends nothing more. */
  exited = false;
  #ended: Promise<unknown>;
  #climbing = false;
  #skip: (() => void) | null = null;
  #skipped = false;
  /** Per stage, whether it has exited (and been reaped: its pid may belong to another now). */
  #stageDone: boolean[] = [];

  constructor(
    readonly children: readonly Deno.ChildProcess[],
    readonly wrapperGroup: SpawnRequest["wrapperGroup"],
  ) {
    // Set before anything awaiting this promise resumes: the ladder never signals past the end.
    this.#ended = Promise.all(children.map((c) => c.status)).then(() => this.exited = true);
    for (const [i, c] of children.entries()) c.status.then(() => this.#stageDone[i] = true);
  }

  /** Aborts the pipes between the stages and the write into the first. */
  get plumbingSignal(): AbortSignal {
    return this.#plumbing.signal;
  }

  killAll(): void {
    killGroups(this.children);
  }

  /** Stops waiting on every stream, whoever still holds the other end. */
  closeStreams(): void {
    this.#plumbing.abort();
    for (const reader of this.readers) reader.cancel().catch(() => {});
  }

  stop(): void {
    this.killAll();
    this.closeStreams();
  }

  /** The person stops the run: down the ladder at the first call, straight to SIGKILL at the next. */
  stopByPerson(): void {
    if (this.#climbing) {
      this.#skipped = true;
      this.#skip?.();
      return;
    }
    this.#climbing = true;
    this.climb().catch(() => this.stop());
  }

  /**
   * The one place {@link STOP_LADDER} is climbed: each signal to every stage's command group,
   * then a wait for every stage to end, at most the step's delay (cut short by a second stop).
   * The last step is SIGKILL with the streams closed, as for a timeout.
   */
  async climb(): Promise<void> {
    const groups = await this.#commandGroups();
    for (const step of STOP_LADDER) {
      if (this.exited) return;
      if (this.#skipped && step.signal !== "SIGKILL") continue;
      this.stopSignals.push(step.signal);
      if (step.signal === "SIGKILL") {
        for (const g of groups) if (g !== null) signalGroup(g, "SIGKILL");
        this.stop();
        return;
      }
      // A sandbox still setting up has no such group yet: its wrapper's group gets the signal
      // then, which ends the sandbox before the command has run.
      groups.forEach((g, i) => {
        if (g === null || !signalGroup(g, step.signal)) {
          signalGroups([this.children[i]], step.signal);
        }
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#ended,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, step.waitMs);
          this.#skip = resolve;
        }),
      ]);
      clearTimeout(timer);
      this.#skip = null;
    }
  }

  /**
   * Per stage, the group its command runs in when the wrapper keeps it apart from the wrapper's
   * own process (null: the group the stage leads, as unwrapped). A SIGINT to bwrap's own process
   * would end it, and with it (`--die-with-parent`) the sandbox, before the command saw the signal.
   */
  async #commandGroups(): Promise<(number | null)[]> {
    const via = this.wrapperGroup;
    if (!via) return this.children.map(() => null);
    return await Promise.all(
      this.children.map((c, i) => this.#stageDone[i] ? null : wrappedGroup(c.pid, via.reader)),
    );
  }

  /** An output stream passed the cap: the run is stopped there (once). */
  overflow(): void {
    if (this.truncated) return;
    this.truncated = true;
    this.stop();
  }
}

/** The stdin bytes (or nothing) into the first stage, and each stdout into the next stdin. */
function wirePipes(p: Pipeline, stdin: Uint8Array | null): Promise<unknown>[] {
  const { children, plumbingSignal: signal } = p;
  const feed = (async () => {
    const writer = children[0].stdin.getWriter();
    const abort = () => writer.abort().catch(() => {});
    signal.addEventListener("abort", abort);
    try {
      if (stdin && stdin.length > 0) await writer.write(stdin);
      await writer.close();
    } catch { /* the stage exited without reading all of it, or the run was stopped */ }
    signal.removeEventListener("abort", abort);
  })();
  const pipes = children.slice(0, -1).map((child, i) =>
    child.stdout.pipeTo(children[i + 1].stdin, { signal }).catch(() => {})
  );
  return [feed, ...pipes];
}

interface Output {
  stdout: Promise<Collected>;
  stderrs: Promise<Collected>[];
}

/** Hands on at most `budget` bytes of output as it arrives, then nothing more. */
function streamer(
  budget: number,
  send: ((chunk: OutputChunk) => void) | undefined,
): (stream: OutputChunk["stream"]) => ((bytes: Uint8Array) => void) | undefined {
  let left = budget;
  if (!send || left <= 0) return () => undefined;
  return (stream) => (bytes) => {
    if (left <= 0) return;
    const part = bytes.subarray(0, left);
    left -= part.length;
    send({ stream, bytes: part.slice() });
  };
}

/** Reads the last stage's stdout and every stage's stderr, each up to the cap. */
function collectOutput(
  p: Pipeline,
  cap: number,
  stream: (s: OutputChunk["stream"]) => ((bytes: Uint8Array) => void) | undefined,
): Output {
  const overflow = () => p.overflow();
  const last = p.children[p.children.length - 1];
  return {
    stdout: collect(last.stdout, cap, overflow, p.readers, stream("stdout")),
    stderrs: p.children.map((c) => collect(c.stderr, cap, overflow, p.readers, stream("stderr"))),
  };
}

/**
 * Once every stage has exited: sweeps what they left behind in their groups and in the run's
 * cgroup (`ending`, started here), then gives anything that escaped a moment before the streams
 * are closed on it.
 */
async function drain(
  p: Pipeline,
  plumbing: Promise<unknown>[],
  output: Output,
  endCgroup: () => Promise<boolean>,
): Promise<{ stdout: Collected; stderrs: Collected[]; cgroupEnded: boolean }> {
  p.killAll();
  const ending = endCgroup();
  const grace = setTimeout(() => p.closeStreams(), POST_EXIT_GRACE_MS);
  await Promise.all(plumbing);
  const stdout = await output.stdout;
  const stderrs = await Promise.all(output.stderrs);
  clearTimeout(grace);
  return { stdout, stderrs, cgroupEnded: await ending };
}

function resultOf(
  p: Pipeline,
  cap: number,
  statuses: Deno.CommandStatus[],
  out: { stdout: Collected; stderrs: Collected[]; cgroupEnded: boolean },
  started: number,
  hadCgroup: boolean,
): SpawnResult {
  let stderr = concat(out.stderrs.map((s) => s.bytes));
  let truncated = p.truncated;
  if (stderr.length > cap) {
    stderr = stderr.subarray(0, cap);
    truncated = true;
  }
  const lastStatus = statuses[statuses.length - 1];
  return {
    stdout: out.stdout.bytes,
    stderr,
    code: lastStatus.signal ? null : lastStatus.code,
    signal: lastStatus.signal ?? null,
    stages: statuses.map((s) => ({ code: s.signal ? null : s.code, signal: s.signal ?? null })),
    durationMs: Math.round(performance.now() - started),
    timedOut: p.timedOut,
    truncated,
    stopSignals: [...p.stopSignals],
    stdoutBytes: out.stdout.total,
    stderrBytes: out.stderrs.reduce((n, s) => n + s.total, 0),
    ...(hadCgroup ? { cgroupEnded: out.cgroupEnded } : {}),
  };
}

/**
 * Runs a pipeline to its end: spawn the stages, wire the pipes, collect the output, reap. With
 * `request.streamBytes`, `onChunk` is handed that much output as it comes.
 */
export async function spawnPipeline(
  request: SpawnRequest,
  onChunk?: (chunk: OutputChunk) => void,
): Promise<SpawnResult> {
  check(request);
  const started = performance.now();
  const cgroup = request.cgroup;
  // A folder that cannot be made leaves the run without one: it runs, and the result says
  // its processes were not confirmed ended.
  const cgroupDir = cgroup ? await makeRunCgroup(cgroup) : null;
  const endCgroup = () =>
    cgroup && cgroupDir ? endRunCgroup(cgroup, cgroupDir) : Promise.resolve(false);
  let children: Deno.ChildProcess[];
  try {
    children = await spawnStages(request, cgroupDir);
  } catch (e) {
    await endCgroup();
    throw e;
  }
  const p = new Pipeline(children, request.wrapperGroup);
  const timer = setTimeout(() => {
    p.timedOut = true;
    p.stop();
  }, request.timeoutMs);
  running.add(p);

  const plumbing = wirePipes(p, request.stdin);
  const output = collectOutput(
    p,
    request.maxOutputBytes,
    streamer(request.streamBytes ?? 0, onChunk),
  );
  const statuses = await Promise.all(p.children.map((c) => c.status));
  running.delete(p);
  const out = await drain(p, plumbing, output, endCgroup);
  clearTimeout(timer);
  return resultOf(p, request.maxOutputBytes, statuses, out, started, cgroup !== undefined);
}
