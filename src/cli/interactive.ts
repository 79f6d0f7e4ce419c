/**
 * The interactive session (`bravebot [PROMPT]`, docs/cli.md#commands) on the Ink screen
 * (src/person/ink/): the finished output printed once, the planner's text streamed as it comes, a
 * line saying what the session waits on, the todo list when it changes, an input box with history
 * and type-ahead, shell mode (`!` / `!!`) and the slash commands. Nothing approves writes or edits
 * in advance: every one is asked, with one key. Esc or Ctrl-C stops the current model call or
 * command and the session goes on; /exit, Ctrl-D or Ctrl-C twice leaves it.
 *
 * This file wires the parts: the driver's events are drawn by the event view
 * (src/person/event_view.ts), the slash commands are a table (./slash_commands.ts), and what the
 * person does asks the policy layer only through the runtime's `PersonPolicy` port.
 */
import process from "node:process";
import { basename } from "node:path";
import { type EarlyPrompt, paintEarlyPrompt } from "./early_prompt.ts";
import pc from "picocolors";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import {
  chooseSession,
  resumeReplay,
  sessionLine,
  sessionsToPick,
  type SessionSummary,
} from "./sessions.ts";
import { type CommandContext, COMMANDS, runSlashCommand } from "./slash_commands.ts";
import { type Runtime, RuntimeError, startRuntime } from "../session/runtime.ts";
import type { DriverEvent } from "../driver/events.ts";
import type { Settings } from "../state/settings.ts";
import { parseShellLine, type ShellLine } from "../policy/api.ts";
import { formatLabel, type Label } from "../util/label.ts";
import { renderTodos } from "../tools/todo_write.ts";
import { escapeForScreen } from "../util/escape.ts";
import { plural } from "../util/plural.ts";
import { printErr } from "../util/output.ts";
import { messageOf } from "../util/result.ts";
import { AnswerStore } from "../state/answers.ts";
import { appendHistory, historyFile, loadHistory } from "../state/history.ts";
import { reportLockWaits } from "../state/jsonfile.ts";
import { clip, EventView } from "../person/event_view.ts";
import { Screen } from "../person/ink/screen.ts";
import { InkPerson } from "../person/ink/person.ts";
import { screenWidth } from "../person/ink/size.ts";
import type { Mounted } from "../person/ink/mod.ts";

export { decisionLine } from "../person/event_view.ts";
export { COMMANDS, HELP } from "./slash_commands.ts";

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

/** A message as sent, and as the input box showed it (a large paste collapsed to its mark). */
interface Submitted {
  text: string;
  shown: string;
}

/** Messages submitted and not yet taken (null: leave the session), and a waiter for the next. */
class Inbox {
  readonly #items: (Submitted | null)[] = [];
  #wake: (() => void) | null = null;

  constructor(private readonly screen: Screen) {}

  post(m: Submitted | null): void {
    this.#items.push(m);
    this.#wake?.();
  }

  /** Leaving is not queued behind messages typed ahead: they are dropped (history keeps them). */
  dropAll(): void {
    this.#items.length = 0;
    this.screen.queued = [];
  }

  async next(): Promise<Submitted | null> {
    while (this.#items.length === 0) await new Promise<void>((r) => this.#wake = r);
    this.#wake = null;
    const m = this.#items.shift()!;
    if (m !== null && this.screen.queued[0] === m.shown) {
      this.screen.queued.shift();
      this.screen.changed();
    }
    return m;
  }
}

/** The screen's side of a session: what the loop below and the screen's hooks share. */
interface Live {
  screen: Screen;
  view: EventView;
  person: InkPerson;
  inbox: Inbox;
  /** The turn or shell line running now, which Esc and Ctrl-C stop. */
  turn: AbortController | null;
  /**
   * The run stages' probe's lines, which come when it answers (session/runtime.ts
   * `sayConfinement`): kept for the greeting when they come before it, else said at once.
   */
  confinement: { greeted: boolean; lines: string[] };
}

/** The prompt and status lines, for the context's label and fill as they are now. */
function refreshPrompt(screen: Screen, runtime: Runtime): void {
  screen.promptLabel = promptLine(
    runtime.session.workspace.root,
    runtime.policy.contextLabel,
    runtime.driver.contextFill,
  );
  screen.status = statusLine(runtime, runtime.driver.contextWindow.tokens);
  screen.changed();
}

/**
 * Whether a session can start: both ends a terminal (else said, for an exit code of usage), and
 * none of one-shot's options (a usage error).
 */
function sessionPossible(options: GlobalOptions): boolean {
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) {
    const which = !Deno.stdin.isTerminal() ? "standard input" : "standard output";
    printErr(
      `bravebot: an interactive session needs a terminal, and ${which} is not one. ` +
        `For scripts and pipes use one-shot mode: bravebot -p "your task"`,
    );
    return false;
  }
  if (
    options.outputFormat !== undefined || options.approvals !== undefined ||
    options.trustStdin !== undefined
  ) {
    throw new UsageError(
      "--output-format, --approvals and --trust-stdin are for one-shot mode (-p); a session asks you instead",
    );
  }
  return true;
}

export async function interactiveSession(
  options: GlobalOptions,
  firstPrompt: string,
  earlyPrompt: EarlyPrompt | null = null,
): Promise<number> {
  if (!sessionPossible(options)) return EXIT.usage;
  const early = earlyPrompt ?? paintEarlyPrompt(options.workspace);
  const erase = () => early.erase();
  // The screen (Ink and React) is loaded only for a session, from here on, in parallel.
  const loadingUi = import("../person/ink/mod.ts");
  loadingUi.catch(() => {});
  let g: Awaited<ReturnType<typeof resolveGlobals>>;
  let resume: string | undefined;
  /** A bare --resume: the sessions to choose from, once the screen is up. */
  let pickFrom: SessionSummary[] | null = null;
  try {
    g = await resolveGlobals(options);
    if (!g.settings.planner.model) {
      throw new UsageError(
        `no planner model: pass --model NAME or set "model" in the config (${g.configPath})`,
      );
    }
    pickFrom = await sessionsToPick(g.workspaceDir, g.stateDir, options);
    if (!pickFrom) resume = await chooseSession(g.workspaceDir, g.stateDir, options);
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
  const person = new InkPerson(screen, { width: screenWidth });

  let runtime: Runtime | undefined;
  let answers: AnswerStore | null = null;
  const view = new EventView({
    screen,
    person,
    width: () => screenWidth(),
    todos: () => {
      const todos = runtime?.session.state.todos ?? [];
      return { key: JSON.stringify(todos), lines: renderTodos(todos) };
    },
    onContextLabel: () => runtime && refreshPrompt(screen, runtime),
  });
  const live: Live = {
    screen,
    view,
    person,
    inbox: new Inbox(screen),
    turn: null,
    confinement: { greeted: false, lines: [] },
  };
  const stopTurn = () => {
    if (live.turn && !live.turn.signal.aborted) {
      screen.print(pc.yellow("(stopping…)"));
      live.turn.abort();
    }
    // Commands lead their own process groups, out of the terminal's reach: stop them here.
    if (runtime) void runtime.policy.stopRuns();
  };
  screen.hooks = {
    onInterrupt: () => live.turn?.abort(),
    onStop: stopTurn,
    onSubmit: (text, shown = text) => {
      if (screen.busy) screen.queued.push(shown);
      live.inbox.post({ text, shown });
    },
    onExit: () => {
      stopTurn();
      live.inbox.dropAll();
      live.inbox.post(null);
    },
    onClearScreen: () => mounted?.clear(),
    // A command's elapsed time counts from the person's answer, not from the planner's call.
    onQuestionClosed: () => view.questionClosed(),
  };

  const emit = (e: DriverEvent) => {
    // The person's answers outlive a restart of the session (--resume, --continue).
    if (e.type === "tool_result" && e.name === "ask_user" && runtime) {
      answers?.save(runtime.session.state.answers).catch((err) =>
        person.notice(`the answers could not be saved: ${messageOf(err)}`)
      );
    }
    view.event(e);
  };

  const onSigint = () => stopTurn();
  process.on("SIGINT", onSigint);
  // A wait for a state file's lock (another session holds it) is said on the screen, not on
  // stderr, which would tear it.
  reportLockWaits((line) => person.notice(line));
  try {
    if (pickFrom) {
      const picked = await pickSession(screen, pickFrom);
      if (picked === null) {
        screen.activity = "";
        screen.print(pc.dim("no session chosen"));
        return EXIT.ok;
      }
      resume = picked;
    }
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
        // The prompt does not wait for the run stages' probe; every run and reply waits for
        // its lines (docs/decisions.md, "The run stages' probe after the first request").
        sayConfinement: (lines) => {
          if (live.confinement.greeted) { for (const line of lines) person.notice(line); }
          else live.confinement.lines.push(...lines);
        },
      });
    } catch (e) {
      if (e instanceof RuntimeError) throw new UsageError(e.message);
      throw e;
    }
    await mounting;
    screen.busy = false;
    screen.activity = "";
    answers = new AnswerStore(runtime.session.paths.dir);
    runtime.problems.push(...await answers.load(runtime.session.state.answers));
    return await session(live, runtime, g.stateDir, g.settings, resume, firstPrompt);
  } finally {
    process.off("SIGINT", onSigint);
    reportLockWaits(null);
    view.close();
    runtime?.close();
    await (await mounting.catch(() => null))?.stop();
  }
}

/** The open session: its greeting, then each line the person sends, until they leave. */
async function session(
  live: Live,
  runtime: Runtime,
  stateDir: string,
  settings: Settings,
  resume: string | undefined,
  firstPrompt: string,
): Promise<number> {
  const { screen, view, person } = live;
  const print = (text: string) => screen.print(text);
  const sessionId = runtime.session.paths.id;
  const historyPath = historyFile(stateDir, runtime.session.workspace.root);
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
    `model ${escapeForScreen(settings.planner.model ?? "")} at ${
      escapeForScreen(settings.planner.url)
    }` +
      // The config's window until the server says what it serves (a notice on the first reply).
      ` · window ${runtime.driver.contextWindow.tokens} tokens (config)` +
      ` · session ${sessionId}${resume ? " (resumed)" : ""} · /help for commands`,
  ));
  for (const p of [...runtime.problems, ...live.confinement.lines.splice(0)]) person.notice(p);
  live.confinement.greeted = true;
  if (resume) {
    const replay = await resumeReplay(runtime.session.paths.transcript, (t) => view.markdown(t));
    if (replay.length) print(replay.join("\n"));
    const n = runtime.driver.messages.length;
    print(pc.dim(`resumed: ${plural(n, "message")} of conversation carried on`));
  }
  refreshPrompt(screen, runtime);

  /** What shell lines since the last message hand to the planner with the next one. */
  const pending: { text: string; label: Label }[] = [];

  const busy = async (fn: (signal: AbortSignal) => Promise<void>) => {
    const turn = live.turn = new AbortController();
    screen.busy = true;
    screen.changed();
    try {
      await fn(turn.signal);
    } finally {
      view.settle();
      live.turn = null;
      screen.busy = false;
      refreshPrompt(screen, runtime);
    }
  };

  const runTurn = (text: string) =>
    busy(async (signal) => {
      const message = [...pending.map((p) => p.text), text].filter((t) => t !== "").join("\n\n");
      const alongside = pending.map((p) => p.label);
      pending.length = 0;
      try {
        const outcome = await runtime.driver.runTurn(message, {
          signal,
          maxReplies: settings.maxTurns,
          alongside,
        });
        if (outcome.status === "aborted") print(pc.yellow("(stopped; the session goes on)"));
      } catch (e) {
        print(pc.red(`error: ${escapeForScreen(messageOf(e))}`));
      }
    });

  const commands: CommandContext = {
    runtime,
    settings,
    sessionId,
    view,
    print,
    refreshPrompt: () => refreshPrompt(screen, runtime),
    width: () => screenWidth(),
    confirm: (title, lines, yes) => person.confirm(title, lines, yes),
    tellPlanner: (words) => pending.push(words),
  };

  if (firstPrompt.trim() !== "") await runTurn(firstPrompt);
  while (true) {
    const sent = await live.inbox.next();
    if (sent === null) break;
    const line = sent.text;
    const text = line.trim();
    if (text === "") continue;
    await remember(line.trimEnd());
    // Echoed as the box showed it: a large paste stays one mark (it is sent whole).
    print(`${screen.promptLabel} ${escapeForScreen(sent.shown, true).split("\n").join("\n  ")}`);
    const shellLine = parseShellLine(text);
    if (shellLine) {
      await busy(() => runShell(live, runtime, settings, shellLine, text, pending));
      continue;
    }
    if (text.startsWith("/")) {
      if (await runSlashCommand(text, commands) === "exit") break;
      continue;
    }
    await runTurn(text);
  }
  const held = runtime.session.holds();
  print(pc.dim(
    held === "messages"
      ? `session kept: bravebot --resume ${sessionId}`
      : held === "audit"
      ? `no message was sent, so there is nothing to resume; the audit log is kept in ${
        escapeForScreen(runtime.session.paths.dir)
      }`
      : "nothing was said: the session is not kept",
  ));
  return EXIT.ok;
}

/** How many sessions a bare --resume offers (`bravebot sessions` lists them all). */
const PICK_MAX = 10;

/** A bare --resume: the person picks a session, the most recently active first; null: Esc. */
function pickSession(screen: Screen, sessions: SessionSummary[]): Promise<string | null> {
  const shown = sessions.slice(0, PICK_MAX);
  const of = sessions.length > shown.length
    ? ` (the ${shown.length} latest of ${sessions.length})`
    : "";
  // The first words get what the mark, the date and the count leave of the line.
  const room = (s: SessionSummary) =>
    Math.max(8, screenWidth() - 5 - sessionLine({ ...s, first: null }, 0, false).length);
  return new Promise((resolve) =>
    screen.ask({
      kind: "pick",
      title: `Go on with which session?${of} Arrows or a digit, then Enter; Esc leaves.`,
      options: shown.map((s) => sessionLine(s, room(s), false)),
      // Enter alone takes the latest, as --continue would: choosing a session approves nothing.
      at: 0,
      digitBase: 1,
      marked: null,
      resolve: (v) => resolve(v === null ? null : shown[v[0]].id),
    })
  );
}

/**
 * A shell line (`!cmd`, `!!cmd`): run by the policy layer, its output shown unless the person
 * watched it come, and what the planner gets kept for the person's next message.
 */
async function runShell(
  { screen, view }: Live,
  runtime: Runtime,
  settings: Settings,
  line: ShellLine,
  typed: string,
  pending: { text: string; label: Label }[],
): Promise<void> {
  const print = (text: string) => screen.print(text);
  view.setActivity(`running ${escapeForScreen(clip(typed, 60))}…`, "Ctrl-C to stop");
  const ran = await runtime.policy.runShellLine(line, settings);
  view.setActivity(null);
  if (!ran.ok) {
    print(pc.red(escapeForScreen(ran.error)));
    return;
  }
  // Output the person watched as it came is not printed again.
  if (ran.value.display && !ran.value.watched) print(ran.value.display.replace(/\n$/, ""));
  for (const s of ran.value.status) print(pc.dim(escapeForScreen(s)));
  pending.push(ran.value.forPlanner);
  print(pc.dim(
    line.mode === "words"
      ? "(its output goes to the planner with your next message, as your own words)"
      : `(the planner will be told of ref:${ran.value.ref?.id} with your next message; it is not shown the output)`,
  ));
}

/** The line under the input: model, the context's label, tokens used and the window's fill. */
export function statusLine(runtime: Runtime, window: number): string {
  const l = runtime.policy.contextLabel;
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
