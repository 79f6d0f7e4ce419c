/**
 * The driver (docs/contract.md §2): sends the conversation to the planner, validates and dispatches
 * its tool calls, and returns the results. It sees only what the planner may see and never
 * needs the bytes behind a reference. Nothing the planner sends can crash it: an unknown tool,
 * malformed arguments, a schema failure and an exception inside a tool all come back to the
 * planner as error results, and the loop goes on.
 *
 * It decides no rule and chooses no label: what it places in the planner context, and whether a
 * result may go to the planner endpoint, it asks of its policy port (`DriverPolicy`). The parts
 * with rules of their own live beside it: the calls (`tool_calls.ts`), the window the server
 * serves (`served_window.ts`), compaction (`compaction.ts`), fitting (`context_window.ts`), and
 * the conversation's shape (`conversation.ts`): every request is built there, and the person's
 * message after a turn that got no reply takes the place of the unanswered one.
 */
import { type DriverPolicy, shownMarkers, type ToolPolicy } from "../policy/api.ts";
import { formatLabel, type Label } from "../util/label.ts";
import type { Settings } from "../state/settings.ts";
import type { SessionState } from "../state/session_state.ts";
import type { Asserted, KeptRequests, TranscriptWriter } from "../state/transcript.ts";
import {
  failure,
  type ProcessorPort,
  type ToolContext,
  type ToolDef,
  type ToolOutput,
} from "../tools/tool.ts";
import { allTools } from "../tools/registry.ts";
import type { ChatMessage, ModelClient, ModelReply, ToolSpec } from "../model/types.ts";
import {
  decisionEvent,
  type DriverEvent,
  shownEvent,
  type TurnFailure,
  turnFailure,
  type TurnStatus,
} from "./events.ts";
import {
  cutToShare,
  estimateTokens,
  loadTokenizer,
  resultShareChars,
  tokenizerLoaded,
  withinShare,
} from "./context_window.ts";
import type { Window } from "../util/window.ts";
import { ServedWindow } from "./served_window.ts";
import { Outgoing } from "./outgoing.ts";
import { compactConversation, legacyRequests, type Summary } from "./compaction.ts";
import { buildBoundRequest, buildRequest, foldResends, resent } from "./conversation.ts";
import {
  checkCall,
  droppedNotice,
  keepCalls,
  paramTypes,
  type PlannerCall,
  readArguments,
  readReply,
  toolSpecs,
  withDroppedNote,
} from "./tool_calls.ts";
import { streamReply } from "./planner_stream.ts";
import { buildSystemPrompt } from "./system_prompt.ts";
import { plural } from "../util/plural.ts";
import type { ParamType } from "./text_calls.ts";

export { toolSpecs };

/** How many lines of a `{{ref:N}}` the screen shows; `/show ref:N` shows the rest. */
export const SHOWN_MAX_LINES = 200;

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
  /**
   * Set when `history` opens with a compaction's summary: the person's requests kept beside it
   * (null: a transcript written before they were kept as data).
   */
  historySummary?: { requests: KeptRequests | null } | null;
}

export interface TurnOptions {
  signal?: AbortSignal;
  /** Planner replies allowed in this turn (`--max-turns`); default settings.maxTurns. */
  maxReplies?: number;
  /**
   * The labels of what the person hands over with their words (a shell line's output, §9): the
   * policy layer joins them with the label of the words themselves (docs/contract.md §4.1).
   */
  alongside?: readonly Label[];
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
  /**
   * The tools' schemas as sent, made at the first request (or the first look at them), not with
   * the driver: the session's prompt does not wait for zod's conversion (issue 24).
   */
  #specsMade: ToolSpec[] | null = null;
  get #specs(): ToolSpec[] {
    return this.#specsMade ??= toolSpecs(this.#tools);
  }
  #paramTypeMade: ParamType | null = null;
  /** The JSON type each tool's schema gives a parameter, for calls written as raw text. */
  get #paramType(): ParamType {
    return this.#paramTypeMade ??= paramTypes(this.#specs);
  }
  #messages: ChatMessage[];
  /** The summary the conversation opens with, if any, with the person's requests beside it. */
  #summary: Summary | null = null;
  /** What each message placed in the planner context, and which results the gate let go. */
  readonly #outgoing: Outgoing;
  /** Planner replies over the whole session. */
  replies = 0;
  /** Whether the person was told the conversation is being shortened to fit the window. */
  #toldShortening = false;
  /**
   * How full the context window was at the last request, or null before one: the server's own
   * count when it sent one, else the estimate.
   */
  contextFill: number | null = null;
  /** The window requests are fitted to, as the planner's server is learned. */
  readonly #served: ServedWindow;

  constructor(options: DriverOptions) {
    this.#decide = options.decide;
    this.#policy = options.policy;
    this.#o = options;
    this.#tools = options.tools ?? allTools();
    this.#served = new ServedWindow(
      options.settings.contextWindow,
      (text) => options.emit({ type: "notice", text }),
    );
    this.#outgoing = new Outgoing(
      options.policy,
      () => this.#o.settings.planner,
      (text) => options.emit({ type: "notice", text }),
    );
    const opened = options.history?.[0];
    const summarised = options.historySummary != null && opened?.role === "user";
    if (summarised) {
      const requests = options.historySummary?.requests ?? legacyRequests(opened.content);
      this.#summary = { message: opened, requests };
    }
    // A transcript written before resends took the place of the unanswered message.
    const history = foldResends(
      options.history ?? [],
      options.historyLabels ?? [],
      summarised,
      (earlier, later) =>
        earlier || later
          ? this.#policy.personWordsLabel([earlier, later].filter((l) => l !== null))
          : null,
    );
    this.#messages = history.messages;
    this.#messages.forEach((m, i) => {
      const l = history.labels[i];
      if (l) this.#outgoing.place(m, l);
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
    this.#served.forget();
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
    return this.#served.window;
  }

  /** `/clear`: a new conversation; the label goes back to `(T,pub)`. */
  async clear(): Promise<void> {
    this.#messages = [];
    this.#summary = null;
    this.contextFill = null;
    this.#served.forgetSent();
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
      this.#outgoing.place(message, placed);
      this.#policy.placeInContext(placed);
    }
    await this.#o.transcript.message(message, placed, asserted);
    return message;
  }

  /** One turn: the person's message, then planner replies and tool calls until it answers. */
  async runTurn(userText: string, options: TurnOptions = {}): Promise<TurnOutcome> {
    const maxReplies = options.maxReplies ?? this.#o.settings.maxTurns;
    const turn: TurnProgress = { replies: 0, lastText: "" };
    await this.#personSays(userText, options.alongside ?? []);
    const system = await this.#system();
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
      const { text, calls } = readReply(
        reply,
        this.#paramType,
        this.replies,
        (notice) => this.#o.emit({ type: "notice", text: notice }),
      );
      if (text.trim() !== "") {
        turn.lastText = text;
        this.#o.emit({ type: "assistant_text", text });
        await this.#showMarked(text);
      }
      if (calls.length === 0) return await this.#answer(turn, text, reply);
      const share = resultShareChars(system, this.#specs, this.#served.window.fit);
      await this.#runCalls(text, calls, options.signal, share);
    }
  }

  /**
   * The person's message. One that follows a message of theirs that got no reply (the turn failed
   * or was stopped before the planner answered) takes its place (`resent`, conversation.ts), with
   * the earlier words in it when they differ, and the person is told so; its label joins theirs.
   */
  async #personSays(text: string, alongside: readonly Label[]): Promise<void> {
    const last = this.#messages.at(-1);
    if (last?.role !== "user" || last === this.#summary?.message) {
      await this.#append({ role: "user", content: text }, this.#policy.personWordsLabel(alongside));
      return;
    }
    const words = resent(last.content, text);
    if (words !== text) {
      this.#o.emit({
        type: "notice",
        text: "your previous message got no reply; it goes to the planner again, before this one",
      });
    }
    const before = this.#outgoing.labelOf(last);
    this.#messages.pop();
    await this.#append(
      { role: "user", content: words },
      this.#policy.personWordsLabel(before ? [...alongside, before] : alongside),
    );
  }

  /**
   * Shows the person each reference the planner's text marks `{{ref:N}}` (docs/contract.md §15.1).
   * The conversation keeps the marker only; the content goes to the screen and to the transcript as
   * the person's alone, and never into a request.
   */
  async #showMarked(text: string): Promise<void> {
    for (const ref of shownMarkers(text)) {
      const shown = await this.#policy.showToPerson(ref, SHOWN_MAX_LINES);
      if (!shown.ok) {
        this.#o.emit({ type: "notice", text: `{{${ref}}}: ${shown.error}` });
        continue;
      }
      const event = shownEvent(shown.value);
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
  ): Promise<ModelReply | TurnFailure> {
    const o = this.#o;
    await this.#outgoing.sweep(this.#messages);
    // Before the tokenizer has loaded (a session's first request), the request goes as it is when
    // its bytes fit; the tokenizer loads while the model answers (issue 24).
    let fit = tokenizerLoaded()
      ? null
      : buildBoundRequest(system, this.#messages, this.#specs, this.#served.window.fit);
    const bound = fit !== null;
    if (fit === null) {
      await loadTokenizer();
      fit = buildRequest(system, this.#messages, this.#specs, this.#served.window.fit);
    }
    if (!fit.ok) {
      // Old rounds no longer fit even shortened: the planner summarises them, and we go on.
      const compacted = await this.#compact(system, signal);
      if (typeof compacted === "object") return compacted;
      fit = buildRequest(system, this.#messages, this.#specs, this.#served.window.fit);
      if (!fit.ok) return { status: "error", error: fit.message + this.#served.limitNote() };
    }
    const window = this.#served.window;
    if (fit.compacted && !this.#toldShortening) {
      // Said once: after this the conversation is shortened as often as it needs to be.
      this.#toldShortening = true;
      o.emit({
        type: "notice",
        text: `the conversation was near the context window (${window.tokens} tokens): ` +
          `${plural(fit.compacted, "old tool result")} ${
            fit.compacted === 1 ? "was" : "were"
          } shortened`,
      });
    }
    if (!bound) this.contextFill = fit.tokens / window.fit;
    this.#served.askAlongside(o.planner);
    o.emit({ type: "model_request", turn: this.replies + 1 });
    const messages = fit.messages;
    let answering = () => {};
    const answered = new Promise<void>((resolve) => answering = resolve);
    const request = { messages, tools: this.#specs, signal, onAnswering: () => answering() };
    const replying = streamReply(o.planner, request, (e) => o.emit(e));
    // Once the endpoint has the request (it began to answer, or the reply is over), the tokenizer
    // loads while the model works: not before, when its 250-310 ms of CPU would hold the request
    // up on a busy machine. The bound is then replaced by the estimate, which alone makes the
    // fill shown and is held to the server's count.
    const estimated = bound
      ? this.#estimateOnceLoaded(messages, window, Promise.race([answered, replying]))
      : Promise.resolve(fit.tokens);
    estimated.catch(() => {}); // awaited below, whichever way the request ends
    try {
      const reply = await replying;
      await this.#served.learn(o.planner, signal);
      const tokens = await estimated;
      this.contextFill = this.#served.readUsage(messages, tokens, reply) ?? this.contextFill;
      return reply;
    } catch (e) {
      await estimated;
      return turnFailure(e);
    }
  }

  /** The estimate of a request sent by its bound, once the tokenizer loaded; the fill by it. */
  async #estimateOnceLoaded(
    messages: readonly ChatMessage[],
    window: Window,
    sent: Promise<unknown>,
  ): Promise<number> {
    await sent.catch(() => {});
    await loadTokenizer();
    const tokens = estimateTokens(messages, this.#specs);
    this.contextFill = tokens / window.fit;
    return tokens;
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
    calls: PlannerCall[],
    signal: AbortSignal | undefined,
    share: number,
  ): Promise<void> {
    const o = this.#o;
    const cap = o.settings.limits.toolCallsPerReply;
    const { kept, dropped } = keepCalls(calls, cap);
    if (dropped) o.emit({ type: "notice", text: droppedNotice(calls.length, cap) });
    await this.#append({
      role: "assistant",
      content: text.trim() === "" ? null : text,
      tool_calls: kept.map(({ id, type, function: f }) => ({ id, type, function: f })),
    });
    for (let i = 0; i < kept.length; i++) {
      const call = { ...kept[i].original, id: kept[i].id };
      let output = await this.#dispatch(call, signal, share);
      if (dropped && i === kept.length - 1) output = withDroppedNote(output, calls.length, cap);
      // Put to the egress gate in #dispatch, before the note was added: not asked again when sent.
      this.#outgoing.cleared(
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
        ...(output.summary !== undefined ? { summary: output.summary } : {}),
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
    // The window's fill as the next request would find it, for the prompt and status lines.
    if (typeof done === "number" && done > 0) {
      const fit = buildRequest(system, this.#messages, this.#specs, this.#served.window.fit);
      if (fit.ok) this.contextFill = fit.tokens / this.#served.window.fit;
    }
    return typeof done === "number"
      ? { ok: done > 0, replaced: done }
      : { ok: false, replaced: 0, error: done.error };
  }

  /** Summarises the oldest rounds (compaction.ts); each summary replaces them here. */
  #compact(
    system: ChatMessage,
    signal: AbortSignal | undefined,
    once = false,
  ): Promise<number | TurnFailure> {
    return compactConversation(this.#messages, {
      planner: this.#o.planner,
      system,
      specs: this.#specs,
      window: this.#served.window,
      signal,
      once,
      turn: this.replies + 1,
      summary: this.#summary,
      summaryLabel: () => this.#policy.summaryLabel(),
      keep: async (summary, kept, label) => {
        this.#messages = [summary.message, ...kept];
        this.#summary = summary;
        this.#outgoing.place(summary.message, label);
        await this.#o.transcript.compact(summary.message, kept.length, label, summary.requests);
      },
      emit: (event) => this.#o.emit(event),
    });
  }

  /** Validates and runs one call; always returns a result the planner can read. */
  async #dispatch(
    call: PlannerCall,
    signal: AbortSignal | undefined,
    share: number,
  ): Promise<ToolOutput> {
    const o = this.#o;
    const args = readArguments(call.function.arguments);
    o.emit({
      type: "tool_call",
      id: call.id,
      name: call.function.name,
      arguments: args.shown,
      ...(call.fromText ? { from_text: true } : {}),
    });
    const checked = checkCall(call.function.name, args, this.#tools);
    if (!checked.ok) return checked.error;
    const tool = checked.tool;
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
      output = await tool.handler(checked.args, ctx);
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
    output = (await this.#outgoing.gate(gate)) ?? output;
    for (const entry of this.#policy.decisions.slice(auditBefore)) o.emit(decisionEvent(entry));
    return output;
  }
}
