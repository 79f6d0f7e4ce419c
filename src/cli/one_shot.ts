/**
 * One-shot mode (`bravebot -p PROMPT`, docs/cli.md#one-shot-mode): run until the planner finishes,
 * print the answer, exit. Nobody can be asked: every question is declined unless the approval
 * policy file allows it in advance. Usage and configuration problems are exit 2 before any request
 * reaches the endpoint; a failure is exit 1 with a message; `--max-turns` reached is exit 3.
 */
import { messageOf } from "../util/result.ts";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import { type ApprovalsFile, approvalsWarnings, loadApprovals } from "../policy/approvals_file.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import { chooseSession } from "./sessions.ts";
import { type Runtime, RuntimeError, startRuntime } from "../session/runtime.ts";
import { type DriverEvent, STREAM_JSON_TYPES, type TurnStatus } from "../driver/events.ts";
import { escapeForScreen, formatToolArguments, safeJson } from "../util/escape.ts";
import { printErr, printOut, progressErr } from "../util/output.ts";
import { type PipedInput, processStdin, readPipedInput, type Stdin } from "./piped_input.ts";
import { keepPipedInput } from "../policy/outputs.ts";
import type { RetryPolicy } from "../model/retry.ts";
import { plural } from "../util/plural.ts";
import { shownHeading } from "../policy/show.ts";
import {
  declinedLine,
  type PolicySummary,
  policySummary,
  trustNotice,
  type WorkspaceTrust,
  workspaceTrust,
} from "./one_shot_report.ts";

export type OutputFormat = "text" | "json" | "stream-json";

/** Where a run's lines go: stdout and stderr, through the one writer (util/output.ts). */
export interface OneShotIO {
  stdout(line: string): void;
  stderr(line: string): void;
  /** A stderr line the next one replaces (a retry's countdown): in place on a terminal. */
  progress(line: string): void;
}

export const consoleIO: OneShotIO = {
  stdout: (l) => printOut(l),
  stderr: (l) => printErr(l),
  progress: (l) => progressErr(l),
};

const EXIT_FOR: Record<TurnStatus, number> = {
  finished: EXIT.ok,
  max_turns: EXIT.maxTurns,
  error: EXIT.failure,
  aborted: EXIT.failure,
};

/**
 * Runs one prompt to the end and returns the exit status; never throws. SIGINT is exit 130. A
 * workspace where nothing is trusted is said at the start (the planner would see no file), and a
 * text run whose writes or commands were declined says so at the end.
 */
export async function oneShot(
  options: GlobalOptions,
  promptGiven: string,
  io: OneShotIO = consoleIO,
  retry?: RetryPolicy,
  stdin: Stdin = processStdin,
): Promise<number> {
  const startedAt = performance.now();
  const format = (options.outputFormat ?? "text") as OutputFormat;
  // `-p -`: the prompt itself comes from stdin (waited for, as the person said so); otherwise
  // whatever is piped is the task's input (docs/contract.md §15.4).
  let prompt = promptGiven;
  let piped: PipedInput | null = null;
  try {
    if (promptGiven.trim() === "-") {
      const read = await readPipedInput(stdin, { wholeWait: true });
      prompt = read ? new TextDecoder().decode(read.bytes) : "";
    } else piped = await readPipedInput(stdin);
  } catch (e) {
    io.stderr(`bravebot: the piped input could not be read: ${messageOf(e)}`);
    return EXIT.usage;
  }
  if (prompt.trim() === "") {
    io.stderr('bravebot: -p needs a prompt, e.g. bravebot -p "explain src/main.ts"');
    return EXIT.usage;
  }
  // Everything that can be wrong with the command line is found before anything is sent.
  let resolved;
  let approvals: ApprovalsFile | null = null;
  let resume: string | undefined;
  try {
    resolved = await resolveGlobals(options);
    if (options.approvals !== undefined) {
      const loaded = await loadApprovals(options.approvals);
      if (!loaded.ok) throw new UsageError(loaded.error);
      approvals = loaded.value;
      for (const warning of approvalsWarnings(approvals)) io.stderr(`bravebot: ${warning}`);
    }
    if (!resolved.settings.planner.model) {
      throw new UsageError(
        `no planner model: pass --model NAME or set "model" in the config (${resolved.configPath})`,
      );
    }
    resume = await chooseSession(resolved.workspaceDir, resolved.stateDir, options);
  } catch (e) {
    io.stderr(`bravebot: ${e instanceof Error ? e.message : String(e)}`);
    return EXIT.usage;
  }

  const out = new Output(format, io, startedAt);
  let runtime: Runtime | null = null;
  // Set by the first Ctrl-C: the run ends as interrupted (exit 130), whatever the turn came to.
  let interrupted = false;
  try {
    runtime = await startRuntime({
      workspaceDir: resolved.workspaceDir,
      stateDir: resolved.stateDir,
      configPath: resolved.configPath,
      settings: resolved.settings,
      person: new PolicyFilePerson(approvals, (line) => io.stderr(line)),
      approvals,
      oneShot: true,
      resume,
      emit: (e) => out.event(e),
      retry,
      // The run stages' probe answers while the first request goes (session/runtime.ts): its
      // lines on stderr before any run, and before the run's last event (awaited below).
      sayConfinement: (lines) => {
        for (const line of lines) io.stderr(`bravebot: ${line}`);
      },
    });
    for (const p of runtime.problems) io.stderr(`bravebot: ${p}`);
    const trust = workspaceTrust(runtime.session.policy.trust);
    const settings = resolved.settings;
    out.begin(runtime, {
      type: "start",
      session: runtime.session.paths.id,
      model: settings.planner.model ?? "",
      endpoint: settings.planner.url,
      ...(settings.processor.url !== settings.planner.url ||
          (settings.processor.model ?? settings.planner.model) !== settings.planner.model
        ? {
          processor: {
            endpoint: settings.processor.url,
            model: settings.processor.model ?? settings.planner.model ?? "",
          },
        }
        : {}),
      workspace: runtime.session.workspace.root,
      workspace_trust: trust,
      policy: policySummary(approvals),
    });
    // A blind run is said once: on stderr whatever the format, and as a notice in the stream.
    const blind = trustNotice(trust);
    if (blind !== null) out.event({ type: "notice", text: blind, once: "workspace trust" });
    // Ctrl-C stops the model call or the tool in progress; the session stays consistent.
    const stop = new AbortController();
    const policy = runtime.session.policy;
    const onInterrupt = () => {
      // The transcript is appended a line at a time as the run goes: quitting keeps it.
      if (stop.signal.aborted) Deno.exit(EXIT.interrupted);
      interrupted = true;
      io.stderr("bravebot: stopping (Ctrl-C again to quit at once)");
      stop.abort();
      // A running command is out of the terminal's reach (its own process group): SIGINT,
      // SIGTERM, SIGKILL from the effect worker, as in a session.
      void policy.stopRuns();
    };
    const listening = listen("SIGINT", onInterrupt);
    let task = prompt;
    if (piped) {
      const size = `${plural(piped.bytes.length, "byte")}${piped.cut ? ", cut at the limit" : ""}`;
      if (options.trustStdin) {
        // The person's own words, (T,priv), as `!!` hands over a shell line's output.
        task = `${prompt}\n\nThe input I piped (${size}):\n${
          new TextDecoder().decode(piped.bytes)
        }`;
      } else {
        const ref = await keepPipedInput(runtime.session.policy, piped.bytes);
        task =
          `${prompt}\n\n[the input you piped is ref:${ref.id}, ${size}, ${
            plural(ref.lines ?? 0, "line")
          }, ` +
          "(U,priv): not shown to you; pass it to spawn_processor, or show it to the person " +
          `with {{ref:${ref.id}}}]`;
      }
    }
    let outcome;
    try {
      outcome = await runtime.driver.runTurn(task, {
        maxReplies: resolved.settings.maxTurns,
        signal: stop.signal,
      });
    } finally {
      if (listening) Deno.removeSignalListener("SIGINT", onInterrupt);
    }
    await runtime.confinementSaid;
    out.finish(outcome.status, outcome.text);
    return interrupted ? EXIT.interrupted : EXIT_FOR[outcome.status];
  } catch (e) {
    if (e instanceof RuntimeError || e instanceof UsageError) {
      io.stderr(`bravebot: ${e.message}`);
      return EXIT.usage;
    }
    const message = `internal error: ${e instanceof Error ? e.message : String(e)}`;
    await runtime?.confinementSaid;
    out.event({ type: "error", message });
    // The summary still comes, when the run had started: a script reads one shape.
    out.finish("error", "");
    return interrupted ? EXIT.interrupted : EXIT.failure;
  } finally {
    runtime?.close();
  }
}

/** The `stream-json` line that comes first (docs/cli.md#output-formats): what the run is. */
interface StartEvent {
  type: "start";
  session: string;
  model: string;
  endpoint: string;
  /** Only when processors go elsewhere (another endpoint or model): where quarantined bytes go. */
  processor?: { endpoint: string; model: string };
  workspace: string;
  workspace_trust: WorkspaceTrust;
  policy: PolicySummary | null;
}

/** Writes events in the chosen format: stdout gets the answer (or JSON), stderr the rest. */
class Output {
  session = "";
  /** Shown to the person and not the planner, for after the answer (docs/contract.md §15.5). */
  readonly shown: Extract<DriverEvent, { type: "shown" }>[] = [];
  #runtime: Runtime | null = null;
  #start: StartEvent | null = null;
  /** Stream lines made before the `start` line was written: it comes first. */
  #early: string[] = [];
  #finished = false;
  /** The driver's `final` was written: the stream has its last line. */
  #final = false;

  constructor(
    private readonly format: OutputFormat,
    private readonly io: OneShotIO,
    private readonly startedAt: number,
  ) {}

  /** The run has started: the `start` line, then whatever came before it. */
  begin(runtime: Runtime, start: StartEvent): void {
    this.#runtime = runtime;
    this.#start = start;
    this.session = start.session;
    if (this.format !== "stream-json") return;
    this.io.stdout(safeJson(start));
    for (const line of this.#early.splice(0)) this.io.stdout(line);
  }

  #line(value: unknown): void {
    const line = safeJson(value);
    if (this.#start === null) this.#early.push(line);
    else this.io.stdout(line);
  }

  event(e: DriverEvent): void {
    if (e.type === "shown") this.shown.push(e);
    if (this.format === "stream-json") {
      if (e.type === "final") {
        // The driver's account of the turn, with the run's own facts.
        this.#final = true;
        this.#line({ ...e, is_error: e.status !== "finished", ...this.#totals() });
      } else if (STREAM_JSON_TYPES.has(e.type)) this.#line(e);
      // A notice is also the person's to read, on stderr, as in every format.
      if (e.type !== "notice") return;
    }
    if (e.type === "notice" && e.progress !== undefined) {
      this.io.progress(`bravebot: ${escapeForScreen(e.text)}`);
      return;
    }
    const line = describe(e);
    if (line !== null) this.io.stderr(line);
  }

  /** What `final` and the `json` object add to the driver's account: the run's own facts. */
  #totals() {
    return {
      session: this.session,
      duration_ms: Math.round(performance.now() - this.startedAt),
      usage: this.#runtime?.usage() ?? { prompt_tokens: null, completion_tokens: null },
    };
  }

  finish(status: TurnStatus, text: string): void {
    const runtime = this.#runtime;
    if (this.#finished || runtime === null) return;
    this.#finished = true;
    if (this.format === "text") {
      // The planner's words are escaped as every text for the person is (an OSC 52 in the answer
      // is shown, not sent); a reference shown is set apart too: bytes nobody vouched for.
      if (status === "finished") this.io.stdout(escapeForScreen(text, true));
      for (const s of this.shown) {
        this.io.stdout("");
        this.io.stdout(
          `── ${shownHeading(s)} ──`,
        );
        this.io.stdout(escapeForScreen(s.text, true));
        if (s.omitted > 0) {
          this.io.stdout(
            `── ${plural(s.omitted, "more line")}: bravebot --resume and /show ${s.ref} ──`,
          );
        }
      }
      const declined = declinedLine(
        runtime.session.policy.audit.entries,
        runtime.session.policy.approvals !== null,
      );
      if (declined !== null) this.io.stderr(`bravebot: ${declined}`);
    } else if (this.format === "json") {
      const totals = this.#totals();
      this.io.stdout(safeJson({
        result: text,
        status,
        is_error: status !== "finished",
        session: totals.session,
        model: this.#start?.model ?? "",
        turns: runtime.driver.replies,
        duration_ms: totals.duration_ms,
        usage: totals.usage,
        decisions: runtime.session.policy.audit.entries.map((d) => ({
          tool: d.tool,
          decision: d.decision,
          by: d.by,
          ...(d.reason !== undefined ? { reason: d.reason } : {}),
          routing: d.routing,
          labels: d.labels,
        })),
        context_label: formatContext(runtime),
        shown: this.shown.map((s) => ({
          ref: s.ref,
          kind: s.kind,
          label: s.label,
          source: s.source,
          text: s.text,
        })),
        workspace_trust: this.#start?.workspace_trust ?? "not_set_up",
      }));
    } else if (this.format === "stream-json" && !this.#final) {
      // A run that broke inside Brave Bot ends its stream as every run does.
      this.#line({
        type: "final",
        result: text,
        status,
        is_error: status !== "finished",
        turns: runtime.driver.replies,
        context_label: formatContext(runtime),
        ...this.#totals(),
      });
    }
  }
}

function listen(signal: Deno.Signal, handler: () => void): boolean {
  try {
    Deno.addSignalListener(signal, handler);
    return true;
  } catch {
    return false;
  }
}

function formatContext(runtime: Runtime): string {
  const l = runtime.session.policy.contextLabel;
  return `(${l.integrity},${l.confidentiality})`;
}

/** One stderr line for the person reading a text or json run, escaped for the terminal. */
function describe(e: DriverEvent): string | null {
  const s = (t: string) => escapeForScreen(t);
  switch (e.type) {
    case "tool_call":
      return `→ ${s(e.name)} ${formatToolArguments(e.arguments, 200)}${
        e.from_text ? " (written as text)" : ""
      }`;
    case "tool_result":
      return `  ${e.is_error ? "✗" : "←"} ${s(clip(e.content))}`;
    case "decision":
      return `  decision: ${s(e.decision)} (by ${e.by}${e.reason ? `: ${s(e.reason)}` : ""})`;
    case "remark":
      return `processor remark (untrusted, not shown to the planner):\n${
        escapeForScreen(e.text, true)
      }`;
    case "notice":
      return `bravebot: ${s(e.text)}`;
    case "error":
      return `bravebot: ${s(e.message)}`;
    case "context_label":
      return `  context is now ${e.label}`;
    case "assistant_text":
    case "shown":
    case "text_delta":
    case "model_request":
    case "final":
      return null;
  }
}

function clip(text: string, max = 300): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > max ? `${one.slice(0, max)}… (${one.length} characters)` : one;
}
