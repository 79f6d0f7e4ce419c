/**
 * Refusals are values, not exceptions: every layer that can say no returns a `Result`, so the
 * planner always gets a reason it can act on and nothing it sends can crash the process.
 */

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function err<T = never>(error: string): Result<T> {
  return { ok: false, error };
}

/** The message of anything thrown, for turning a surprise into a readable refusal. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
