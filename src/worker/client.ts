/**
 * The main thread's handle on the effect worker. Requests are numbered and answered in any
 * order; an error raised inside the worker comes back as a value with its name (`NotCapable`
 * when Deno's permissions refused it), never as an exception past this class.
 *
 * Two walls (docs/contract.md §13.2, §13.3), chosen at start, shown by {@link EffectWorker.wall}:
 * - `kernel`, where bwrap works: file operations go to a child process confined in a mount
 *   namespace holding only the workspace and the scratch folder (kernel.ts); `spawn` and
 *   `stopSpawns` go to an in-process Worker started at the first run, since the programs a
 *   stage starts need the whole system (their own bwrap confines them);
 * - `process` elsewhere: one in-process Deno Worker does everything.
 * Both sit behind the same narrowed Deno permissions (permissions.ts).
 */
import type {
  OutputChunk,
  WorkerError,
  WorkerProgress,
  WorkerReply,
  WorkerRequest,
  WorkerValue,
} from "./protocol.ts";
import { hiddenOf, type WallOptions, workerPermissions } from "./permissions.ts";
import {
  childArgv,
  KernelChild,
  kernelPlaces,
  kernelPlan,
  kernelWall,
  kernelWallProbe,
  kernelWallReady,
} from "./kernel.ts";
import { moduleCache } from "./module_cache.ts";
import { effectiveUid } from "./capabilities.ts";

export type WorkerResult<T> = { ok: true; value: T } | { ok: false; error: WorkerError };

/** Which wall contains the worker's file operations. */
export type Wall = "kernel" | "process";

/** `auto`: the kernel wall where its probe passes, else the process wall. */
export type WallChoice = Wall | "auto";

/** Where one kind of request goes: a running Worker or child, by message. */
interface Channel {
  post(message: { id: number; request: WorkerRequest }): void;
  stop(): Promise<void>;
}

type Sink = {
  reply: (reply: WorkerReply | WorkerProgress) => void;
  fail: (error: WorkerError) => void;
};

function workerChannel(options: WallOptions, sink: Sink): Channel {
  const worker = new Worker(new URL("./effect_worker.ts", import.meta.url), {
    type: "module",
    name: "bravebot-effect-worker",
    deno: { permissions: workerPermissions(options) },
  });
  // Before any request: messages arrive in order.
  worker.postMessage({ hidden: hiddenOf(options) });
  worker.onmessage = (event: MessageEvent<WorkerReply | WorkerProgress>) => sink.reply(event.data);
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    sink.fail({ name: "WorkerError", message: event.message });
  };
  return {
    post: (message) => worker.postMessage(message),
    stop: () => {
      worker.terminate();
      return Promise.resolve();
    },
  };
}

function kernelChannel(argv: string[], sink: Sink): Channel {
  const child = new KernelChild(
    argv,
    (reply) => sink.reply(reply as WorkerReply),
    (why) => sink.fail({ name: "WorkerError", message: why }),
  );
  return { post: (message) => child.send(message), stop: () => child.stop() };
}

/**
 * A channel whose messages wait, in order, for the channel `decided` gives (the probe's
 * answer: see {@link EffectWorker.startWhileProbed}); stopping it stops that one.
 */
function heldChannel(decided: Promise<Channel>): Channel {
  let target: Channel | null = null;
  const held: { id: number; request: WorkerRequest }[] = [];
  const ready = decided.then((channel) => {
    target = channel;
    for (const message of held.splice(0)) channel.post(message);
    return channel;
  });
  return {
    post: (message) => target ? target.post(message) : void held.push(message),
    stop: () => ready.then((channel) => channel.stop()),
  };
}

/**
 * A kernel wall child started before its command line's probe has answered. Nothing is sent to
 * it before {@link use} (the probe passed): until then its replies are dropped and its end is
 * kept, not reported (a child bwrap could not start ends at once, and the session then gets the
 * process wall instead). {@link discard} ends it unused.
 */
function guessedChild(argv: string[], sink: Sink): { use(): Channel; discard(): Promise<void> } {
  let chosen = false;
  let ended: WorkerError | null = null;
  const channel = kernelChannel(argv, {
    reply: (reply) => chosen && sink.reply(reply),
    fail: (error) => chosen ? sink.fail(error) : (ended ??= error),
  });
  return {
    use: () => {
      chosen = true;
      if (ended) sink.fail(ended);
      return channel;
    },
    discard: () => channel.stop(),
  };
}

/**
 * The in-process Worker a session starts before it knows its wall (session/open.ts, issue 24):
 * it boots while the kernel wall is probed, and then becomes the process wall's worker or the
 * kernel wall's `spawn` Worker, whichever {@link EffectWorker.start} chooses; nothing is sent to
 * it before that. Same options, so the same permissions, as the Worker it stands in for.
 */
export class EarlyWorker {
  #sink: Sink | null = null;
  #failed: WorkerError | null = null;
  #channel: Channel;

  constructor(readonly options: WallOptions) {
    this.#channel = workerChannel(options, {
      reply: (reply) => this.#sink?.reply(reply),
      fail: (error) => this.#sink ? this.#sink.fail(error) : (this.#failed ??= error),
    });
  }

  /** The Worker's channel, its replies and failure (one before now too) going to `sink`. */
  adopt(sink: Sink): Channel {
    this.#sink = sink;
    if (this.#failed) sink.fail(this.#failed);
    return this.#channel;
  }

  /** Stops it when the session does not get as far as its pool. */
  stop(): void {
    void this.#channel.stop();
  }
}

/**
 * Whether an early Worker was started with exactly these permissions and hidden folders (its
 * hidden set is given to it when it starts: one started without them would not refuse them).
 */
function sameOptions(a: WallOptions, b: WallOptions): boolean {
  const wall = (o: WallOptions) => JSON.stringify([workerPermissions(o), hiddenOf(o)]);
  return wall(a) === wall(b);
}

/** Whether the kernel wall would be used for these places, and why not when it would not. */
export function kernelWallStatus(options?: WallOptions): { usable: boolean; why: string } {
  const wall = kernelWall(options);
  if (!wall.ok) return { usable: false, why: wall.why };
  const bad = options ? kernelPlaces(options) : null;
  return bad ? { usable: false, why: bad } : { usable: true, why: "" };
}

/**
 * What a session does while it opens, before it starts its pool: under `deno run`, the kernel
 * wall's module cache for this version is found or warmed (module_cache.ts), and the wall's probe
 * is started with it, without blocking the main thread, for `places` (the session's worker,
 * without its cache; null: the session did not open) once they are known: their worker's own
 * command line, covers and all (kernel.ts `kernelWall`). Resolves, once both are known and the
 * probe started, to the cache the children get (`WallOptions.moduleCache`), null for none; never
 * rejects. The cache once per process, the probe once per session's places:
 * {@link EffectWorker.startWhileProbed} joins it (and {@link EffectWorker.start} finds its answer
 * once it is done).
 */
export async function prepareKernelWall(
  stateDir: string,
  version: string,
  places: Promise<WallOptions | null>,
): Promise<string | null> {
  try {
    const found = kernelPlan();
    if (!found.ok) return null;
    let cache: string | null = null;
    if (found.plan.module) {
      const made = await moduleCache({
        stateDir,
        version,
        module: found.plan.module,
        uid: effectiveUid(),
      });
      cache = made.dir;
    }
    const options = await places;
    // Started, not awaited: the session's pool joins it (EffectWorker.startWhileProbed).
    if (options) void kernelWallReady(cache, options);
    return cache;
  } catch {
    return null; // EffectWorker.start probes as before, and the children get no cache
  }
}

export class EffectWorker {
  #next = 0;
  #pending = new Map<number, (reply: WorkerReply) => void>();
  /** For calls that asked for it: where a run's output goes as it comes. */
  #progress = new Map<number, (chunk: OutputChunk) => void>();
  #dead: WorkerError | null = null;
  /** The other workers of this one's pool (see pool.ts); empty for a worker in a pool. */
  #helpers: EffectWorker[] = [];
  #options: WallOptions;
  /** Null while the probe of a worker started by {@link startWhileProbed} runs. */
  #wall: Wall | null;
  /** File operations (and everything, on the process wall). */
  #main: Channel;
  /** Kernel wall only: the in-process Worker for `spawn`, started at the first one. */
  #spawner: Channel | null = null;

  private constructor(
    options: WallOptions,
    wall: Wall | null,
    channels: (sink: Sink) => { main: Channel; spawner: Channel | null },
  ) {
    this.#options = options;
    this.#wall = wall;
    const made = channels(this.#sink());
    this.#main = made.main;
    this.#spawner = made.spawner;
  }

  /** A pool member's channels once its wall is known: a kernel child, or an in-process Worker. */
  static #channels(options: WallOptions, kernelArgv: string[] | null, early: EarlyWorker | null) {
    return (sink: Sink) =>
      kernelArgv
        ? { main: kernelChannel(kernelArgv, sink), spawner: early?.adopt(sink) ?? null }
        : { main: early?.adopt(sink) ?? workerChannel(options, sink), spawner: null };
  }

  #sink(): Sink {
    return {
      reply: (reply) => {
        if ("progress" in reply) {
          this.#progress.get(reply.id)?.(reply.progress);
          return;
        }
        const resolve = this.#pending.get(reply.id);
        this.#pending.delete(reply.id);
        this.#progress.delete(reply.id);
        resolve?.(reply);
      },
      fail: (error) => this.#fail(error),
    };
  }

  /**
   * Starts the worker with the narrowed permissions of the second wall. With `poolSize` > 1,
   * that many workers in all, each behind exactly the same permissions: this one answers
   * `call`, and {@link pool} lists them all for work that splits (a search of many files).
   * `wall` forces one wall (the bench compares them); `kernel` where it does not work throws.
   * `early`: a Worker already started with the same options, which this one takes over (as its
   * process-wall worker, or its `spawn` Worker on the kernel wall); one with other options is
   * stopped and not used.
   */
  static start(
    options: WallOptions,
    poolSize = 1,
    wall: WallChoice = "auto",
    early: EarlyWorker | null = null,
  ): EffectWorker {
    if (early && !sameOptions(early.options, options)) {
      early.stop();
      early = null;
    }
    let argv: string[] | null = null;
    let started: EffectWorker;
    try {
      if (wall !== "process") {
        const found = kernelWall(options);
        const bad = found.ok ? kernelPlaces(options) : found.why;
        if (found.ok && !bad) argv = childArgv(found.plan, options);
        else if (wall === "kernel") throw new Error(`the kernel wall does not work here: ${bad}`);
      }
      started = new EffectWorker(
        options,
        argv ? "kernel" : "process",
        EffectWorker.#channels(options, argv, early),
      );
    } catch (e) {
      early?.stop();
      throw e;
    }
    const spawn = () =>
      new EffectWorker(
        options,
        argv ? "kernel" : "process",
        EffectWorker.#channels(options, argv, null),
      );
    for (let i = 1; i < poolSize; i++) started.#helpers.push(spawn());
    return started;
  }

  /**
   * {@link start} on the `auto` wall without waiting for the kernel wall's probe (a session,
   * issue 24): where the kernel wall may hold for these places, the pool's children are started
   * now, with exactly the command line the probe runs ({@link kernelWallProbe}), while it runs.
   * Requests may be made at once; they wait, in order, for its answer. Passed: they go to the
   * children. Failed: each child is ended without having been sent anything, and they go to
   * in-process Workers instead (the first to `early`), as {@link start} would have chosen. So no
   * request reaches a child before the probe of its command line passed. `spawn` goes to the
   * in-process Worker either way.
   */
  static startWhileProbed(
    options: WallOptions,
    poolSize = 1,
    early: EarlyWorker | null = null,
  ): EffectWorker {
    if (early && !sameOptions(early.options, options)) {
      early.stop();
      early = null;
    }
    const probe = kernelWallProbe(options);
    if (probe.argv === null) return EffectWorker.start(options, poolSize, "auto", early);
    const { argv } = probe;
    const holds = probe.wall.then((wall) => wall.ok, () => false);
    const member = (first: boolean): EffectWorker => {
      const worker: EffectWorker = new EffectWorker(options, null, (sink) => {
        const spawner = first ? early?.adopt(sink) ?? workerChannel(options, sink) : null;
        const child = guessedChild(argv, sink);
        const main = heldChannel(holds.then((kernel) => {
          worker.#wall = kernel ? "kernel" : "process";
          if (kernel) return child.use();
          void child.discard();
          return spawner ?? workerChannel(options, sink);
        }));
        return { main, spawner };
      });
      return worker;
    };
    const started = member(true);
    for (let i = 1; i < poolSize; i++) started.#helpers.push(member(false));
    return started;
  }

  /**
   * Kernel wall: starts the in-process Worker that runs programs now rather than at the first
   * `spawn`, so that it boots while the children do (a session's first spawn, its confinement
   * probe, comes right after opening). Nothing on the process wall, where one Worker does all.
   */
  startSpawner(): void {
    if (this.#wall === "kernel" && !this.#dead) {
      this.#spawner ??= workerChannel(this.#options, this.#sink());
    }
  }

  /**
   * Which wall contains this worker's file operations; `probing` while the probe of one started
   * by {@link startWhileProbed} runs (its requests wait for the answer).
   */
  get wall(): Wall | "probing" {
    return this.#wall ?? "probing";
  }

  /** Every worker of the pool, this one first (just this one when it was started alone). */
  get pool(): readonly EffectWorker[] {
    return [this, ...this.#helpers];
  }

  /** False once the worker has stopped or failed: it answers every request with that error. */
  get alive(): boolean {
    return this.#dead === null;
  }

  /** Requests sent and not yet answered: how busy this worker is. */
  get pending(): number {
    return this.#pending.size;
  }

  #fail(error: WorkerError): void {
    if (this.#dead) return;
    this.#dead = error;
    for (const [id, resolve] of this.#pending) resolve({ id, ok: false, error });
    this.#pending.clear();
    this.#progress.clear();
  }

  #channelFor(request: WorkerRequest): Channel | null {
    if (this.#wall === "process") return this.#main;
    if (request.op === "spawn") {
      return this.#spawner ??= workerChannel(this.#options, this.#sink());
    }
    if (request.op === "stopSpawns") return this.#spawner; // none yet: nothing runs
    return this.#main;
  }

  /**
   * Sends a request and waits for its reply; `onProgress` receives a run's output as it comes
   * (a spawn with `streamBytes`).
   */
  call<R extends WorkerRequest>(
    request: R,
    onProgress?: (chunk: OutputChunk) => void,
  ): Promise<WorkerResult<WorkerValue<R>>> {
    if (this.#dead) return Promise.resolve({ ok: false, error: this.#dead });
    const channel = this.#channelFor(request);
    if (!channel) {
      return Promise.resolve({ ok: true, value: { stopped: 0 } as WorkerValue<R> });
    }
    const id = this.#next++;
    if (onProgress) this.#progress.set(id, onProgress);
    return new Promise((resolve) => {
      this.#pending.set(id, (reply) => {
        if (reply.ok) resolve({ ok: true, value: reply.value as WorkerValue<R> });
        else resolve({ ok: false, error: reply.error });
      });
      channel.post({ id, request });
    });
  }

  /**
   * Stops this worker and the rest of its pool. Every pending call is answered `Terminated` at
   * once; the promise settles when the child processes are gone (tests await it).
   */
  terminate(): Promise<void> {
    const helpers = this.#helpers.map((helper) => helper.terminate());
    this.#fail({ name: "Terminated", message: "the effect worker was stopped" });
    const stops = [this.#main.stop(), this.#spawner?.stop()];
    return Promise.all([...helpers, ...stops]).then(() => {});
  }
}
