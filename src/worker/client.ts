/**
 * The main thread's handle on the effect worker. Requests are numbered and answered in any
 * order; an error raised inside the worker comes back as a value with its name (`NotCapable`
 * when Deno's permissions refused it), never as an exception past this class.
 */
import type { WorkerError, WorkerReply, WorkerRequest, WorkerValue } from "./protocol.ts";
import { type WallOptions, workerPermissions } from "./permissions.ts";

export type WorkerResult<T> = { ok: true; value: T } | { ok: false; error: WorkerError };

export class EffectWorker {
  #worker: Worker;
  #next = 0;
  #pending = new Map<number, (reply: WorkerReply) => void>();
  #dead: WorkerError | null = null;
  /** The other workers of this one's pool (see pool.ts); empty for a worker in a pool. */
  #helpers: EffectWorker[] = [];

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const resolve = this.#pending.get(event.data.id);
      this.#pending.delete(event.data.id);
      resolve?.(event.data);
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#fail({ name: "WorkerError", message: event.message });
    };
  }

  /**
   * Starts the worker with the narrowed permissions of the second wall. With `poolSize` > 1,
   * that many workers in all, each behind exactly the same permissions: this one answers
   * `call`, and {@link pool} lists them all for work that splits (a search of many files).
   */
  static start(options: WallOptions, poolSize = 1): EffectWorker {
    const started = EffectWorker.#spawn(options);
    for (let i = 1; i < poolSize; i++) started.#helpers.push(EffectWorker.#spawn(options));
    return started;
  }

  static #spawn(options: WallOptions): EffectWorker {
    const worker = new Worker(new URL("./effect_worker.ts", import.meta.url), {
      type: "module",
      name: "bravebot-effect-worker",
      deno: { permissions: workerPermissions(options) },
    });
    return new EffectWorker(worker);
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
    this.#dead = error;
    for (const [id, resolve] of this.#pending) resolve({ id, ok: false, error });
    this.#pending.clear();
  }

  call<R extends WorkerRequest>(request: R): Promise<WorkerResult<WorkerValue<R>>> {
    if (this.#dead) return Promise.resolve({ ok: false, error: this.#dead });
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, (reply) => {
        if (reply.ok) resolve({ ok: true, value: reply.value as WorkerValue<R> });
        else resolve({ ok: false, error: reply.error });
      });
      this.#worker.postMessage({ id, request });
    });
  }

  /** Stops this worker and the rest of its pool. */
  terminate(): void {
    for (const helper of this.#helpers) helper.terminate();
    this.#fail({ name: "Terminated", message: "the effect worker was stopped" });
    this.#worker.terminate();
  }
}
