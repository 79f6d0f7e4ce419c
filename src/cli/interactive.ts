/**
 * The interactive session (cli.md `bravebot [PROMPT]`) on the Ink screen (src/person/ink/): the
 * finished output printed once, the planner's text streamed as it comes, a line saying what the
 * session waits on, the todo list when it changes, an input box with history and type-ahead,
 * shell mode (`!` / `!!`) and the slash commands. Nothing approves writes or edits in advance:
 * every one is asked, with one key. Esc or Ctrl-C stops the current model call or command and
 * the session goes on; /exit, Ctrl-D or Ctrl-C twice leaves it.
 */
import { shownHeading, showToPerson } from "../policy/show.ts";
import process from "node:process";
import { basename } from "node:path";
import { type EarlyPrompt, paintEarlyPrompt } from "./early_prompt.ts";
import pc from "picocolors";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import { chooseSession } from "./sessions.ts";
import { applyTrustChange, checkTrustCommand, describeTrust } from "./commands/trust.ts";
import { applyVouchCommand } from "./commands/vouch.ts";
import { type Runtime, RuntimeError, startRuntime } from "../session/runtime.ts";
import type { DriverEvent } from "../driver/events.ts";
import { parseShellLine, runShellLine } from "../policy/shell.ts";
import { formatLabel, joinLabels, type Label, TRUSTED_PRIVATE } from "../util/label.ts";
import { renderTodos } from "../tools/todo_write.ts";
import { escapeForScreen, formatToolArguments } from "../util/escape.ts";
import { plural } from "../util/plural.ts";
import { printErr } from "../util/output.ts";
import { messageOf } from "../util/result.ts";
import { AnswerStore } from "../state/answers.ts";
import type { Settings } from "../state/settings.ts";
import { sessionConfinement } from "../policy/runs.ts";
import { estimateTokens } from "../driver/context_window.ts";
import { appendHistory, historyFile, loadHistory } from "../state/history.ts";
import { reportLockWaits } from "../state/jsonfile.ts";
import { renderMarkdown, splitStable } from "../person/markdown.ts";
import { Screen } from "../person/ink/screen.ts";
import { InkPerson } from "../person/ink/person.ts";
import { screenWidth } from "../person/ink/size.ts";
import type { Mounted } from "../person/ink/mod.ts";

export const HELP = [
  "Type a message for the planner, or:",
  "  !command        run it in your shell; the planner gets its output as a reference (U,priv)",
  "  !!command       run it in your shell; the planner gets its output as your own words",
  "  /trust [list | add DIR | untrust DIR | remove DIR]   the trust map",
  "  /vouch [list | remove ID]                            vouched commands",
  "  /todos          the planner's task list",
  "  /clear          a new conversation: the context label goes back to (T,pub)",
  "  /compact        have the planner summarise the conversation so far (it frees the window)",
  "  /show ref:N     show a reference's content to you (never to the planner)",
  "  /status         model, endpoint, session, context label and fill, workspace, walls",
  "  /model NAME     the planner model for the next turns",
  "  /context        what fills the context window",
  "  /help           this help",
  "  /exit           leave (the session is kept: bravebot --continue)",
  "Keys: Enter sends; Shift+Enter, Ctrl+J or \\ then Enter start a new line; Up/Down recall;",
  "Ctrl+R searches history; Tab completes /commands; Esc interrupts the turn; Ctrl-C stops it",
  "(and any command); Ctrl+L clears the screen; Ctrl-C twice or Ctrl-D leaves.",
  "Every write and edit is shown to you and asked; vouching is how a command stops being asked.",
];

/**
 * The prompt line: `bravebot myrepo (T,pub) 12% ›`, the label coloured by integrity, then how
 * full the context window was at the last request (once there was one).
 */
export function promptLine(workspaceRoot: string, l: Label, fill: number | null = null): string {
  const name = escapeForScreen(basename(workspaceRoot) || workspaceRoot);
  const shown = formatLabel(l);
  const full = fill === null ? "" : ` ${pc.dim(`${Math.round(fill * 100)}%`)}`;
  return `bravebot ${name} ${l.integrity === "T" ? pc.green(shown) : pc.red(shown)}${full} ›`;
}

/**
 * The line for a decision a rule or the policy file made. Its reason is left out when the tool's
 * result, shown next, says it already (a refusal is the planner's error message too): each is
 * said once.
 */
export function decisionLine(
  d: { tool: string; decision: string; by: string; reason?: string },
  resultContent?: string,
): string {
  const said = d.reason !== undefined && resultContent?.includes(d.reason) === true;
  const reason = d.reason && !said ? `: ${escapeForScreen(clip(d.reason))}` : "";
  return `  ${escapeForScreen(d.tool)}: ${escapeForScreen(d.decision)} (${d.by}${reason})`;
}

function clip(text: string, max = 200): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** At most this often the streaming answer is redrawn. */
const STREAM_FRAME_MS = 80;
/** How much of an unfinished block the live area renders (its last part). */
const STREAM_TAIL_CHARS = 8_192;

interface ScreenState {
  /** Streamed answer text not yet printed for good (its last, unfinished part). */
  streamed: string;
  /** Whether any text of the current reply was streamed. */
  streamedAny: boolean;
  lastTodos: string;
}

/** The slash commands, for Tab completion (without the slash). */
export const COMMANDS = [
  "trust",
  "vouch",
  "todos",
  "clear",
  "compact",
  "show",
  "status",
  "model",
  "context",
  "help",
  "exit",
];

export async function interactiveSession(
  options: GlobalOptions,
  firstPrompt: string,
  earlyPrompt: EarlyPrompt | null = null,
): Promise<number> {
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) {
    const which = !Deno.stdin.isTerminal() ? "standard input" : "standard output";
    printErr(
      `bravebot: an interactive session needs a terminal, and ${which} is not one. ` +
        `For scripts and pipes use one-shot mode: bravebot -p "your task"`,
    );
    return EXIT.usage;
  }
  if (
    options.outputFormat !== undefined || options.approvals !== undefined ||
    options.trustStdin !== undefined
  ) {
    throw new UsageError(
      "--output-format, --approvals and --trust-stdin are for one-shot mode (-p); a session asks you instead",
    );
  }
  const early = earlyPrompt ?? paintEarlyPrompt(options.workspace);
  const erase = () => early.erase();
  // The screen (Ink and React) is loaded only for a session, from here on, in parallel.
  const loadingUi = import("../person/ink/mod.ts");
  loadingUi.catch(() => {});
  let g: Awaited<ReturnType<typeof resolveGlobals>>;
  let resume: string | undefined;
  try {
    g = await resolveGlobals(options);
    if (!g.settings.planner.model) {
      throw new UsageError(
        `no planner model: pass --model NAME or set "model" in the config (${g.configPath})`,
      );
    }
    resume = await chooseSession(g.workspaceDir, g.stateDir, options);
  } catch (e) {
    erase();
    throw e;
  }

  const screen = new Screen();
  screen.commands = COMMANDS;
  screen.promptLabel = early.text;
  // Until the session is open, what is submitted waits (shown as queued).
  screen.busy = true;
  screen.activity = "opening the session…";
  // Ink loads while the session opens; a question asked before it is drawn waits on the Screen.
  const mounting = loadingUi.then((ui) => ui.mount(screen, erase));
  mounting.catch(() => erase());
  let mounted: Mounted | null = null;
  void mounting.then((m) => mounted = m, () => {});
  const print = (text: string) => screen.print(text);
  const person = new InkPerson(screen, { width: screenWidth });

  let turn: AbortController | null = null;
  let runtime: Runtime | undefined;
  /** Messages submitted and not yet taken; a waiter for the next one. */
  const inbox: (string | null)[] = [];
  let wake: (() => void) | null = null;
  const post = (m: string | null) => {
    inbox.push(m);
    wake?.();
  };
  const stopTurn = () => {
    if (turn && !turn.signal.aborted) {
      print(pc.yellow("(stopping…)"));
      turn.abort();
    }
    // Commands lead their own process groups, out of the terminal's reach: stop them here.
    if (runtime) void runtime.session.policy.stopRuns();
  };
  screen.hooks = {
    onInterrupt: () => turn?.abort(),
    onStop: stopTurn,
    onSubmit: (text) => {
      if (screen.busy) screen.queued.push(text);
      post(text);
    },
    onExit: () => {
      // Leaving is not queued behind messages typed ahead: they are dropped (history keeps them).
      stopTurn();
      inbox.length = 0;
      screen.queued = [];
      post(null);
    },
    onClearScreen: () => mounted?.clear(),
    // A command's elapsed time counts from the person's answer, not from the planner's call.
    onQuestionClosed: () => {
      if (activity) activity = { ...activity, since: Date.now() };
    },
  };

  const state: ScreenState = { streamed: "", streamedAny: false, lastTodos: "[]" };
  let answers: AnswerStore | null = null;
  const shownNotices = new Set<string>();
  /** A rule's decision, held until the tool's result shows whether it says the reason. */
  let heldDecision: Extract<DriverEvent, { type: "decision" }> | null = null;
  const flushDecision = (resultContent?: string) => {
    if (heldDecision) print(pc.dim(decisionLine(heldDecision, resultContent)));
    heldDecision = null;
  };
  /** What the session waits on now (the model, a tool, a command), and since when. */
  let activity: { label: string; since: number } | null = null;
  const showActivity = () => {
    screen.activity = activity
      ? `${activity.label} ${Math.floor((Date.now() - activity.since) / 1000)}s`
      : "";
    screen.changed();
  };
  const ticker = setInterval(() => activity && showActivity(), 1000);
  const setActivity = (label: string | null) => {
    activity = label === null ? null : { label, since: Date.now() };
    showActivity();
  };
  const setWaiting = (on: boolean) => setActivity(on ? "waiting for the model…" : null);
  const width = () => screenWidth();
  /** The planner's markdown at the terminal's width, coloured where the terminal has colour. */
  const markdown = (text: string) => renderMarkdown(text, width(), { color: pc.isColorSupported });
  /** Prints streamed text that will not change any more; keeps the rest live. */
  /** A redraw of the streaming answer that is due, at most one per {@link STREAM_FRAME_MS}. */
  let streamTimer: ReturnType<typeof setTimeout> | undefined;
  const flushStream = (all: boolean) => {
    clearTimeout(streamTimer);
    streamTimer = undefined;
    const { stable, rest } = all
      ? { stable: state.streamed, rest: "" }
      : splitStable(state.streamed);
    if (stable.trim() !== "") print(markdown(stable).join("\n"));
    state.streamed = rest;
    // The live area shows the unfinished part's end: rendering all of a long one at every
    // frame would cost the square of its length (it is rendered whole once it is finished).
    screen.streaming = rest ? markdown(rest.slice(-STREAM_TAIL_CHARS)) : [];
    screen.changed();
  };
  /** Text arrived: the screen is redrawn soon, not at every piece (a reply may come in 16 MiB). */
  const streamSoon = () => {
    streamTimer ??= setTimeout(() => flushStream(false), STREAM_FRAME_MS);
  };
  const refreshPrompt = () => {
    if (!runtime) return;
    const policy = runtime.session.policy;
    screen.promptLabel = promptLine(
      runtime.session.workspace.root,
      policy.contextLabel,
      runtime.driver.contextFill,
    );
    screen.status = statusLine(runtime, runtime.driver.contextWindow.tokens);
    screen.changed();
  };

  const emit = (e: DriverEvent) => {
    // Whatever comes next ends the wait (a tool's own events keep its line until its result).
    if (e.type !== "model_request" && e.type !== "decision" && e.type !== "notice") {
      setActivity(null);
    }
    flushDecision(e.type === "tool_result" ? e.content : undefined);
    switch (e.type) {
      case "model_request":
        state.streamedAny = false;
        setWaiting(true);
        return;
      case "text_delta":
        state.streamedAny = true;
        state.streamed += e.text;
        streamSoon();
        return;
      case "assistant_text":
        if (!state.streamedAny) state.streamed = e.text;
        flushStream(true);
        return;
      case "tool_call":
        flushStream(true);
        setActivity(`${escapeForScreen(e.name)}…`);
        print(pc.dim(`→ ${escapeForScreen(e.name)} ${formatToolArguments(e.arguments, 200)}`));
        return;
      case "tool_result": {
        if (e.name === "ask_user" && runtime) {
          answers?.save(runtime.session.state.answers).catch((err) =>
            person.notice(`the answers could not be saved: ${messageOf(err)}`)
          );
        }
        print(pc.dim(`  ${e.is_error ? "✗" : "←"} ${escapeForScreen(clip(e.content))}`));
        if (!runtime) return;
        const todos = JSON.stringify(runtime.session.state.todos);
        if (e.name === "todo_write" && todos !== state.lastTodos) {
          state.lastTodos = todos;
          print(
            [
              pc.bold("todo list:"),
              ...renderTodos(runtime.session.state.todos).map((l) => `  ${escapeForScreen(l)}`),
            ].join("\n"),
          );
        }
        return;
      }
      case "decision":
        if (e.by !== "person") heldDecision = e;
        return;
      case "remark":
        flushStream(true);
        person.remark(e.text);
        return;
      case "shown":
        flushStream(true);
        writeShown(e);
        return;
      case "notice":
        // Skill and AGENTS.md notes come again at every turn's start: say each once. Retries
        // and other happenings are said every time.
        if (!/^the (model|processor) endpoint/.test(e.text) && shownNotices.has(e.text)) return;
        shownNotices.add(e.text);
        flushStream(true);
        person.notice(e.text);
        return;
      case "context_label":
        flushStream(true);
        print(
          e.label.startsWith("(U")
            ? pc.red(`the planner context is now ${e.label}: asking stops, every command asks`)
            : pc.dim(`the planner context is now ${e.label}`),
        );
        refreshPrompt();
        return;
      case "error":
        flushStream(true);
        print(pc.red(`error: ${escapeForScreen(e.message)}`));
        return;
      case "final":
        flushStream(true);
        return;
    }
  };

  /** A reference's content for the person only, framed as untrusted and escaped (§15). */
  const writeShown = (
    e: {
      ref: string;
      source: string;
      lines: number;
      label: string;
      text: string;
      omitted: number;
      asserted?: string | null;
    },
  ) => {
    print(
      [
        pc.yellow(
          `┌ ${shownHeading(e)}`,
        ),
        ...escapeForScreen(e.text, true).split("\n").map((l) => `${pc.yellow("│")} ${l}`),
        pc.yellow(e.omitted > 0 ? `└ ${plural(e.omitted, "more line")}: /show ${e.ref}` : "└"),
      ].join("\n"),
    );
  };

  const onSigint = () => stopTurn();
  process.on("SIGINT", onSigint);
  // A wait for a state file's lock (another session holds it) is said on the screen, not on
  // stderr, which would tear it.
  reportLockWaits((line) => person.notice(line));
  try {
    try {
      runtime = await startRuntime({
        workspaceDir: g.workspaceDir,
        stateDir: g.stateDir,
        configPath: g.configPath,
        settings: g.settings,
        person,
        approvals: null,
        oneShot: false,
        resume,
        emit,
      });
    } catch (e) {
      if (e instanceof RuntimeError) throw new UsageError(e.message);
      throw e;
    }
    await mounting;
    screen.busy = false;
    screen.activity = "";
    return await session(runtime);
  } finally {
    process.off("SIGINT", onSigint);
    reportLockWaits(null);
    clearInterval(ticker);
    clearTimeout(streamTimer);
    runtime?.close();
    await (await mounting.catch(() => null))?.stop();
  }

  async function session(runtime: Runtime): Promise<number> {
    const policy = runtime.session.policy;
    // The person's answers outlive a restart of the session (--resume, --continue).
    answers = new AnswerStore(runtime.session.paths.dir);
    runtime.problems.push(...await answers.load(runtime.session.state.answers));
    const sessionId = runtime.session.paths.id;
    const historyPath = historyFile(g.stateDir, runtime.session.workspace.root);
    const history = await loadHistory(historyPath);
    if (history.problem) runtime.problems.push(history.problem);
    screen.editor = {
      ...screen.editor,
      history: [...history.entries, ...screen.editor.history],
      historyAt: history.entries.length + screen.editor.history.length,
    };
    let historyFailed = false;
    const remember = (text: string) =>
      appendHistory(historyPath, text).catch((e) => {
        if (!historyFailed) person.notice(`the input history could not be saved: ${messageOf(e)}`);
        historyFailed = true;
      });

    print(pc.bold(`Brave Bot — ${escapeForScreen(runtime.session.workspace.root)}`));
    print(pc.dim(
      `model ${escapeForScreen(g.settings.planner.model ?? "")} at ${
        escapeForScreen(g.settings.planner.url)
      }` +
        // The config's window until the server says what it serves (a notice on the first reply).
        ` · window ${runtime.driver.contextWindow.tokens} tokens (config)` +
        ` · session ${sessionId}${resume ? " (resumed)" : ""} · /help for commands`,
    ));
    for (const p of runtime.problems) person.notice(p);
    if (resume) {
      const n = runtime.driver.messages.length;
      print(pc.dim(`resumed: ${plural(n, "message")} of conversation carried on`));
      const last = [...runtime.driver.messages].reverse().find((m) =>
        m.role === "assistant" && typeof m.content === "string" && m.content.trim() !== ""
      );
      if (last && last.role === "assistant" && last.content) {
        print(pc.dim("last reply:") + "\n" + markdown(last.content).join("\n"));
      }
    }
    refreshPrompt();

    /** What shell lines since the last message hand to the planner with the next one. */
    const pending: { text: string; label: Label }[] = [];

    const busy = async (fn: () => Promise<void>) => {
      turn = new AbortController();
      screen.busy = true;
      screen.changed();
      try {
        await fn();
      } finally {
        setWaiting(false);
        flushDecision();
        flushStream(true);
        turn = null;
        screen.busy = false;
        refreshPrompt();
      }
    };

    const runTurn = (text: string) =>
      busy(async () => {
        const message = [...pending.map((p) => p.text), text].filter((t) => t !== "").join(
          "\n\n",
        );
        const label = joinLabels(TRUSTED_PRIVATE, ...pending.map((p) => p.label));
        pending.length = 0;
        try {
          const outcome = await runtime.driver.runTurn(message, {
            signal: turn!.signal,
            maxReplies: g.settings.maxTurns,
            label,
          });
          if (outcome.status === "aborted") print(pc.yellow("(stopped; the session goes on)"));
        } catch (e) {
          print(pc.red(`error: ${escapeForScreen(messageOf(e))}`));
        }
      });

    const slash = async (line: string): Promise<"exit" | void> => {
      const [command, ...args] = line.slice(1).trim().split(/\s+/);
      const say = (lines: string[]) => print(lines.join("\n"));
      try {
        switch (command) {
          case "exit":
          case "quit":
            return "exit";
          case "help":
            say(HELP);
            return;
          case "clear":
            await runtime.driver.clear();
            runtime.session.state.todos = [];
            state.lastTodos = "[]";
            print(`a new conversation; the context is ${formatLabel(policy.contextLabel)}`);
            return;
          case "compact": {
            const done = await runtime.driver.compact();
            print(
              done.ok
                ? `${
                  plural(done.replaced, "earlier message")
                } became one summary; the transcript keeps them all`
                : done.error
                ? `not compacted: ${escapeForScreen(done.error)}`
                : "nothing to summarise yet",
            );
            return;
          }
          case "show": {
            const shown = await showToPerson(policy, args[0] ?? "", 100_000);
            if (!shown.ok) print(escapeForScreen(shown.error));
            else writeShown({ ...shown.value, label: formatLabel(shown.value.label) });
            return;
          }
          case "todos":
            if (runtime.session.state.todos.length === 0) print("no todo list yet");
            else say(renderTodos(runtime.session.state.todos).map((l) => escapeForScreen(l)));
            return;
          case "trust": {
            const change = await checkTrustCommand(
              runtime.session.workspace.root,
              args[0] ?? "list",
              args[1],
            );
            if (change) say(await policy.changeTrust((map) => applyTrustChange(map, change)));
            else {
              await policy.refreshTrust();
              say(describeTrust(policy.storedTrust));
            }
            return;
          }
          case "vouch":
            say(
              await applyVouchCommand(
                policy.vouches,
                runtime.session.workspace.root,
                args[0] ?? "list",
                args[1],
              ),
            );
            return;
          case "status":
            say(await statusReport(runtime, g.settings, sessionId));
            return;
          case "model": {
            const name = args.join(" ").trim();
            if (name === "") {
              print(`the planner model is ${escapeForScreen(runtime.driver.plannerModel)}`);
              return;
            }
            const failed = runtime.usePlannerModel(name);
            if (failed) print(pc.red(escapeForScreen(failed)));
            else print(`the planner model is now ${escapeForScreen(name)} (for the next turns)`);
            refreshPrompt();
            return;
          }
          case "context":
            say(contextReport(runtime, runtime.driver.contextWindow.tokens));
            return;
          default:
            print(`unknown command /${escapeForScreen(command ?? "")}; /help lists them`);
        }
      } catch (e) {
        print(
          pc.red(escapeForScreen(e instanceof UsageError ? e.message : `error: ${messageOf(e)}`)),
        );
      }
    };

    const next = async (): Promise<string | null> => {
      while (inbox.length === 0) await new Promise<void>((r) => wake = r);
      wake = null;
      const m = inbox.shift()!;
      if (m !== null && screen.queued[0] === m) {
        screen.queued.shift();
        screen.changed();
      }
      return m;
    };

    if (firstPrompt.trim() !== "") await runTurn(firstPrompt);
    while (true) {
      const line = await next();
      if (line === null) break;
      const text = line.trim();
      if (text === "") continue;
      await remember(line.trimEnd());
      print(`${screen.promptLabel} ${escapeForScreen(line, true).split("\n").join("\n  ")}`);
      const shellLine = parseShellLine(text);
      if (shellLine) {
        await busy(async () => {
          setActivity(`running ${escapeForScreen(clip(text, 60))}…`);
          const ran = await runShellLine(policy, g.settings, shellLine);
          setActivity(null);
          if (!ran.ok) {
            print(pc.red(escapeForScreen(ran.error)));
            return;
          }
          // Output the person watched as it came is not printed again.
          if (ran.value.display && !ran.value.watched) print(ran.value.display.replace(/\n$/, ""));
          for (const s of ran.value.status) print(pc.dim(escapeForScreen(s)));
          pending.push(ran.value.forPlanner);
          print(pc.dim(
            shellLine.mode === "words"
              ? "(its output goes to the planner with your next message, as your own words)"
              : `(the planner will be told of ref:${ran.value.ref?.id} with your next message; it is not shown the output)`,
          ));
        });
        continue;
      }
      if (text.startsWith("/")) {
        if (await slash(text) === "exit") break;
        continue;
      }
      await runTurn(text);
    }
    print(pc.dim(`session kept: bravebot --resume ${sessionId}`));
    return EXIT.ok;
  }
}

/** The line under the input: model, the context's label, tokens used and the window's fill. */
export function statusLine(runtime: Runtime, window: number): string {
  const l = runtime.session.policy.contextLabel;
  const fill = runtime.driver.contextFill;
  const shown = formatLabel(l);
  return [
    escapeForScreen(runtime.driver.plannerModel),
    l.integrity === "T" ? pc.green(shown) : pc.red(shown),
    ...(fill === null
      ? []
      : [`~${Math.round(fill * window)} tokens`, `context ${Math.round(fill * 100)}% full`]),
  ].join(" · ");
}

/** `/context`: what fills the window, estimated as the driver estimates a request. */
export function contextReport(runtime: Runtime, window: number): string[] {
  const messages = runtime.driver.messages;
  const system = runtime.driver.lastSystemPrompt;
  const parts: [string, number][] = [
    [
      "system prompt",
      system === null ? 0 : estimateTokens([{ role: "system", content: system }]),
    ],
    ["tool schemas", estimateTokens([], runtime.driver.toolSpecs)],
    ["conversation", estimateTokens(messages.filter((m) => m.role !== "tool"))],
    ["tool results", estimateTokens(messages.filter((m) => m.role === "tool"))],
  ];
  const total = parts.reduce((n, [, t]) => n + t, 0);
  const pct = (t: number) => `${Math.round((t / window) * 100)}%`;
  return [
    `context window: ${window} tokens; about ${total} used (${pct(total)})`,
    ...parts.map(([name, t]) => `  ${name.padEnd(14)} ~${String(t).padStart(7)}  ${pct(t)}`),
    ...(system === null ? ["  (the system prompt is counted once a request was made)"] : []),
  ];
}

async function statusReport(
  runtime: Runtime,
  settings: Settings,
  sessionId: string,
): Promise<string[]> {
  const fill = runtime.driver.contextFill;
  const confinement = await sessionConfinement(runtime.session.policy, settings);
  return [
    `model:      ${escapeForScreen(runtime.driver.plannerModel)}`,
    `endpoint:   ${escapeForScreen(settings.planner.url)}`,
    `session:    ${sessionId}`,
    `context:    ${formatLabel(runtime.session.policy.contextLabel)}`,
    `window:     ${runtime.driver.contextWindow.tokens} tokens (${
      runtime.driver.contextWindow.by === "server" ? "what the server serves" : "the config's"
    })${fill === null ? "" : `, ${Math.round(fill * 100)}% full at the last request`}`,
    `workspace:  ${escapeForScreen(runtime.session.workspace.root)}`,
    `walls:      ${
      !confinement.ok
        ? "unknown"
        : confinement.value.confined
        ? "commands run confined (bwrap)"
        : `commands run unconfined: ${escapeForScreen(confinement.value.why)}`
    }`,
  ];
}
