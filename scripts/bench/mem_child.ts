/**
 * One search in a fresh process, reporting the process's peak resident memory (VmHWM, which
 * counts the effect worker's thread too, since it shares the process). Run by the memory
 * benchmark; prints one JSON line. Deno lets only --allow-all read /proc/self.
 *
 *   deno run --allow-all --unstable-worker-options scripts/bench/mem_child.ts \
 *     ROOT PATTERN [uncapped]
 */
import { searchTool } from "../../src/tools/search.ts";
import type { ToolDef } from "../../src/tools/tool.ts";
import { openBenchSession } from "./session.ts";

function statusKb(field: string): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const m = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return m ? Number(m[1]) : NaN;
}

/** VmHWM of every live process below this one (the kernel wall's children), summed, in kB. */
function descendantsPeakKb(): number {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const parent = Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[1]);
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent)!.push(pid);
    } catch { /* gone */ }
  }
  let kb = 0;
  const stack = [...(children.get(Deno.pid) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    try {
      const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/^VmHWM:\s+(\d+) kB/m);
      if (m) kb += Number(m[1]);
    } catch { /* gone */ }
    stack.push(...(children.get(pid) ?? []));
  }
  return kb;
}

if (import.meta.main) {
  const [root, pattern, mode] = Deno.args;
  const before = statusKb("VmHWM");
  const session = await openBenchSession(root);
  const start = performance.now();
  const out = await session.call(
    searchTool as ToolDef<never>,
    { pattern },
    mode === "uncapped" ? { searchLines: Number.MAX_SAFE_INTEGER } : undefined,
  );
  const ms = performance.now() - start;
  const peakKb = statusKb("VmHWM");
  const childrenKb = descendantsPeakKb();
  await session.close();
  console.log(JSON.stringify({
    startKb: before,
    peakKb,
    childrenKb,
    ms,
    note: out.content.split("\n").filter((l) => l.startsWith("[")).join(" "),
  }));
}
