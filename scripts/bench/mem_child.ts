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
  await session.close();
  console.log(JSON.stringify({
    startKb: before,
    peakKb,
    ms,
    note: out.content.split("\n").filter((l) => l.startsWith("[")).join(" "),
  }));
}
