/**
 * Timing helpers for the benchmarks. The machines these run on are shared and noisy, so every
 * comparison alternates its contenders round by round after a warm-up and quotes medians: an
 * absolute time means little, a ratio measured in the same minute holds.
 */

export interface Contender {
  name: string;
  /** One run; resolves when the work is done. Its own wall time is what is measured. */
  run(): Promise<unknown>;
}

export interface Timing {
  name: string;
  samples: number[];
  median: number;
  /** CPU time of each run (this process's threads and every process below it), ms. */
  cpuSamples: number[];
  cpuMedian: number;
  /** The one-minute load average when the rounds ended: how shared the machine was. */
  load: number;
}

/** The CPU clock (cpu_probe.ts), started at the first sample and ended with the process. */
let probe: {
  ask(pid: number): Promise<{ cpuMs: number; load: number }>;
} | null = null;

function startProbe(): NonNullable<typeof probe> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("./cpu_probe.ts", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  child.unref();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  // Asked one at a time (alternate() awaits each answer), so answers come back in order.
  let chain = Promise.resolve();
  return {
    ask(pid) {
      const answer = chain.then(async () => {
        await writer.write(new TextEncoder().encode(`${pid}\n`));
        while (!buffered.includes("\n")) {
          const { value, done } = await reader.read();
          if (done) return { cpuMs: NaN, load: NaN };
          buffered += value;
        }
        const nl = buffered.indexOf("\n");
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        return JSON.parse(line) as { cpuMs: number; load: number };
      });
      chain = answer.then(() => {}, () => {});
      return answer;
    },
  };
}

/**
 * CPU time, ms, used so far by this process (every thread: the main thread and the in-process
 * workers), by its children that ended and were waited for (rg, fd), and by every live process
 * below it (the kernel wall's children under bwrap), with the one-minute load average. On a
 * shared machine the CPU time is the steadier figure: it counts work done, not time spent
 * waiting for a core. NaN where /proc cannot be read.
 */
export async function cpuSample(): Promise<{ cpuMs: number; load: number }> {
  try {
    probe ??= startProbe();
    return await probe.ask(Deno.pid);
  } catch {
    return { cpuMs: NaN, load: NaN };
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs each contender `warmup` times, then `rounds` rounds in which every contender runs once;
 * the order rotates each round so no contender always follows the same neighbour.
 */
export async function alternate(
  contenders: readonly Contender[],
  rounds: number,
  warmup = 1,
): Promise<Timing[]> {
  for (let w = 0; w < warmup; w++) for (const c of contenders) await c.run();
  const samples = contenders.map(() => [] as number[]);
  const cpu = contenders.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + r) % contenders.length;
      const cpuBefore = (await cpuSample()).cpuMs;
      const start = performance.now();
      await contenders[i].run();
      samples[i].push(performance.now() - start);
      cpu[i].push((await cpuSample()).cpuMs - cpuBefore);
    }
  }
  const { load } = await cpuSample();
  return contenders.map((c, i) => ({
    name: c.name,
    samples: samples[i],
    median: median(samples[i]),
    cpuSamples: cpu[i],
    cpuMedian: median(cpu[i]),
    load,
  }));
}

export interface CommandOutcome {
  code: number;
  stdoutBytes: number;
  stdoutLines: number;
  stderr: string;
}

/**
 * Runs a program with its output read through a pipe and counted. Not /dev/null: ripgrep
 * notices a null stdout and stops at the first match, which would flatter it.
 */
export async function runCommand(
  program: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CommandOutcome> {
  const child = new Deno.Command(program, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let bytes = 0;
  let lines = 0;
  const counting = (async () => {
    for await (const chunk of child.stdout) {
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    }
  })();
  const errText = new Response(child.stderr).text();
  const [status, , stderr] = await Promise.all([child.status, counting, errText]);
  return { code: status.code, stdoutBytes: bytes, stdoutLines: lines, stderr };
}

/** A contender that runs a program and fails loudly on an unexpected exit code. */
export function commandContender(
  name: string,
  program: string,
  args: string[],
  okCodes: readonly number[] = [0, 1],
  cwd?: string,
): Contender & { last: CommandOutcome | null } {
  const contender = {
    name,
    last: null as CommandOutcome | null,
    async run() {
      const outcome = await runCommand(program, args, { cwd });
      if (!okCodes.includes(outcome.code)) {
        throw new Error(`${name}: exit ${outcome.code}: ${outcome.stderr.slice(0, 400)}`);
      }
      contender.last = outcome;
    },
  };
  return contender;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 0.01) return `${(ms * 1000).toFixed(2)} µs`;
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(0)} ms`;
}

/** A median wall time with its CPU time beside it: "412 ms (CPU 630 ms)". */
export function formatTiming(t: Timing): string {
  return Number.isFinite(t.cpuMedian)
    ? `${formatMs(t.median)} (CPU ${formatMs(t.cpuMedian)})`
    : formatMs(t.median);
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024) return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Whether a program is on PATH (the comparison is skipped, and says so, when it is not). */
export async function have(program: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", {
      args: ["-c", `command -v ${program}`],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}
