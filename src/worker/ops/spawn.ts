/**
 * Runs a pipeline of programs with no shell: each stage is an argv handed to the OS as is, and
 * each stage's stdout feeds the next stage's stdin. The first stage gets the bytes it was given
 * or an empty stream — never the terminal. Each stage leads its own process group, so a
 * timeout or an output flood stops the stage and every child it started.
 */
import type { SpawnRequest, SpawnResult } from "../protocol.ts";

/** Collects a stream up to `cap` bytes; past it, calls `onOverflow` once and keeps counting. */
async function collect(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onOverflow: () => void,
): Promise<{ bytes: Uint8Array; total: number }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  let overflowed = false;
  try {
    for await (const chunk of stream) {
      total += chunk.length;
      if (kept < cap) {
        const take = chunk.subarray(0, cap - kept);
        chunks.push(take.slice());
        kept += take.length;
      }
      if (total > cap && !overflowed) {
        overflowed = true;
        onOverflow();
      }
    }
  } catch { /* the stage was killed mid-stream: what was read is kept */ }
  const bytes = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) bytes.set(c, at), at += c.length;
  return { bytes, total };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  return out;
}

export async function spawnPipeline(request: SpawnRequest): Promise<SpawnResult> {
  if (request.stages.length === 0) throw new TypeError("the pipeline has no stages");
  const started = performance.now();
  const children: Deno.ChildProcess[] = [];
  let timedOut = false;
  let truncated = false;

  const killAll = () => {
    for (const child of children) {
      try {
        Deno.kill(-child.pid, "SIGKILL"); // the whole group the stage leads
      } catch {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }
    }
  };

  try {
    for (const stage of request.stages) {
      const argv = [...(request.wrapper ?? []), stage.program, ...stage.args];
      children.push(
        new Deno.Command(argv[0], {
          args: argv.slice(1),
          cwd: request.cwd,
          env: request.env,
          clearEnv: true,
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
          detached: Deno.build.os !== "windows",
        }).spawn(),
      );
    }
  } catch (e) {
    killAll();
    throw e;
  }

  const timer = setTimeout(() => {
    timedOut = true;
    killAll();
  }, request.timeoutMs);

  const overflow = () => {
    truncated = true;
    killAll();
  };

  // Wire the stages: stdin bytes (or nothing) into the first, each stdout into the next stdin.
  const plumbing: Promise<unknown>[] = [];
  plumbing.push((async () => {
    const writer = children[0].stdin.getWriter();
    try {
      if (request.stdin && request.stdin.length > 0) await writer.write(request.stdin);
      await writer.close();
    } catch { /* the stage exited without reading all of it */ }
  })());
  for (let i = 0; i + 1 < children.length; i++) {
    plumbing.push(children[i].stdout.pipeTo(children[i + 1].stdin).catch(() => {}));
  }
  const last = children[children.length - 1];
  const stdoutPromise = collect(last.stdout, request.maxOutputBytes, overflow);
  const stderrPromises = children.map((c) => collect(c.stderr, request.maxOutputBytes, overflow));

  const statuses = await Promise.all(children.map((c) => c.status));
  clearTimeout(timer);
  await Promise.all(plumbing);
  const stdout = await stdoutPromise;
  const stderrs = await Promise.all(stderrPromises);
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
