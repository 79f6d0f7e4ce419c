/**
 * The effect-worker pool: a search of thousands of files is bound by reading and scanning them
 * in the worker, one thread per worker, so it is split across a few workers, each behind the
 * same narrowed permissions (EffectWorker.start(options, size)). Everything else keeps using
 * the first worker through `policy.worker.call`.
 */
import type { EffectWorker, WorkerResult } from "./client.ts";
import type { WorkerRequest, WorkerValue } from "./protocol.ts";

/**
 * Two workers, or one per core up to three: more threads than cores only add contention, and
 * each worker keeps a buffer as large as the largest file searched (10 MiB by default).
 */
export function poolSize(cores = navigator.hardwareConcurrency): number {
  if (!Number.isFinite(cores) || cores < 2) return 2;
  return Math.min(3, Math.floor(cores));
}

/**
 * Sends the request to the least busy live worker of `workers`. A worker that died (a crash, an
 * out-of-memory stop) is passed over, so one lost helper slows a search instead of failing it;
 * only when none is alive does the request go to the first, which answers with its error.
 */
export function fanout<R extends WorkerRequest>(
  workers: readonly EffectWorker[],
  request: R,
): Promise<WorkerResult<WorkerValue<R>>> {
  let best: EffectWorker | null = null;
  for (const w of workers) {
    if (w.alive && (best === null || w.pending < best.pending)) best = w;
  }
  return (best ?? workers[0]).call(request);
}
