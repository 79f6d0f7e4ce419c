/**
 * What the second wall costs a search (docs/benchmarks.md, "search"): the tree is listed first,
 * outside the timing, then searched with the real findInFiles op by two effect workers, once
 * behind the narrowed permissions (EffectWorker.start, as a session runs) and once with the
 * permissions inherited; `rg -F` alternated with both. No walk, no policy layer: the floor of
 * the worker side alone.
 *
 *   deno run -A --unstable-worker-options scripts/bench/prototype/wall_cost.ts DIR LITERAL [ROUNDS]
 */
import { EffectWorker } from "../../../src/worker/client.ts";
import type { WorkerRequest } from "../../../src/worker/protocol.ts";
import { alternate, commandContender, type Contender, formatMs } from "../measure.ts";

function listFiles(root: string): string[] {
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

type Call = (request: WorkerRequest) => Promise<unknown>;

/** A bare effect worker with the main thread's permissions: no wall. */
function inherited(): { call: Call; stop(): void } {
  const worker = new Worker(new URL("../../../src/worker/effect_worker.ts", import.meta.url), {
    type: "module",
  });
  let next = 0;
  const pending = new Map<number, (v: unknown) => void>();
  worker.onmessage = (e: MessageEvent<{ id: number }>) => {
    pending.get(e.data.id)?.(e.data);
    pending.delete(e.data.id);
  };
  return {
    call: (request) =>
      new Promise((resolve) => {
        pending.set(next, resolve);
        worker.postMessage({ id: next++, request });
      }),
    stop: () => worker.terminate(),
  };
}

async function searchAll(calls: Call[], files: string[], needle: Uint8Array) {
  let next = 0;
  await Promise.all(calls.map(async (call) => {
    while (next < files.length) {
      const paths = files.slice(next, next + 64);
      next += 64;
      await call({
        op: "findInFiles",
        paths,
        needle,
        maxBytes: 10 * 1024 * 1024,
        maxLines: Number.MAX_SAFE_INTEGER,
        lineChars: 500,
        hashWanted: new Uint8Array(paths.length),
      });
    }
  }));
}

if (import.meta.main) {
  const [dir, literal, roundsArg] = Deno.args;
  const root = await Deno.realPath(dir);
  const files = listFiles(root);
  const needle = new TextEncoder().encode(literal);
  const walled = EffectWorker.start({ workspace: root, scratch: root, run: false }, 2);
  const open = [inherited(), inherited()];
  const contenders: Contender[] = [
    {
      name: "2 workers, narrowed",
      run: () => searchAll(walled.pool.map((w) => (r: WorkerRequest) => w.call(r)), files, needle),
    },
    { name: "2 workers, inherited", run: () => searchAll(open.map((w) => w.call), files, needle) },
    commandContender(
      "rg -F",
      "rg",
      ["-F", "-n", "--no-ignore", "--hidden", "--max-filesize", "10M", "--", literal, "."],
      [0, 1],
      root,
    ),
  ];
  try {
    const timings = await alternate(contenders, Number(roundsArg ?? 5));
    const rg = timings.at(-1)!.median;
    for (const t of timings) {
      console.log(
        `${t.name.padEnd(22)} ${formatMs(t.median).padStart(8)}  ${(t.median / rg).toFixed(2)}× rg`,
      );
    }
  } finally {
    walled.terminate();
    for (const w of open) w.stop();
  }
}
