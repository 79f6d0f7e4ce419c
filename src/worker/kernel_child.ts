/**
 * The kernel wall's child process (kernel.ts): it reads `{ id, request }` frames on stdin and
 * writes each reply as a frame on stdout as soon as it is ready, in any order. It ends when
 * stdin ends. Started two ways:
 * - under `deno run`, as this module with the worker's narrowed flags: it answers itself;
 * - compiled, as the binary with `--bravebot-effect-worker WORKSPACE SCRATCH [--read-only]`
 *   (main.ts), and in both ways `--bravebot-hidden=JSON` (permissions.ts `HIDDEN_ARG`): the binary's own permissions are fixed at compile time, so it narrows itself,
 *   answering through a Deno Worker with the worker's permissions ({@link serveThroughWorker}).
 * `--check INSIDE LINK STATUS` (the probe) instead exits 0 only when INSIDE was read, LINK, a link
 * to a file outside, was not found, and STATUS — its own `/proc/self/status`, bound into the box —
 * shows no capability and no way to gain one. `--warm` (module_cache.ts, outside the wall, with no
 * permission) loads every module the child uses and exits, which fills the cache it is given.
 */
import type { WorkerReply, WorkerRequest } from "./protocol.ts";
import { frameChunks, readFrames, reusedChunks } from "./frames.ts";
import { type Hidden, hiddenFromArgs, READ_ONLY_ARG, workerPermissions } from "./permissions.ts";
import { setHidden } from "./ops/wall.ts";
import { type Capability, CHECK_HELD, checkHeld } from "./capabilities.ts";

type Answer = (
  id: number,
  request: WorkerRequest,
) => Promise<{ reply: WorkerReply; transfer: Transferable[] }>;

function replier(): (reply: WorkerReply) => void {
  const out = Deno.stdout.writable.getWriter();
  return (reply) => {
    for (const chunk of frameChunks(reply)) out.write(chunk).catch(() => {});
  };
}

/** Answers every frame on stdin with `answer`, each as soon as it is done, until stdin ends. */
export async function serve(answer: Answer): Promise<void> {
  const send = replier();
  const stdin = Deno.stdin.readable.getReader({ mode: "byob" });
  for await (const message of readFrames(reusedChunks(stdin))) {
    const { id, request } = message as { id: number; request: WorkerRequest };
    answer(id, request).then(({ reply }) => send(reply));
  }
  // stdin ended: the parent stopped this worker and already failed what was pending, so
  // nothing still running is waited for (the caller exits).
}

/** The compiled binary's child: the same loop, each request answered by a narrowed Worker. */
export async function serveThroughWorker(
  workspace: string,
  scratch: string,
  readOnly = false,
  hidden: Hidden | null = null,
): Promise<void> {
  const worker = new Worker(new URL("./effect_worker.ts", import.meta.url), {
    type: "module",
    name: "bravebot-effect-worker",
    deno: { permissions: workerPermissions({ workspace, scratch, run: false, readOnly }) },
  });
  // Before any request: messages arrive in order.
  worker.postMessage({ hidden: hidden ?? { hide: [], open: [] } });
  const waiting = new Map<number, (reply: WorkerReply) => void>();
  worker.onmessage = (event: MessageEvent<WorkerReply>) => {
    waiting.get(event.data.id)?.(event.data);
    waiting.delete(event.data.id);
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    Deno.exit(70); // the parent fails every pending call when this process is gone
  };
  await serve((id, request) =>
    new Promise((resolve) => {
      waiting.set(id, (reply) => resolve({ reply, transfer: [] }));
      worker.postMessage({ id, request });
    })
  );
}

/**
 * The probe: 0 when `inside` reads, `link` (to a file outside) is not there at all, and `status`
 * shows exactly the `planned` capabilities held (none but what root keeps over another user's
 * places, capabilities.ts) and none to gain ({@link CHECK_HELD} otherwise).
 */
export function check(
  inside: string,
  link: string,
  status: string,
  planned: readonly Capability[] = [],
): number {
  try {
    Deno.readFileSync(inside);
  } catch {
    return 3;
  }
  try {
    Deno.readFileSync(link);
    return 4; // read through the link: the namespace does not contain the worker
  } catch (e) {
    if ((e as Error).name !== "NotFound") return 5;
  }
  try {
    return checkHeld(Deno.readTextFileSync(status), planned).ok ? 0 : CHECK_HELD;
  } catch {
    return CHECK_HELD;
  }
}

/** The child's main, for both ways of starting it; `args` after the entry (or hidden flag). */
export async function childMain(args: string[], compiled: boolean): Promise<number> {
  if (args[0] === "--warm" && !compiled) {
    // module_cache.ts: load every module the child uses, then exit (it fills DENO_DIR).
    await import("./effect_worker.ts");
    return 0;
  }
  const checkAt = args.indexOf("--check");
  if (checkAt >= 0) {
    const planned = (args[checkAt + 4] ?? "").split(",").filter((c) => c !== "");
    // Only a capability a box may keep; any other name fails the probe.
    if (planned.some((c) => c !== "CAP_DAC_OVERRIDE")) return CHECK_HELD;
    const [inside, link, status] = args.slice(checkAt + 1, checkAt + 4);
    return check(inside, link, status, planned as Capability[]);
  }
  // What the worker's own checks refuse inside its places (ops/wall.ts `setHidden`), as the box
  // around this process covers it.
  const hidden = hiddenFromArgs(args);
  if (compiled) {
    await serveThroughWorker(args[0], args[1], args[2] === READ_ONLY_ARG, hidden);
  } else {
    const { answer } = await import("./effect_worker.ts");
    if (hidden) setHidden(hidden.hide, hidden.open);
    await serve(answer);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await childMain(Deno.args, false));
