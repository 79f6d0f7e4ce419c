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

  /** Starts the worker with the narrowed permissions of the second wall. */
  static start(options: WallOptions): EffectWorker {
    const worker = new Worker(new URL("./effect_worker.ts", import.meta.url), {
      type: "module",
      name: "bravebot-effect-worker",
      deno: { permissions: workerPermissions(options) },
    });
    return new EffectWorker(worker);
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
      const transfer: Transferable[] = [];
      this.#worker.postMessage({ id, request }, transfer);
    });
  }

  terminate(): void {
    this.#fail({ name: "Terminated", message: "the effect worker was stopped" });
    this.#worker.terminate();
  }
}
