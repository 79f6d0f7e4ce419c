import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { backoffDelay, DEFAULT_RETRY, parseRetryAfter, retryableStatus } from "./retry.ts";

Deno.test("backoff stays within its ceiling and never below a tenth of it", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.double({ min: 0, max: 0.999999, noNaN: true }),
      (attempt, r) => {
        const ceiling = Math.min(
          DEFAULT_RETRY.maxDelayMs,
          DEFAULT_RETRY.baseDelayMs * 2 ** (attempt - 1),
        );
        const d = backoffDelay(DEFAULT_RETRY, attempt, null, () => r);
        return d >= Math.floor(ceiling * 0.1) && d <= ceiling;
      },
    ),
  );
});

Deno.test("a server's Retry-After is honoured but capped", () => {
  assert.equal(backoffDelay(DEFAULT_RETRY, 1, 2000), 2000);
  assert.equal(backoffDelay(DEFAULT_RETRY, 1, 3_600_000), DEFAULT_RETRY.maxDelayMs);
  assert.equal(parseRetryAfter("3"), 3000);
  assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000);
  assert.equal(parseRetryAfter("soon"), null);
  assert.equal(parseRetryAfter(null), null);
});

Deno.test("429, 408 and 5xx are retried; other statuses are not", () => {
  for (const s of [429, 408, 500, 502, 503, 599]) assert.equal(retryableStatus(s), true, String(s));
  for (const s of [400, 401, 403, 404, 413, 422]) {
    assert.equal(retryableStatus(s), false, String(s));
  }
});
