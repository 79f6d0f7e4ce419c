/**
 * The context window a request is fitted to: the smaller of the config's and the server's.
 * Shared by the driver (the planner's window) and the policy layer (a processor's documents).
 */

/** The window the driver fits requests to, and who set it. */
export interface Window {
  /** In the server's tokens. */
  tokens: number;
  /** `server`: the server serves less than the config says; `config`: the config's, or both. */
  by: "config" | "server";
  /**
   * The same window in the estimate's tokens, which requests are fitted to and results shared
   * by: smaller when the server was seen to count more than the estimate does.
   */
  fit: number;
}

/** The most the server's count is believed to exceed the estimate by (a junk count is bounded). */
export const MAX_COUNT_RATIO = 2.5;

/**
 * The one rule for the window (issue 14): the smaller of what the config says and what the
 * server serves, once it said; the config's alone until then, or when the server did not say.
 * `countRatio` is the server's prompt count over the estimate of the same request, when the server
 * counted more: the estimate's budget shrinks by it, so that what fits by the estimate fits the
 * server too (issue 15: "so the budget is not off by a factor").
 */
export function effectiveWindow(
  configured: number,
  served: number | null,
  countRatio = 1,
): Window {
  const ratio = Number.isFinite(countRatio)
    ? Math.min(MAX_COUNT_RATIO, Math.max(1, countRatio))
    : 1;
  const w = served !== null && served > 0 && served < configured
    ? { tokens: served, by: "server" as const }
    : { tokens: configured, by: "config" as const };
  return { ...w, fit: Math.floor(w.tokens / ratio) };
}
