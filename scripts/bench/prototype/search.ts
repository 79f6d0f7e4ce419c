/**
 * Measures a search design the tool does not use yet (docs/benchmarks.md, "search"): a walk,
 * then the files split across 1 or 2 workers that search in place (search_worker.ts), with
 * compileNeedle or a WebAssembly SIMD scan; beside the search tool and `rg -F`, alternated.
 * The walk is inside the prototype's time, done once, synchronously, before the search.
 *
 *   deno run -A --unstable-worker-options scripts/bench/prototype/search.ts DIR LITERAL [ROUNDS]
 */
import { searchTool } from "../../../src/tools/search.ts";
import type { ToolDef } from "../../../src/tools/tool.ts";
import { alternate, commandContender, type Contender, formatMs } from "../measure.ts";
import { openBenchSession } from "../session.ts";
import type { Counts, Job } from "./search_worker.ts";

function walk(root: string): string[] {
  const files: string[] = [];
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    for (const e of Deno.readDirSync(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) stack.push(path);
      else if (e.isFile) files.push(path);
    }
  }
  return files;
}

function pool(size: number): Worker[] {
  return Array.from(
    { length: size },
    () => new Worker(new URL("./search_worker.ts", import.meta.url), { type: "module" }),
  );
}

async function searchWith(workers: Worker[], root: string, needle: string, simd: boolean) {
  const files = walk(root);
  const parts = workers.map((_, i) =>
    files.filter((_, j) => Math.floor(j / 64) % workers.length === i)
  );
  const results = await Promise.all(workers.map((w, i) =>
    new Promise<Counts>((resolve) => {
      w.onmessage = (e: MessageEvent<Counts>) => resolve(e.data);
      w.postMessage({ paths: parts[i], needle, maxBytes: 10 * 1024 * 1024, simd } satisfies Job);
    })
  ));
  return results.reduce((a, b) => ({
    matched: a.matched + b.matched,
    binary: a.binary + b.binary,
    big: a.big + b.big,
    bytes: a.bytes + b.bytes,
  }));
}

if (import.meta.main) {
  const [dir, needle, roundsArg] = Deno.args;
  const root = await Deno.realPath(dir);
  const one = pool(1);
  const two = pool(2);
  const session = await openBenchSession(root);
  let last: Counts | null = null;
  const proto = (name: string, workers: Worker[], simd: boolean): Contender => ({
    name,
    run: async () => last = await searchWith(workers, root, needle, simd),
  });
  const contenders: Contender[] = [
    {
      name: "search tool",
      run: () => session.call(searchTool as ToolDef<never>, { pattern: needle }),
    },
    proto("compileNeedle, 1 worker", one, false),
    proto("compileNeedle, 2 workers", two, false),
    proto("SIMD, 1 worker", one, true),
    proto("SIMD, 2 workers", two, true),
    commandContender(
      "rg -F",
      "rg",
      [
        "-F",
        "-n",
        "--no-ignore",
        "--hidden",
        "--max-filesize",
        "10M",
        "--",
        needle,
        ".",
      ],
      [0, 1],
      root,
    ),
  ];
  try {
    const timings = await alternate(contenders, Number(roundsArg ?? 5));
    const rg = timings.at(-1)!.median;
    for (const t of timings) {
      console.log(
        `${t.name.padEnd(26)} ${formatMs(t.median).padStart(8)}  ${(t.median / rg).toFixed(2)}× rg`,
      );
    }
    console.log(`prototype counts: ${JSON.stringify(last)}`);
  } finally {
    for (const w of [...one, ...two]) w.terminate();
    await session.close();
  }
}
