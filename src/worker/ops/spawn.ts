/**
 * Runs a pipeline of programs with no shell: each stage is an argv handed to the OS as is, and
 * each stage's stdout feeds the next stage's stdin. The first stage gets the bytes it was given
 * or an empty stream — never the terminal. Each stage leads its own session and process group
 * (and so has no controlling terminal), which lets a timeout or an output flood stop the stage
 * and every child it started.
 *
 * Every way out of here ends with all stages reaped and every stream closed: a timeout, a flood,
 * a stage that leaves a background child holding a pipe, a stage that never reads its stdin.
 */
import type { SpawnRequest, SpawnResult } from "../protocol.ts";

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

/** The stop switches of the pipelines running now, for {@link stopAllSpawns}. */
const running = new Set<() => void>();

/**
 * Kills every pipeline running in this worker (the person pressed Ctrl-C: stages lead their own
 * process groups, so the terminal's signal does not reach them). Returns how many were running.
 */
export function stopAllSpawns(): number {
  const count = running.size;
  for (const stop of [...running]) stop();
  return count;
}

export async function spawnPipeline(request: SpawnRequest): Promise<SpawnResult> {
  check(request);
  const started = performance.now();
  const children: Deno.ChildProcess[] = [];
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  const plumbingAbort = new AbortController();
  let timedOut = false;
  let truncated = false;

  /** SIGKILL to the group each stage leads: the stage and every child that stayed in it. */
  const killAll = () => {
    for (const child of children) {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }
    }
  };
  /** Stops waiting on every stream, whoever still holds the other end. */
  const closeStreams = () => {
    plumbingAbort.abort();
    for (const reader of readers) reader.cancel().catch(() => {});
  };

  const spawnStage = (index: number): Deno.ChildProcess => {
    const stage = request.stages[index];
    const argv = [...(request.wrapper ?? []), stage.program, ...stage.args];
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
  };

  try {
    for (let i = 0; i < request.stages.length; i++) children.push(spawnStage(i));
  } catch (e) {
    // Stop and reap what did start, so nothing outlives a failed pipeline.
    killAll();
    await Promise.all(children.map(async (c) => {
      await Promise.allSettled([
        c.stdin.close(),
        c.stdout.cancel(),
        c.stderr.cancel(),
      ]);
      await c.status;
    }));
    throw e;
  }

  const timer = setTimeout(() => {
    timedOut = true;
    killAll();
    closeStreams();
  }, request.timeoutMs);
  const stop = () => {
    killAll();
    closeStreams();
  };
  running.add(stop);

  const overflow = () => {
    if (truncated) return;
    truncated = true;
    killAll();
    closeStreams();
  };

  // Wire the stages: stdin bytes (or nothing) into the first, each stdout into the next stdin.
  const plumbing: Promise<unknown>[] = [];
  plumbing.push((async () => {
    const writer = children[0].stdin.getWriter();
    const abort = () => writer.abort().catch(() => {});
    plumbingAbort.signal.addEventListener("abort", abort);
    try {
      if (request.stdin && request.stdin.length > 0) await writer.write(request.stdin);
      await writer.close();
    } catch { /* the stage exited without reading all of it, or the run was stopped */ }
    plumbingAbort.signal.removeEventListener("abort", abort);
  })());
  for (let i = 0; i + 1 < children.length; i++) {
    plumbing.push(
      children[i].stdout.pipeTo(children[i + 1].stdin, { signal: plumbingAbort.signal })
        .catch(() => {}),
    );
  }
  const last = children[children.length - 1];
  const stdoutPromise = collect(last.stdout, request.maxOutputBytes, overflow, readers);
  const stderrPromises = children.map((c) =>
    collect(c.stderr, request.maxOutputBytes, overflow, readers)
  );

  const statuses = await Promise.all(children.map((c) => c.status));
  running.delete(stop);
  // Every stage has exited: sweep what they left behind in their groups, then give anything
  // that escaped its group a moment before the streams are closed on it.
  killAll();
  const grace = setTimeout(closeStreams, POST_EXIT_GRACE_MS);
  await Promise.all(plumbing);
  const stdout = await stdoutPromise;
  const stderrs = await Promise.all(stderrPromises);
  clearTimeout(grace);
  clearTimeout(timer);

  let stderr = concat(stderrs.map((s) => s.bytes));
  if (stderr.length > request.maxOutputBytes) {
    stderr = stderr.subarray(0, request.maxOutputBytes);
    truncated = true;
  }
  const lastStatus = statuses[statuses.length - 1];
  return {
    stdout: stdout.bytes,
    stderr,
    code: lastStatus.signal ? null : lastStatus.code,
    signal: lastStatus.signal ?? null,
    stages: statuses.map((s) => ({ code: s.signal ? null : s.code, signal: s.signal ?? null })),
    durationMs: Math.round(performance.now() - started),
    timedOut,
    truncated,
    stdoutBytes: stdout.total,
    stderrBytes: stderrs.reduce((n, s) => n + s.total, 0),
  };
}
