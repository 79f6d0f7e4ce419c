/**
 * The driver (design.md §2): sends the conversation to the planner, validates and dispatches
 * its tool calls, and returns the results. It sees only what the planner may see and never
 * needs the bytes behind a reference. Nothing the planner sends can crash it: an unknown tool,
 * malformed arguments, a schema failure and an exception inside a tool all come back to the
 * planner as error results, and the loop goes on.
 *
 * It decides no rule and chooses no label: what it places in the planner context, and whether a
 * result may go to the planner endpoint, it asks of its policy port (`DriverPolicy`).
 */
import { z } from "zod";
import {
  type DriverPolicy,
  type OutgoingResult,
  shownMarkers,
  type ToolPolicy,
} from "../policy/api.ts";
import { formatLabel, type Label } from "../util/label.ts";
import type { Settings } from "../state/settings.ts";
import type { SessionState } from "../state/session_state.ts";
import type { Asserted, TranscriptWriter } from "../state/transcript.ts";
import {
  failure,
  type ProcessorPort,
  type ToolContext,
  type ToolDef,
  type ToolOutput,
} from "../tools/tool.ts";
import { allTools } from "../tools/registry.ts";
import {
  type ChatMessage,
  type ModelClient,
  ModelError,
  type ModelReply,
  type ToolCall,
  type ToolSpec,
} from "../model/types.ts";
import type { DriverEvent, TurnStatus } from "./events.ts";
import {
  cutToShare,
  estimateTokens,
  fitToWindow,
  loadTokenizer,
  onlyAdded,
  resultShareChars,
} from "./context_window.ts";
import { effectiveWindow, type Window } from "../util/window.ts";
import {
  askAgainAfterReply,
  contextFix,
  type ServedContext,
  serverName,
  serverTruncated,
  truncationNotice,
} from "../model/served_context.ts";
import { COMPACT_INSTRUCTION, cutPoint, requestsIn, summaryMessage } from "./compaction.ts";
import { findTextCalls } from "./text_calls.ts";
import { ReasoningFilter, stripReasoning } from "../util/reasoning.ts";
import { buildSystemPrompt } from "./system_prompt.ts";
import { plural } from "../util/plural.ts";
import { untilAborted } from "../util/abort.ts";

/** How many lines of a `{{ref:N}}` the screen shows; `/show ref:N` shows the rest. */
export const SHOWN_MAX_LINES = 200;

/** Arguments larger than this are refused before parsing; a file that big is not written in one call. */
export const MAX_ARGUMENT_BYTES = 1024 * 1024;

/** The longest the driver waits for the server's answer about its context (each probe is shorter). */
const ASK_MS = 10_000;

export interface SystemPromptPart {
  text: string;
  /** What it places in the planner context (AGENTS.md carries its file's label). */
  label: Label;
}

export interface DriverOptions {
  planner: ModelClient;
  processor: ProcessorPort;
  /** The driver's port of the policy layer (policy/api.ts). */
  policy: DriverPolicy;
  /** The port every tool call receives. */
  decide: ToolPolicy;
  settings: Settings;
  session: SessionState;
  transcript: TranscriptWriter;
  emit: (event: DriverEvent) => void;
  /** The tools offered; the registry's fixed list unless a test narrows it. */
  tools?: readonly ToolDef<unknown>[];
  /** Built at the start of each turn (skills and AGENTS.md can change between turns). */
  systemPrompt?: () => Promise<SystemPromptPart> | SystemPromptPart;
  /** The conversation so far, for a resumed session (from loadTranscript). */
  history?: ChatMessage[];
  /** What each message of `history` placed in the planner context (null: not recorded). */
  historyLabels?: readonly (Label | null)[];
}

export interface TurnOptions {
  signal?: AbortSignal;
  /** Planner replies allowed in this turn (`--max-turns`); default settings.maxTurns. */
  maxReplies?: number;
  /**
   * The labels of what the person hands over with their words (a shell line's output, §9): the
   * policy layer joins them with the label of the words themselves (design.md §3).
   */
  alongside?: readonly Label[];
  /** A label already joined by the caller; taken as one more `alongside`. */
  label?: Label;
}

/** What a turn has done so far: the replies it used and the last text the planner wrote. */
interface TurnProgress {
  replies: number;
  lastText: string;
}

export interface TurnOutcome {
  status: TurnStatus;
  /** The planner's last text (its answer when finished). */
  text: string;
  /** Planner replies in this turn. */
  replies: number;
  error?: string;
}

export class Driver {
  #o: DriverOptions;
  readonly #tools: readonly ToolDef<unknown>[];
  /** The port every tool call receives, made once. */
  readonly #decide: ToolPolicy;
  /** The driver's own port: the planner context and its labels, the decisions, the egress gate. */
  readonly #policy: DriverPolicy;
  readonly #byName: Map<string, ToolDef<unknown>>;
  readonly #specs: ToolSpec[];
  /** The JSON type each tool's schema gives a parameter, for calls written as raw text. */
  readonly #paramType = (tool: string, param: string): string | undefined => {
    const spec = this.#specs.find((s) => s.function.name === tool);
    const props = spec?.function.parameters.properties as
      | Record<string, { type?: unknown }>
      | undefined;
    const type = props && Object.hasOwn(props, param) ? props[param]?.type : undefined;
    return typeof type === "string" ? type : undefined;
  };
  #messages: ChatMessage[];
  /** What each tool result placed in the planner context. */
  readonly #placed = new WeakMap<ChatMessage, Label>();
  /** Tool results the egress gate let go to the planner endpoint in this session. */
  readonly #cleared = new WeakSet<ChatMessage>();
  /** Planner replies over the whole session. */
  replies = 0;
  /** Whether the person was told the conversation is being shortened to fit the window. */
  #toldShortening = false;
  /**
   * How full the context window was at the last request, or null before one: the server's own
   * count when it sent one, else the estimate.
   */
  contextFill: number | null = null;
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

  constructor(options: DriverOptions) {
    this.#decide = options.decide;
    this.#policy = options.policy;
    this.#o = options;
    this.#tools = options.tools ?? allTools();
    this.#byName = new Map(this.#tools.map((t) => [t.name, t]));
    this.#specs = toolSpecs(this.#tools);
    this.#window = effectiveWindow(options.settings.contextWindow, null);
    this.#messages = [...(options.history ?? [])];
    this.#messages.forEach((m, i) => {
      const l = options.historyLabels?.[i];
      if (l) this.#placed.set(m, l);
    });
    this.#policy.onContextChange((l) =>
      options.emit({ type: "context_label", label: formatLabel(l) })
    );
    this.#policy.onStateProblem((text) => options.emit({ type: "notice", text }));
  }

  /** The system prompt of the last request (null before one), for `/context`. */
  lastSystemPrompt: string | null = null;

  /** `/model NAME`: the planner client for the next requests; the conversation stays. */
  usePlanner(planner: ModelClient): void {
    this.#o = { ...this.#o, planner };
    // What the old model's server served and counted says nothing of the new one's: the
    // window goes back to the config's until the next request asks again.
    this.#served = null;
    this.#asking = null;
    this.#askedAgain = false;
    this.#lastSent = null;
    this.#countRatio = 1;
    this.#window = effectiveWindow(this.#o.settings.contextWindow, null);
  }

  /** The model the planner requests name now. */
  get plannerModel(): string {
    return this.#o.planner.model;
  }

  /** The conversation (without the system prompt), as the planner will next see it. */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
  }

  get toolSpecs(): readonly ToolSpec[] {
    return this.#specs;
  }

  /** The window requests are fitted to now, in tokens, and who set it. */
  get contextWindow(): Window {
    return this.#window;
  }

  /** `/clear`: a new conversation; the label goes back to `(T,pub)`. */
  async clear(): Promise<void> {
    this.#messages = [];
    this.contextFill = null;
    this.#lastSent = null;
    this.#policy.clearContext();
    await this.#o.transcript.clear();
  }

  async #system(): Promise<ChatMessage> {
    // Skills and AGENTS.md are labeled by the trust map as it is now, not as this session read it.
    await this.#policy.refreshTrust();
    const part = this.#o.systemPrompt ? await this.#o.systemPrompt() : {
      text: buildSystemPrompt({ skills: this.#o.session.skills, oneShot: this.#o.session.oneShot }),
      label: this.#policy.systemPromptLabel(),
    };
    this.#policy.placeInContext(part.label);
    this.lastSystemPrompt = part.text;
    return { role: "system", content: part.text };
  }

  async #append(message: ChatMessage, placed?: Label, asserted?: Asserted): Promise<ChatMessage> {
    this.#messages.push(message);
    if (placed) {
      this.#placed.set(message, placed);
      this.#policy.placeInContext(placed);
    }
    await this.#o.transcript.message(message, placed, asserted);
    return message;
  }

  /**
   * Before the conversation is sent: a tool result not yet let go to this planner endpoint — one
   * restored from a transcript, made in a session whose endpoint may have been local — is put to
   * the egress gate now, and what the gate gives in its place is sent instead.
   */
  async #egressBeforeSend(): Promise<void> {
    for (let i = 0; i < this.#messages.length; i++) {
      const m = this.#messages[i];
      if (m.role !== "tool" || this.#cleared.has(m)) continue;
      const tool = this.#toolOf(m.tool_call_id, i);
      const label = this.#placed.get(m) ?? null;
      const withheld = await this.#gate({ tool, content: m.content, label, stored: true });
      if (!withheld) {
        this.#cleared.add(m);
        continue;
      }
      const kept: ChatMessage = {
        role: "tool",
        tool_call_id: m.tool_call_id,
        content: withheld.content,
      };
      this.#placed.set(kept, withheld.label);
      this.#cleared.add(kept);
      this.#messages[i] = kept;
    }
  }

  /** The tool whose call a result answers (the nearest assistant message before it). */
  #toolOf(callId: string, at: number): string {
    for (let j = at - 1; j >= 0; j--) {
      const m = this.#messages[j];
      if (m.role !== "assistant") continue;
      const call = m.tool_calls?.find((c) => c.id === callId);
      if (call) return call.function.name.slice(0, 80);
    }
    return "a tool";
  }

  /**
   * Asks the egress gate about a result going to the planner endpoint: null when it may go,
   * else the result to send instead (why nobody could be asked goes to the person).
   */
  async #gate(result: OutgoingResult): Promise<ToolOutput | null> {
    const egress = await this.#policy.gateResult(this.#o.settings.planner, result);
    if (egress.sent) return null;
    if (egress.problem !== null) this.#o.emit({ type: "notice", text: egress.problem });
    return egress.withheld;
  }

  /** One turn: the person's message, then planner replies and tool calls until it answers. */
  async runTurn(userText: string, options: TurnOptions = {}): Promise<TurnOutcome> {
    const maxReplies = options.maxReplies ?? this.#o.settings.maxTurns;
    const turn: TurnProgress = { replies: 0, lastText: "" };
    const alongside = [...(options.alongside ?? []), ...(options.label ? [options.label] : [])];
    await this.#append(
      { role: "user", content: userText },
      this.#policy.personWordsLabel(alongside),
    );
    const system = await this.#system();
    await loadTokenizer();
    while (true) {
      if (options.signal?.aborted) return this.#end(turn, "aborted", "stopped by the person");
      if (turn.replies >= maxReplies) {
        const replies = `${turn.replies} planner ${turn.replies === 1 ? "reply" : "replies"}`;
        return this.#end(turn, "max_turns", `stopped after ${replies} (--max-turns ${maxReplies})`);
      }
      const reply = await this.#request(system, options.signal);
      if ("status" in reply) return this.#end(turn, reply.status, reply.error);
      turn.replies++;
      this.replies++;
      const { text, calls } = this.#readReply(reply);
      if (text.trim() !== "") {
        turn.lastText = text;
        this.#o.emit({ type: "assistant_text", text });
        await this.#showMarked(text);
      }
      if (calls.length === 0) return await this.#answer(turn, text, reply);
      const share = resultShareChars(system, this.#specs, this.#window.fit);
      await this.#runCalls(text, calls, options.signal, share);
    }
  }

  /**
   * Shows the person each reference the planner's text marks `{{ref:N}}` (design.md §15). The
   * conversation keeps the marker only; the content goes to the screen and to the transcript as
   * the person's alone, and never into a request.
   */
  async #showMarked(text: string): Promise<void> {
    for (const ref of shownMarkers(text)) {
      const shown = await this.#policy.showToPerson(ref, SHOWN_MAX_LINES);
      if (!shown.ok) {
        this.#o.emit({ type: "notice", text: `{{${ref}}}: ${shown.error}` });
        continue;
      }
      const s = shown.value;
      const event = {
        type: "shown" as const,
        ref: s.ref,
        kind: s.kind,
        label: formatLabel(s.label),
        source: s.source,
        text: s.text,
        lines: s.lines,
        omitted: s.omitted,
        ...(s.asserted ? { asserted: s.asserted } : {}),
      };
      this.#o.emit(event);
      await this.#o.transcript.shown(event);
    }
  }

  /** Ends the turn: the error (if any) and the final event, for the person and the caller. */
  #end(turn: TurnProgress, status: TurnStatus, error?: string): TurnOutcome {
    const o = this.#o;
    if (error !== undefined) o.emit({ type: "error", message: error });
    o.emit({
      type: "final",
      result: turn.lastText,
      status,
      turns: turn.replies,
      context_label: formatLabel(this.#policy.contextLabel),
    });
    return {
      status,
      text: turn.lastText,
      replies: turn.replies,
      ...(error !== undefined ? { error } : {}),
    };
  }

  /**
   * Sends the conversation, fitted to the window and egress-checked, and waits for the reply;
   * a failure ends the turn (the endpoint's words go to the person, never into the conversation).
   */
  async #request(
    system: ChatMessage,
    signal: AbortSignal | undefined,
  ): Promise<ModelReply | { status: TurnStatus; error: string }> {
    const o = this.#o;
    await this.#egressBeforeSend();
    let fit = fitToWindow(system, this.#messages, this.#specs, this.#window.fit);
    if (!fit.ok) {
      // Old rounds no longer fit even shortened: the planner summarises them, and we go on.
      const compacted = await this.#compact(system, signal);
      if (typeof compacted === "object") return compacted;
      fit = fitToWindow(system, this.#messages, this.#specs, this.#window.fit);
      if (!fit.ok) {
        const limit = this.#window.by === "server"
          ? `; ${serverName(this.#served?.server ?? null)} serves only ${this.#window.tokens} ` +
            `tokens: ${contextFix(this.#served?.server ?? null)}`
          : "";
        return { status: "error", error: fit.message + limit };
      }
    }
    if (fit.compacted && !this.#toldShortening) {
      // Said once: after this the conversation is shortened as often as it needs to be.
      this.#toldShortening = true;
      o.emit({
        type: "notice",
        text: `the conversation was near the context window (${this.#window.tokens} tokens): ` +
          `${plural(fit.compacted, "old tool result")} ${
            fit.compacted === 1 ? "was" : "were"
          } shortened`,
      });
    }
    this.contextFill = fit.tokens / this.#window.fit;
    // The server is asked what it serves alongside the first request, not before it.
    if (this.#asking === null) this.#asking = this.#ask();
    o.emit({ type: "model_request", turn: this.replies + 1 });
    // Leading reasoning is not streamed to the screen either.
    const thoughts = new ReasoningFilter();
    try {
      const reply = await o.planner.complete({
        messages: fit.messages,
        tools: this.#specs,
        signal,
        onText: (text) => {
          const shown = thoughts.push(text);
          if (shown !== "") o.emit({ type: "text_delta", text: shown });
        },
        onRetry: (why, delay, attempt) =>
          o.emit({
            type: "notice",
            text: `the model endpoint ${o.planner.endpoint}: ${why}; trying again in ${
              (delay / 1000).toFixed(1)
            } s (try ${attempt + 1})`,
          }),
      });
      // A partial opener held back at the end was text after all.
      const held = thoughts.end();
      if (held !== "") o.emit({ type: "text_delta", text: held });
      await this.#learnServed(signal);
      this.#readUsage(fit.messages, fit.tokens, reply);
      return reply;
    } catch (e) {
      return turnFailure(e);
    }
  }

  /** Asks the planner's server what it serves; bounded, and null when it cannot be asked. */
  #ask(): Promise<ServedContext | null> {
    const planner = this.#o.planner;
    if (!planner.servedContext) return Promise.resolve(null);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ASK_MS));
    return Promise.race([planner.servedContext().catch(() => null), bound])
      .finally(() => clearTimeout(timer));
  }

  /**
   * After a reply: takes the server's answer about its context into the window, and asks again
   * once when the answer may have changed with that request (`askAgainAfterReply`).
   */
  async #learnServed(signal: AbortSignal | undefined): Promise<void> {
    if (this.#asking === null) return;
    const before = this.#served;
    // Stopping the turn does not wait for the server's answer; it is taken after a later reply.
    let served = await untilAborted(this.#asking, signal);
    if (served === undefined) return;
    if (served && askAgainAfterReply(served) && !this.#askedAgain) {
      this.#askedAgain = true;
      this.#asking = this.#ask();
      served = (await untilAborted(this.#asking, signal)) ?? served;
    }
    if (served === null || served === before) return;
    this.#served = served;
    const window = effectiveWindow(this.#o.settings.contextWindow, served.tokens, this.#countRatio);
    const changed = window.tokens !== this.#window.tokens || window.by !== this.#window.by;
    this.#window = window;
    if (served.tokens === null || (before !== null && !changed)) return;
    const model = served.servedName ?? this.#o.planner.model;
    const configured = this.#o.settings.contextWindow;
    this.#o.emit({
      type: "notice",
      text: `context window: ${window.tokens} tokens — ${serverName(served.server)} serves ` +
        `${model} with ${served.tokens} (${served.source}); the config says ${configured}` +
        (window.by === "server" ? `. For more: ${contextFix(served.server)}` : ""),
    });
  }

  /**
   * Reads the server's count of the request just answered: the fill shown to the person is the
   * real count, and a count that says the server cut the conversation is told, once a session.
   */
  #readUsage(sent: readonly ChatMessage[], estimated: number, reply: ModelReply): void {
    const promptTokens = reply.usage?.promptTokens;
    const counted = typeof promptTokens === "number" && Number.isFinite(promptTokens) &&
        promptTokens > 0
      ? promptTokens
      : null;
    const previous = this.#lastSent;
    this.#lastSent = { messages: sent, promptTokens: counted };
    if (counted === null) return;
    this.contextFill = counted / this.#window.tokens;
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
        this.#window = effectiveWindow(
          this.#o.settings.contextWindow,
          this.#served?.tokens ?? null,
          ratio,
        );
      }
      return;
    }
    if (this.#toldTruncated) return;
    this.#toldTruncated = true;
    this.#o.emit({ type: "notice", text: truncationNotice(why, counted, this.#served) });
  }

  /** The reply's text and calls, with calls a small model wrote as text recovered. */
  #readReply(reply: ModelReply): { text: string; calls: (ToolCall & { fromText?: boolean })[] } {
    const o = this.#o;
    if (reply.finishReason === "length") {
      o.emit({
        type: "notice",
        text: "the planner's reply was cut off at the model's output limit",
      });
    }
    for (const p of reply.problems) {
      if (p !== "the reply had no choices") {
        o.emit({ type: "notice", text: `the planner's reply: ${p}` });
      }
    }
    // Reasoning left in the text (`<think>…</think>`) is neither the answer nor content to send
    // back, and a call inside it is not a call (src/util/reasoning.ts).
    if (reply.toolCalls.length > 0) {
      return { text: stripReasoning(reply.text).text, calls: reply.toolCalls };
    }
    const found = findTextCalls(reply.text, undefined, { paramType: this.#paramType });
    if (found.calls.length === 0 && found.reasoning.length > 0 && found.rest.trim() === "") {
      o.emit({
        type: "notice",
        text: "the planner's reply held only reasoning (<think>…), which is neither shown nor kept",
      });
    }
    if (found.calls.length === 0) return { text: found.rest, calls: [] };
    o.emit({
      type: "notice",
      text: `the planner wrote ${
        plural(found.calls.length, "tool call")
      } as text; handled as calls`,
    });
    return {
      text: found.rest,
      calls: found.calls.map((c, i) => ({
        id: `text_call_${this.replies}_${i}`,
        type: "function" as const,
        function: { name: c.name, arguments: c.arguments },
        fromText: true,
      })),
    };
  }

  /** A reply with no call: the planner's answer, or an empty reply, which ends in an error. */
  async #answer(turn: TurnProgress, text: string, reply: ModelReply): Promise<TurnOutcome> {
    const planner = this.#o.planner;
    if (text.trim() === "") {
      await this.#append({ role: "assistant", content: "" });
      return this.#end(
        turn,
        "error",
        reply.problems.includes("the reply had no choices")
          ? `the model endpoint ${planner.endpoint} sent a reply with no choices (nothing to act on)`
          : `the planner (${planner.model} at ${planner.endpoint}) sent an empty reply: no text and no tool call`,
      );
    }
    await this.#append({ role: "assistant", content: text });
    return this.#end(turn, "finished");
  }

  /**
   * Runs the calls of one reply, at most the configured number, each answered by one result in
   * the conversation (a call stopped by the person gets a result saying so).
   */
  async #runCalls(
    text: string,
    calls: (ToolCall & { fromText?: boolean })[],
    signal: AbortSignal | undefined,
    share: number,
  ): Promise<void> {
    const o = this.#o;
    const cap = o.settings.limits.toolCallsPerReply;
    const dropped = Math.max(0, calls.length - cap);
    const seen = new Set<string>();
    const kept = calls.slice(0, cap).map((c, i) => ({
      ...c,
      // Each result answers one call: a server that repeats an id gets it made unique.
      id: seen.has(c.id) ? `${c.id}_${i}` : (seen.add(c.id), c.id),
      function: {
        name: c.function.name === "" ? "(no name)" : c.function.name,
        // Oversized arguments are not kept in the conversation; the result says why.
        arguments: c.function.arguments.length > MAX_ARGUMENT_BYTES ? "{}" : c.function.arguments,
      },
      original: c,
    }));
    if (dropped) {
      o.emit({
        type: "notice",
        text:
          `the planner asked for ${calls.length} tool calls in one reply; only the first ${cap} were handled`,
      });
    }
    await this.#append({
      role: "assistant",
      content: text.trim() === "" ? null : text,
      tool_calls: kept.map(({ id, type, function: f }) => ({ id, type, function: f })),
    });
    for (let i = 0; i < kept.length; i++) {
      const call = { ...kept[i].original, id: kept[i].id };
      let output = await this.#dispatch(call, signal, share);
      if (dropped && i === kept.length - 1) {
        output = {
          ...output,
          content:
            `${output.content}\n[note: the reply asked for ${calls.length} tool calls; only the first ` +
            `${cap} were handled and the other ${dropped} were dropped. At most ${cap} calls a reply.]`,
        };
      }
      // Put to the egress gate in #dispatch, before the note was added: not asked again when sent.
      this.#cleared.add(
        await this.#append(
          { role: "tool", tool_call_id: kept[i].id, content: output.content },
          output.label,
          output.asserted,
        ),
      );
      o.emit({
        type: "tool_result",
        id: kept[i].id,
        name: kept[i].function.name,
        content: output.content,
        is_error: output.isError,
        label: formatLabel(output.label),
      });
      if (signal?.aborted) {
        // Every call needs a result, or the endpoint refuses the next request.
        for (const rest of kept.slice(i + 1)) {
          const stopped = failure("stopped by the person before this call ran; nothing was done");
          await this.#append(
            { role: "tool", tool_call_id: rest.id, content: stopped.content },
            stopped.label,
          );
        }
        return;
      }
    }
  }

  /** `/compact`: summarise the conversation so far now, whether or not it still fits. */
  async compact(signal?: AbortSignal): Promise<{ ok: boolean; replaced: number; error?: string }> {
    const system = await this.#system();
    await loadTokenizer();
    const done = await this.#compact(system, signal, true);
    return typeof done === "number"
      ? { ok: done > 0, replaced: done }
      : { ok: false, replaced: 0, error: done.error };
  }

  /**
   * Replaces the oldest rounds with the planner's summary of them, as many times as it takes
   * (bounded) for the rest to fit — or once, asked for by `/compact`. Returns how many messages
   * were replaced, or the failure that ends the turn.
   */
  async #compact(
    system: ChatMessage,
    signal: AbortSignal | undefined,
    once = false,
  ): Promise<number | { status: TurnStatus; error: string }> {
    const o = this.#o;
    const window = this.#window.fit;
    const instruction: ChatMessage = { role: "user", content: COMPACT_INSTRUCTION };
    let replaced = 0;
    for (let attempt = 0; attempt < 6; attempt++) {
      if (!once && fitToWindow(system, this.#messages, this.#specs, window).ok) break;
      const chunkFits = (j: number) =>
        fitToWindow(system, [...this.#messages.slice(0, j), instruction], this.#specs, window).ok;
      const j = cutPoint(this.#messages, chunkFits);
      if (j === null) break;
      const chunk = this.#messages.slice(0, j);
      const request = fitToWindow(system, [...chunk, instruction], this.#specs, window);
      if (!request.ok) break;
      o.emit({ type: "model_request", turn: this.replies + 1 });
      let summary: string;
      try {
        const reply = await o.planner.complete({
          messages: request.messages,
          tools: this.#specs,
          toolChoice: "none",
          signal,
        });
        summary = stripReasoning(reply.text).text.trim();
      } catch (e) {
        return turnFailure(e);
      }
      if (summary === "") break;
      const message = summaryMessage(summary, requestsIn(chunk));
      const label = this.#policy.summaryLabel();
      const kept = this.#messages.slice(j);
      this.#messages = [message, ...kept];
      this.#placed.set(message, label);
      await o.transcript.compact(message, kept.length, label);
      replaced += chunk.length;
      o.emit({
        type: "notice",
        text:
          `the conversation was summarised to fit the context window (${this.#window.tokens} tokens): ` +
          `${
            plural(chunk.length, "earlier message")
          } became one summary; the transcript keeps them all`,
      });
      if (once) break;
    }
    return replaced;
  }

  /** Validates and runs one call; always returns a result the planner can read. */
  async #dispatch(
    call: ToolCall & { fromText?: boolean },
    signal: AbortSignal | undefined,
    share: number,
  ): Promise<ToolOutput> {
    const o = this.#o;
    const raw = call.function.arguments;
    let args: unknown = raw;
    let parseError: string | null = null;
    if (raw.length > MAX_ARGUMENT_BYTES) {
      parseError =
        `the arguments are ${raw.length} bytes, more than the ${MAX_ARGUMENT_BYTES} bytes a call may carry; ` +
        "write large content in parts, or with contents_ref from a processor";
    } else {
      const parsed = parseArguments(raw);
      if (parsed.ok) args = parsed.value;
      else parseError = parsed.error;
    }
    o.emit({
      type: "tool_call",
      id: call.id,
      name: call.function.name,
      arguments: parseError === null ? args : raw.slice(0, 2000),
      ...(call.fromText ? { from_text: true } : {}),
    });
    const tool = this.#byName.get(call.function.name);
    if (!tool) {
      const list = this.#tools.map((t) => t.name).join(", ");
      return failure(
        call.function.name === ""
          ? `the tool call has no name; the tools are: ${list}`
          : `there is no tool named '${call.function.name.slice(0, 80)}'; the tools are: ${list}`,
      );
    }
    if (parseError !== null) return failure(`${tool.name}: ${parseError}`);
    const checked = tool.schema.safeParse(args);
    if (!checked.success) {
      return failure(`${tool.name}: ${describeSchemaError(checked.error, tool)}`);
    }
    const auditBefore = this.#policy.decisions.length;
    const ctx: ToolContext = {
      decide: this.#decide,
      // The window's share, as narrower limits: a page, a vouched command's shown output.
      settings: withinShare(o.settings, share),
      session: o.session,
      processor: o.processor,
      signal,
      emit: (event) =>
        o.emit(
          event.type === "remark"
            ? { type: "remark", text: event.text }
            : { type: "notice", text: event.text },
        ),
    };
    let output: ToolOutput;
    try {
      // Another session may have changed the trust map since the last call: decide on the file.
      await this.#policy.refreshTrust();
      output = await tool.handler(checked.data, ctx);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      o.emit({ type: "notice", text: `${tool.name} failed inside Brave Bot: ${message}` });
      output = failure(
        `${tool.name} failed inside Brave Bot (${message.slice(0, 300)}); nothing more is known`,
      );
    }
    // Whatever a tool could not narrow itself is cut to the share here.
    const fitted = cutToShare(output.content, share);
    if (fitted.cut) output = { ...output, content: fitted.content };
    // Private bytes to a planner endpoint not marked local: the person decides, once per value.
    // An error result is asked about like any other: its label says what it carries.
    const gate = { tool: tool.name, content: output.content, label: output.label, stored: false };
    output = (await this.#gate(gate)) ?? output;
    for (const entry of this.#policy.decisions.slice(auditBefore)) {
      o.emit({
        type: "decision",
        tool: entry.tool,
        decision: entry.decision,
        by: entry.by,
        ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
        routing: entry.routing,
        labels: entry.labels,
      });
    }
    return output;
  }
}

/** The `tools` of a planner request, generated from the zod schemas. */
export function toolSpecs(tools: readonly ToolDef<unknown>[]): ToolSpec[] {
  return tools.map((t) => {
    const schema = z.toJSONSchema(t.schema, { unrepresentable: "any", io: "input" }) as Record<
      string,
      unknown
    >;
    delete schema.$schema;
    return {
      type: "function",
      function: { name: t.name, description: t.description, parameters: schema },
    };
  });
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

/** The arguments string of a call: a JSON object (an empty string means no arguments). */
export function parseArguments(raw: string): Parsed {
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return {
      ok: false,
      error: `the arguments are not valid JSON (${(e as Error).message.slice(0, 120)}); ` +
        `send one JSON object, e.g. {"path": "README.md"}`,
    };
  }
  // Some models encode the object twice.
  if (typeof value === "string") {
    try {
      const inner = JSON.parse(value);
      if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) value = inner;
    } catch { /* reported below */ }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: `the arguments must be a JSON object of named fields, not ${
        Array.isArray(value) ? "a list" : value === null ? "null" : typeof value
      }`,
    };
  }
  return { ok: true, value };
}

/** Names the field and what is accepted, the way the planner can fix its call. */
export function describeSchemaError(error: z.ZodError, tool: ToolDef<unknown>): string {
  const fields = [...Object.keys(tool.routing.shape), ...Object.keys(tool.content.shape)];
  const accepted = `the accepted fields are: ${fields.join(", ")}`;
  const issues = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.length ? issue.path.join(".") : "(arguments)";
    if (issue.code === "unrecognized_keys") {
      return `unknown field ${
        issue.keys.map((k) => `'${k.slice(0, 40)}'`).join(", ")
      }; ${accepted}`;
    }
    if (
      issue.code === "invalid_type" && issue.path.length && /received undefined/.test(issue.message)
    ) {
      return `${where}: required, ${issue.message.replace(/, received undefined/, "")}`;
    }
    return `${where}: ${issue.message}`;
  });
  const text = issues.join("; ");
  return /accepted fields/.test(text) ? text : `${text} (${accepted})`;
}

/**
 * A failed planner request as the end of a turn: the endpoint's words go to the person (the
 * `error` event), nothing of them into the conversation. Anything but a model error is a bug.
 */
function turnFailure(e: unknown): { status: TurnStatus; error: string } {
  if (e instanceof ModelError) {
    return { status: e.kind === "aborted" ? "aborted" : "error", error: e.forPerson("planner") };
  }
  throw e;
}

/**
 * The settings a tool call runs with: the limits that size a result shown to the planner (a
 * read_file page, a vouched command's shown output) narrowed to the window's share, so the tool
 * itself returns less and says where to go on, rather than being cut afterwards.
 */
function withinShare(settings: Settings, share: number): Settings {
  const limits = settings.limits;
  if (limits.readBytes <= share && limits.shownOutputChars <= share) return settings;
  return {
    ...settings,
    limits: {
      ...limits,
      readBytes: Math.min(limits.readBytes, share),
      shownOutputChars: Math.min(limits.shownOutputChars, share),
    },
  };
}
