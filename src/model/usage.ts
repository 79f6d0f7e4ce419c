/**
 * The server's own token counts over a whole run (docs/cli.md#output-formats: `json`'s `usage`): every
 * reply's `usage`, as the server counted it, added up — planner turns, compaction summaries and
 * processor calls alike, since each is a request the run made. A count the server did not send
 * adds nothing; a total no reply of the run carried is null, never a guess.
 */
import type { ModelReply } from "./types.ts";

/** The run's counts, named as the OpenAI API names them. */
export interface RunUsage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

export class UsageMeter {
  #prompt: number | null = null;
  #completion: number | null = null;

  /** Adds one reply's counts (the reply parser keeps only whole, non-negative numbers). */
  add(usage: ModelReply["usage"]): void {
    if (!usage) return;
    if (countable(usage.promptTokens)) this.#prompt = (this.#prompt ?? 0) + usage.promptTokens;
    if (countable(usage.completionTokens)) {
      this.#completion = (this.#completion ?? 0) + usage.completionTokens;
    }
  }

  get total(): RunUsage {
    return { prompt_tokens: this.#prompt, completion_tokens: this.#completion };
  }
}

function countable(n: number | undefined): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}
