/**
 * The interactive session (cli.md `bravebot [PROMPT]`): a prompt line showing the
 * workspace and the planner context's label, the planner's text streamed as it comes, a spinner
 * while the model is thinking, the todo list when it changes, shell mode (`!` / `!!`) and the
 * slash commands. Nothing approves writes or edits in advance: every one is asked. Ctrl-C stops
 * the current model call or command and the session goes on; /exit (or Ctrl-D) leaves it.
 */
import { showToPerson } from "../policy/show.ts";
import process from "node:process";
import { basename } from "node:path";
import { input } from "@inquirer/prompts";
import { createSpinner } from "nanospinner";
import pc from "picocolors";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import { chooseSession } from "./sessions.ts";
import { applyTrustChange, checkTrustCommand, describeTrust } from "./commands/trust.ts";
import { applyVouchCommand } from "./commands/vouch.ts";
import { type Runtime, RuntimeError, startRuntime } from "../session/runtime.ts";
import type { DriverEvent } from "../driver/events.ts";
import { isPromptExit, type PromptContext, TerminalPerson } from "../person/terminal.ts";
import { parseShellLine, runShellLine } from "../policy/shell.ts";
import { formatLabel, joinLabels, type Label, TRUSTED_PRIVATE } from "../util/label.ts";
import { renderTodos } from "../tools/todo_write.ts";
import { escapeForScreen, formatToolArguments, styleMarkers } from "../util/escape.ts";
import { messageOf } from "../util/result.ts";
import { AnswerStore } from "../state/answers.ts";
import { plural } from "../util/plural.ts";

/**
 * Writes to the terminal through the same stream the prompts use: the prompt library puts the
 * terminal in non-blocking mode, where a direct synchronous write can fail half-way. The
 * markers of escaped text are styled here, once for every line.
 */
function writeOut(text: string): void {
  process.stdout.write(styleMarkers(text));
}

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
  "  /help           this help",
  "  /exit           leave (the session is kept: bravebot --continue)",
  "Ctrl-C stops the current model call or command; the session goes on.",
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

/** Makes planner text safe for the terminal without mangling ordinary code. */
function screenText(text: string): string {
  return escapeForScreen(text.replace(/\t/g, "    ").replace(/\r\n/g, "\n"), true);
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

/** The spinner, driven by hand so it never installs its own Ctrl-C handler (which exits). */
class Waiting {
  #spinner = createSpinner("waiting for the model…", {
    stream: process.stdout as unknown as NodeJS.WriteStream,
  });
  #timer: ReturnType<typeof setInterval> | undefined;

  start(): void {
    if (this.#timer !== undefined) return;
    // A terminal that reports no width (some pseudo-terminals) would make the spinner's
    // line count infinite: no spinner there.
    if (!((process.stdout as { columns?: number }).columns! > 0)) return;
    this.#spinner.spin();
    this.#timer = setInterval(() => this.#spinner.spin(), 100);
  }

  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#spinner.clear();
    writeOut("\x1b[?25h");
  }
}

interface ScreenState {
  streamed: boolean;
  /** Whether the cursor sits after streamed text that has no newline yet. */
  midLine: boolean;
  lastTodos: string;
}

export async function interactiveSession(
  options: GlobalOptions,
  firstPrompt: string,
): Promise<number> {
  if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) {
    const which = !Deno.stdin.isTerminal() ? "standard input" : "standard output";
    console.error(
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
  const g = await resolveGlobals(options);
  if (!g.settings.planner.model) {
    throw new UsageError(
      `no planner model: pass --model NAME or set "model" in the config (${g.configPath})`,
    );
  }
  const resume = await chooseSession(g.workspaceDir, g.stateDir, options);

  let turn: AbortController | null = null;
  const interrupt = () => turn?.abort();
  const person = new TerminalPerson({ write: writeOut, onInterrupt: interrupt });
  const waiting = new Waiting();
  const screen: ScreenState = { streamed: false, midLine: false, lastTodos: "[]" };
  let runtime: Runtime;
  let answers: AnswerStore | null = null;
  const shownNotices = new Set<string>();
  /** A rule's decision, held until the tool's result shows whether it says the reason. */
  let heldDecision: Extract<DriverEvent, { type: "decision" }> | null = null;
  const flushDecision = (resultContent?: string) => {
    if (heldDecision) writeOut(pc.dim(decisionLine(heldDecision, resultContent) + "\n"));
    heldDecision = null;
  };
  const endLine = () => {
    if (screen.midLine) writeOut("\n");
    screen.midLine = false;
  };
  const emit = (e: DriverEvent) => {
    if (e.type !== "model_request") waiting.stop();
    flushDecision(e.type === "tool_result" ? e.content : undefined);
    switch (e.type) {
      case "model_request":
        screen.streamed = false;
        waiting.start();
        return;
      case "text_delta": {
        screen.streamed = true;
        const t = screenText(e.text);
        writeOut(t);
        if (t.length) screen.midLine = !t.endsWith("\n");
        return;
      }
      case "assistant_text":
        if (!screen.streamed) writeOut(screenText(e.text));
        screen.midLine = true;
        endLine();
        return;
      case "tool_call":
        endLine();
        writeOut(
          pc.dim(
            `→ ${escapeForScreen(e.name)} ${formatToolArguments(e.arguments, 200)}\n`,
          ),
        );
        return;
      case "tool_result": {
        if (e.name === "ask_user") {
          answers?.save(runtime.session.state.answers).catch((err) =>
            person.notice(`the answers could not be saved: ${messageOf(err)}`)
          );
        }
        writeOut(pc.dim(`  ${e.is_error ? "✗" : "←"} ${escapeForScreen(clip(e.content))}\n`));
        const todos = JSON.stringify(runtime.session.state.todos);
        if (e.name === "todo_write" && todos !== screen.lastTodos) {
          screen.lastTodos = todos;
          writeOut(pc.bold("todo list:\n"));
          for (const l of renderTodos(runtime.session.state.todos)) {
            writeOut(`  ${escapeForScreen(l)}\n`);
          }
        }
        return;
      }
      case "decision":
        if (e.by !== "person") heldDecision = e;
        return;
      case "remark":
        endLine();
        person.remark(e.text);
        return;
      case "shown":
        endLine();
        writeShown(e);
        return;
      case "notice":
        // Skill and AGENTS.md notes come again at every turn's start: say each once. Retries
        // and other happenings are said every time.
        if (!/^the (model|processor) endpoint/.test(e.text) && shownNotices.has(e.text)) return;
        shownNotices.add(e.text);
        endLine();
        person.notice(e.text);
        return;
      case "context_label":
        endLine();
        writeOut(
          e.label.startsWith("(U")
            ? pc.red(`the planner context is now ${e.label}: asking stops, every command asks\n`)
            : pc.dim(`the planner context is now ${e.label}\n`),
        );
        return;
      case "error":
        endLine();
        writeOut(pc.red(`error: ${escapeForScreen(e.message)}\n`));
        return;
      case "final":
        endLine();
        return;
    }
  };

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
  const policy = runtime.session.policy;
  // The person's answers outlive a restart of the session (--resume, --continue).
  answers = new AnswerStore(runtime.session.paths.dir);
  runtime.problems.push(...await answers.load(runtime.session.state.answers));
  const sessionId = runtime.session.paths.id;
  // Ctrl-C outside a prompt arrives as a signal: stop the turn, keep the session.
  const onSigint = () => {
    waiting.stop();
    if (turn && !turn.signal.aborted) {
      writeOut(pc.yellow("\n(stopping…)\n"));
      turn.abort();
    }
    // Commands lead their own process groups, out of the terminal's reach: stop them here
    // (SIGINT, then SIGTERM, then SIGKILL; Ctrl-C again goes straight to SIGKILL).
    if (turn) void policy.stopRuns();
  };
  process.on("SIGINT", onSigint);

  writeOut(pc.bold(`Brave Bot — ${escapeForScreen(runtime.session.workspace.root)}\n`));
  writeOut(pc.dim(
    `model ${escapeForScreen(g.settings.planner.model)} at ${
      escapeForScreen(g.settings.planner.url)
    }` +
      // The config's window until the server says what it serves (a notice on the first reply).
      ` · window ${runtime.driver.contextWindow.tokens} tokens (config)` +
      ` · session ${sessionId}${resume ? " (resumed)" : ""} · /help for commands\n`,
  ));
  for (const p of runtime.problems) person.notice(p);
  if (resume) {
    const n = runtime.driver.messages.length;
    writeOut(pc.dim(`resumed: ${plural(n, "message")} of conversation carried on\n`));
    const last = [...runtime.driver.messages].reverse().find((m) =>
      m.role === "assistant" && typeof m.content === "string" && m.content.trim() !== ""
    );
    if (last && last.role === "assistant" && last.content) {
      writeOut(pc.dim("last reply:\n") + screenText(last.content) + "\n");
    }
  }

  /** What shell lines since the last message hand to the planner with the next one. */
  const pending: { text: string; label: Label }[] = [];

  const runTurn = async (text: string) => {
    const message = [...pending.map((p) => p.text), text].filter((t) => t !== "").join("\n\n");
    const label = joinLabels(TRUSTED_PRIVATE, ...pending.map((p) => p.label));
    pending.length = 0;
    turn = new AbortController();
    try {
      const outcome = await runtime.driver.runTurn(message, {
        signal: turn.signal,
        maxReplies: g.settings.maxTurns,
        label,
      });
      if (outcome.status === "aborted") writeOut(pc.yellow("(stopped; the session goes on)\n"));
    } catch (e) {
      waiting.stop();
      writeOut(pc.red(`error: ${escapeForScreen(messageOf(e))}\n`));
    } finally {
      waiting.stop();
      flushDecision();
      turn = null;
    }
  };

  /** A reference's content for the person only, framed as untrusted and escaped (§15). */
  const writeShown = (
    e: { ref: string; source: string; lines: number; label: string; text: string; omitted: number },
  ) => {
    writeOut(
      pc.yellow(
        `┌ ${escapeForScreen(e.ref)}: ${escapeForScreen(e.source)}, ${plural(e.lines, "line")}, ` +
          `untrusted ${e.label} — shown to you, not to the planner\n`,
      ),
    );
    for (const l of escapeForScreen(e.text, true).split("\n")) writeOut(`${pc.yellow("│")} ${l}\n`);
    writeOut(
      pc.yellow(e.omitted > 0 ? `└ ${plural(e.omitted, "more line")}: /show ${e.ref}\n` : "└\n"),
    );
  };

  const slash = async (line: string): Promise<"exit" | void> => {
    const [command, ...args] = line.slice(1).trim().split(/\s+/);
    const print = (l: string) => writeOut(`${l}\n`);
    try {
      switch (command) {
        case "exit":
        case "quit":
          return "exit";
        case "help":
          HELP.forEach(print);
          return;
        case "clear":
          await runtime.driver.clear();
          runtime.session.state.todos = [];
          screen.lastTodos = "[]";
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
          else renderTodos(runtime.session.state.todos).forEach((l) => print(escapeForScreen(l)));
          return;
        case "trust": {
          const change = await checkTrustCommand(
            runtime.session.workspace.root,
            args[0] ?? "list",
            args[1],
          );
          let lines: string[];
          if (change) lines = await policy.changeTrust((map) => applyTrustChange(map, change));
          else {
            await policy.refreshTrust();
            lines = describeTrust(policy.storedTrust);
          }
          lines.forEach(print);
          return;
        }
        case "vouch": {
          const lines = await applyVouchCommand(
            policy.vouches,
            runtime.session.workspace.root,
            args[0] ?? "list",
            args[1],
          );
          lines.forEach(print);
          return;
        }
        default:
          print(`unknown command /${escapeForScreen(command ?? "")}; /help lists them`);
      }
    } catch (e) {
      print(pc.red(e instanceof UsageError ? e.message : `error: ${messageOf(e)}`));
    }
  };

  const readLine = async (): Promise<string | null> => {
    const stop = new AbortController();
    // Ctrl-D leaves, as in a shell (readline alone would close without settling the prompt).
    const onKey = (_: unknown, key?: { ctrl?: boolean; name?: string }) => {
      if (key?.ctrl && key.name === "d") stop.abort();
    };
    process.stdin.on("keypress", onKey);
    try {
      const context: PromptContext & { signal: AbortSignal } = { signal: stop.signal };
      return await input({
        message: promptLine(
          runtime.session.workspace.root,
          policy.contextLabel,
          runtime.driver.contextFill,
        ),
        theme: { prefix: { idle: "", done: "" } },
      }, context);
    } catch (e) {
      if (!isPromptExit(e)) throw e;
      return (e as Error).name === "AbortPromptError" ? null : "\u0003";
    } finally {
      process.stdin.off("keypress", onKey);
    }
  };

  try {
    if (firstPrompt.trim() !== "") await runTurn(firstPrompt);
    let ctrlC = false;
    while (true) {
      const line = await readLine();
      if (line === null) break;
      if (line === "\u0003") {
        if (ctrlC) break;
        ctrlC = true;
        writeOut(pc.dim("(Ctrl-C again, Ctrl-D or /exit to leave)\n"));
        continue;
      }
      ctrlC = false;
      const text = line.trim();
      if (text === "") continue;
      const shellLine = parseShellLine(text);
      if (shellLine) {
        turn = new AbortController();
        const ran = await runShellLine(policy, g.settings, shellLine);
        turn = null;
        if (!ran.ok) {
          writeOut(pc.red(`${escapeForScreen(ran.error)}\n`));
          continue;
        }
        if (ran.value.display) writeOut(ran.value.display.replace(/\n?$/, "\n"));
        for (const s of ran.value.status) writeOut(pc.dim(`${escapeForScreen(s)}\n`));
        pending.push(ran.value.forPlanner);
        writeOut(pc.dim(
          shellLine.mode === "words"
            ? "(its output goes to the planner with your next message, as your own words)\n"
            : `(the planner will be told of ref:${ran.value.ref?.id} with your next message; it is not shown the output)\n`,
        ));
        continue;
      }
      if (text.startsWith("/")) {
        if (await slash(text) === "exit") break;
        continue;
      }
      await runTurn(text);
    }
  } finally {
    process.off("SIGINT", onSigint);
    waiting.stop();
    runtime.close();
  }
  writeOut(pc.dim(`session kept: bravebot --resume ${sessionId}\n`));
  return EXIT.ok;
}
