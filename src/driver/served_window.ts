/**
 * What the driver learns about the planner's window from the server (issue 14, issue 15): the
 * context it really serves (asked alongside the first request, asked again once when that answer
 * may change with the request), the signs in its prompt counts that it cut the conversation, and
 * how many more tokens it counts than the estimate, which shrinks the budget requests are fitted
 * to. Kept apart from the loop because it is the one part of the driver that believes a server's
 * numbers: each is bounded here (`effectiveWindow`, `serverTruncated`) before it sizes anything.
 */
import type { ChatMessage, ModelClient, ModelReply } from "../model/types.ts";
import {
  askAgainAfterReply,
  contextFix,
  type ServedContext,
  serverName,
  serverTruncated,
  truncationNotice,
} from "../model/served_context.ts";
import { effectiveWindow, type Window } from "../util/window.ts";
import { untilAborted } from "../util/abort.ts";
import { estimateTokens, onlyAdded } from "./context_window.ts";

/** The longest the driver waits for the server's answer about its context (each probe is shorter). */
const ASK_MS = 10_000;

export class ServedWindow {
  /** The window requests are fitted to: the config's until the server said what it serves. */
  #window: Window;
  /** The server's answer about its context, asked on the first request (null: not yet, or none). */
  #served: ServedContext | null = null;
  /** The question to the server, under way or answered; null before the first request. */
  #asking: Promise<ServedContext | null> | null = null;
  /** Whether a provisional answer was asked again after a reply. */
  #askedAgain = false;
  /** The last planner request as sent and the server's count of it, to see it truncate. */
  #lastSent: { messages: readonly ChatMessage[]; promptTokens: number | null } | null = null;
  #toldTruncated = false;
  /** How many more tokens the server counts than the estimate does (1 until it sent a count). */
  #countRatio = 1;

  /** `configured`: the config's window; `notice`: what the person is told. */
  constructor(readonly configured: number, readonly notice: (text: string) => void) {
    this.#window = effectiveWindow(configured, null);
  }

  /** The window requests are fitted to now, in tokens, and who set it. */
  get window(): Window {
    return this.#window;
  }

  /**
   * `/model`: what the old model's server served and counted says nothing of the new one's: the
   * window goes back to the config's until the next request asks again.
   */
  forget(): void {
    this.#served = null;
    this.#asking = null;
    this.#askedAgain = false;
    this.#lastSent = null;
    this.#countRatio = 1;
    this.#window = effectiveWindow(this.configured, null);
  }

  /** `/clear`: the next count is of a new conversation, not compared with the last one. */
  forgetSent(): void {
    this.#lastSent = null;
  }

  /** Why a conversation that does not fit cannot be helped by the driver: the server's limit. */
  limitNote(): string {
    if (this.#window.by !== "server") return "";
    const server = this.#served?.server ?? null;
    return `; ${serverName(server)} serves only ${this.#window.tokens} tokens: ${
      contextFix(server)
    }`;
  }

  /** The server is asked what it serves alongside the first request, not before it. */
  askAlongside(planner: ModelClient): void {
    if (this.#asking === null) this.#asking = ask(planner);
  }

  /**
   * After a reply: takes the server's answer about its context into the window, and asks again
   * once when the answer may have changed with that request (`askAgainAfterReply`).
   */
  async learn(planner: ModelClient, signal: AbortSignal | undefined): Promise<void> {
    if (this.#asking === null) return;
    const before = this.#served;
    // Stopping the turn does not wait for the server's answer; it is taken after a later reply.
    let served = await untilAborted(this.#asking, signal);
    if (served === undefined) return;
    if (served && askAgainAfterReply(served) && !this.#askedAgain) {
      this.#askedAgain = true;
      this.#asking = ask(planner);
      served = (await untilAborted(this.#asking, signal)) ?? served;
    }
    if (served === null || served === before) return;
    this.#served = served;
    const window = effectiveWindow(this.configured, served.tokens, this.#countRatio);
    const changed = window.tokens !== this.#window.tokens || window.by !== this.#window.by;
    this.#window = window;
    if (served.tokens === null || (before !== null && !changed)) return;
    const model = served.servedName ?? planner.model;
    this.notice(
      `context window: ${window.tokens} tokens — ${serverName(served.server)} serves ` +
        `${model} with ${served.tokens} (${served.source}); the config says ${this.configured}` +
        (window.by === "server" ? `. For more: ${contextFix(served.server)}` : ""),
    );
  }

  /**
   * Reads the server's count of the request just answered, and returns how full the window is
   * by it (null: the server sent no count). A count that says the server cut the conversation is
   * told, once a session; one that says nothing was cut holds the estimate to it.
   */
  readUsage(sent: readonly ChatMessage[], estimated: number, reply: ModelReply): number | null {
    const promptTokens = reply.usage?.promptTokens;
    const counted = typeof promptTokens === "number" && Number.isFinite(promptTokens) &&
        promptTokens > 0
      ? promptTokens
      : null;
    const previous = this.#lastSent;
    this.#lastSent = { messages: sent, promptTokens: counted };
    if (counted === null) return null;
    const fill = counted / this.#window.tokens;
    const extends_ = previous !== null && previous.promptTokens !== null &&
      onlyAdded(previous.messages, sent);
    const why = serverTruncated({
      promptTokens: counted,
      served: this.#served?.tokens ?? null,
      previous: extends_ ? previous.promptTokens : null,
      added: extends_ ? estimateTokens(sent.slice(previous.messages.length)) : 0,
    });
    if (why === null) {
      // Nothing was cut, so the count is of the whole request: the estimate is held to it.
      const ratio = estimated > 0 ? counted / estimated : 1;
      if (ratio > this.#countRatio * 1.05) {
        this.#countRatio = ratio;
        this.#window = effectiveWindow(this.configured, this.#served?.tokens ?? null, ratio);
      }
      return fill;
    }
    if (!this.#toldTruncated) {
      this.#toldTruncated = true;
      this.notice(truncationNotice(why, counted, this.#served));
    }
    return fill;
  }
}

/** Asks the planner's server what it serves; bounded, and null when it cannot be asked. */
function ask(planner: ModelClient): Promise<ServedContext | null> {
  if (!planner.servedContext) return Promise.resolve(null);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ASK_MS));
  return Promise.race([planner.servedContext().catch(() => null), bound])
    .finally(() => clearTimeout(timer));
}
