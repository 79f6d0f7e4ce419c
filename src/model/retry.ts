/**
 * When and how long to wait before asking an endpoint again: connection errors, 429 and 5xx
 * are retried with exponential backoff and full jitter, bounded both in count and in total
 * time, so a dead endpoint ends in a clear error instead of an endless wait.
 */

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** No new try starts once this much time has passed since the first. */
  totalMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  totalMs: 60_000,
};

/**
 * The wait before try `attempt + 1` (attempt counts from 1): a random delay up to the doubled
 * base, or the server's `Retry-After` when it gave one (capped like the rest).
 */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  if (retryAfterMs !== null && retryAfterMs >= 0) return Math.min(retryAfterMs, policy.maxDelayMs);
  // Full jitter, but never less than a tenth of the ceiling, so tries do not stampede.
  return Math.round(ceiling * (0.1 + 0.9 * random()));
}

/** Reads a `Retry-After` header: seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Whether an HTTP status is worth asking again. */
export function retryableStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status <= 599);
}
