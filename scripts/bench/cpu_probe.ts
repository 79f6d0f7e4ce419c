/**
 * The bench's CPU clock, as a child of its own (measure.ts starts it): for each process id read
 * on stdin, one line with the CPU time, ms, of that process (every thread, and its children
 * that ended and were waited for) and of every live process below it, leaving this one out,
 * and the one-minute load average. A separate process because Deno lets only `--allow-all`
 * read /proc, and the bench itself runs with the program's kind of permissions: under
 * `--allow-all` Deno's file operations take a faster path (see docs/benchmarks.md), which would
 * flatter the main thread's share of a tool call.
 *
 *   deno run --allow-all scripts/bench/cpu_probe.ts
 */
/** Clock ticks per second in /proc's times (USER_HZ, 100 on Linux everywhere in practice). */
const TICKS = 100;

function fields(stat: string): string[] {
  // The command name may hold spaces and parentheses: the fields start after the last ") ".
  return stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
}

/** CPU ms of `root` and its live descendants (this probe left out); NaN if unreadable. */
export function treeCpuMs(root: number, self = Deno.pid): number {
  try {
    const own = fields(Deno.readTextFileSync(`/proc/${root}/stat`));
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    const children = new Map<number, number[]>();
    const ticksOf = new Map<number, number>();
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid) || pid === self) continue;
      try {
        const f = fields(Deno.readTextFileSync(`/proc/${pid}/stat`));
        const parent = Number(f[1]);
        if (!children.has(parent)) children.set(parent, []);
        children.get(parent)!.push(pid);
        ticksOf.set(pid, Number(f[11]) + Number(f[12]));
      } catch { /* gone meanwhile */ }
    }
    const stack = [...(children.get(root) ?? [])];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      ticks += ticksOf.get(pid) ?? 0;
      stack.push(...(children.get(pid) ?? []));
    }
    return ticks * 1000 / TICKS;
  } catch {
    return NaN;
  }
}

if (import.meta.main) {
  const out = Deno.stdout.writable.getWriter();
  const encoder = new TextEncoder();
  let pending = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const pid = Number(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      const reply = { cpuMs: treeCpuMs(pid), load: Deno.loadavg()[0] };
      await out.write(encoder.encode(`${JSON.stringify(reply)}\n`));
    }
  }
}
