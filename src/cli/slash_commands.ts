/**
 * The interactive session's slash commands (docs/session.md#commands), one table: each command's
 * name, what `/help` says of it and what it does. `/help` and Tab completion are made from the
 * table, so a command cannot be added without both knowing it.
 */
import pc from "picocolors";
import { UsageError } from "./exit_codes.ts";
import { applyTrustChange, checkTrustCommand, describeTrust } from "./commands/trust.ts";
import { applyVouchCommand } from "./commands/vouch.ts";
import type { Runtime } from "../session/runtime.ts";
import type { Settings } from "../state/settings.ts";
import type { EventView } from "../person/event_view.ts";
import { estimateTokens } from "../driver/context_window.ts";
import { renderTodos } from "../tools/todo_write.ts";
import { formatLabel, type Label } from "../util/label.ts";
import { renderChangedFile } from "../person/diff_view.ts";
import type { WritePreview } from "../person/person.ts";
import { escapeForScreen } from "../util/escape.ts";
import { plural } from "../util/plural.ts";
import { messageOf } from "../util/result.ts";

/** What a command works on: the session, and the screen it answers on. */
export interface CommandContext {
  runtime: Runtime;
  settings: Settings;
  sessionId: string;
  view: EventView;
  print(text: string): void;
  /** The prompt and status lines, drawn again (the model or the label changed). */
  refreshPrompt(): void;
  /** The screen's width, for diffs. */
  width(): number;
  /** Asks the person once, with one key, after `lines` are shown; true for yes. */
  confirm(title: string, lines: readonly string[], yes: string): Promise<boolean>;
  /** Words that go to the planner with the person's next message. */
  tellPlanner(words: { text: string; label: Label }): void;
}

export interface SlashCommand {
  /** Typed after the slash; what Tab completes. */
  name: string;
  /** What it takes, as `/help` shows it after the name (`ref:N`), if anything. */
  args?: string;
  /** Its line of `/help`. */
  help: string;
  /** Other names it answers to: neither listed nor completed. */
  aliases?: readonly string[];
  /** `args` are the words typed after the name. */
  run(args: readonly string[], c: CommandContext): Promise<"exit" | void> | "exit" | void;
}

const say = (c: CommandContext, lines: readonly string[]) => c.print(lines.join("\n"));

/** The slash commands, in the order `/help` lists them. */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: "trust",
    args: "[list | add DIR | untrust DIR | remove DIR]",
    help: "the trust map",
    async run(args, c) {
      const policy = c.runtime.policy;
      const change = await checkTrustCommand(
        c.runtime.session.workspace.root,
        args[0] ?? "list",
        args[1],
      );
      if (change) say(c, await policy.changeTrust((map) => applyTrustChange(map, change)));
      else {
        await policy.refreshTrust();
        say(c, describeTrust(policy.storedTrust));
      }
    },
  },
  {
    name: "vouch",
    args: "[list | remove ID]",
    help: "vouched commands",
    async run(args, c) {
      say(
        c,
        await applyVouchCommand(
          c.runtime.policy.vouches,
          c.runtime.session.workspace.root,
          args[0] ?? "list",
          args[1],
        ),
      );
    },
  },
  {
    name: "todos",
    help: "the planner's task list",
    run(_args, c) {
      const todos = c.runtime.session.state.todos;
      if (todos.length === 0) c.print("no todo list yet");
      else say(c, renderTodos(todos).map((l) => escapeForScreen(l)));
    },
  },
  {
    name: "clear",
    help: "a new conversation: the context label goes back to (T,pub)",
    async run(_args, c) {
      await c.runtime.driver.clear();
      c.runtime.session.state.todos = [];
      c.view.todosSeen();
      c.print(`a new conversation; the context is ${formatLabel(c.runtime.policy.contextLabel)}`);
    },
  },
  {
    name: "compact",
    help: "have the planner summarise the conversation so far (it frees the window)",
    async run(_args, c) {
      // What became of it is the driver's notice (said once, as asked for); a failure is said here.
      c.view.setActivity("summarising the conversation…");
      const done = await c.runtime.driver.compact();
      c.view.settle();
      if (!done.ok) {
        c.print(
          done.error ? `not compacted: ${escapeForScreen(done.error)}` : "nothing to summarise yet",
        );
      }
      c.refreshPrompt();
    },
  },
  {
    name: "show",
    args: "ref:N",
    help: "show a reference's content to you (never to the planner)",
    async run(args, c) {
      const shown = await c.runtime.policy.showToPerson(args[0] ?? "", 100_000);
      if (!shown.ok) c.print(escapeForScreen(shown.error));
      else c.view.shown({ ...shown.value, label: formatLabel(shown.value.label) });
    },
  },
  {
    name: "expand",
    args: "[N]",
    help: "the last tool result (or the Nth last) in full, as the planner was shown it",
    aliases: ["last"],
    run(args, c) {
      const back = args[0] === undefined ? 1 : Number(args[0]);
      if (!Number.isInteger(back) || back < 1) {
        c.print(
          "/expand takes a count: /expand for the last tool result, /expand 2 for the one before",
        );
      } else if (!c.view.expand(back)) {
        const kept = c.view.expandable;
        c.print(
          kept === 0
            ? "no tool result to expand yet"
            : `only the last ${plural(kept, "tool result")} can be expanded`,
        );
      }
    },
  },
  {
    name: "status",
    help: "model, endpoint, session, context label and fill, workspace, walls",
    async run(_args, c) {
      say(c, await statusReport(c.runtime, c.settings, c.sessionId));
    },
  },
  {
    name: "model",
    args: "NAME",
    help: "the planner model for the next turns (checked against the server's list)",
    async run(args, c) {
      const name = args.join(" ").trim();
      const current = c.runtime.driver.plannerModel;
      if (name === "") {
        c.print(`the planner model is ${escapeForScreen(current)}`);
        return;
      }
      const { checkPlannerModel } = await import("./commands/model.ts");
      const choice = await checkPlannerModel(c.settings.planner.url, name, current);
      if (!choice.ok) {
        c.print(pc.red(choice.message));
        return;
      }
      const failed = c.runtime.usePlannerModel(name);
      if (failed) c.print(pc.red(escapeForScreen(failed)));
      else {
        c.print(
          `the planner model is now ${escapeForScreen(name)} (for the next turns; ${choice.note})`,
        );
      }
      c.refreshPrompt();
    },
  },
  {
    name: "context",
    help: "what fills the context window",
    run(_args, c) {
      say(c, contextReport(c.runtime, c.runtime.driver.contextWindow.tokens));
    },
  },
  {
    name: "diff",
    help: "what this session changed: each file against its state before the first change",
    async run(_args, c) {
      const files = await c.runtime.policy.sessionDiff();
      if (files.length === 0) {
        c.print("this session changed no file");
        return;
      }
      say(c, files.flatMap((f) => fileLines(f, c)));
    },
  },
  {
    name: "undo",
    args: "[N]",
    help: "take back the last change (a write, an edit, a run's files), or the last N",
    async run(args, c) {
      const n = args[0] === undefined ? 1 : Number(args[0]);
      const plan = await c.runtime.policy.planUndo(n);
      if (!plan.ok) {
        c.print(pc.red(escapeForScreen(plan.error)));
        return;
      }
      const lines = plan.value.shown.flatMap((f) => fileLines(f, c));
      const count = plural(plan.value.records.length, "change");
      if (!await c.confirm(`Undo ${count}?`, lines, "undo")) {
        c.print("nothing was undone");
        return;
      }
      const done = await c.runtime.policy.applyUndo(plan.value);
      if (!done.ok) {
        c.print(pc.red(escapeForScreen(done.error)));
        return;
      }
      for (const line of done.value.said) c.print(escapeForScreen(line));
      c.tellPlanner(done.value.forPlanner);
      c.print(pc.dim("(the planner is told what was undone with your next message)"));
    },
  },
  {
    name: "help",
    help: "this help",
    run(_args, c) {
      say(c, HELP);
    },
  },
  {
    name: "exit",
    help: "leave (the session is kept: bravebot --continue)",
    aliases: ["quit"],
    run: () => "exit",
  },
];

/** One file of `/diff` or `/undo`, drawn as `bravebot diff` draws it. */
function fileLines(
  f: { rel: string; preview: WritePreview | null; note: string | null; byRun?: boolean },
  c: CommandContext,
): string[] {
  return renderChangedFile(f, c.width(), { color: pc.isColorSupported });
}

/** The slash commands, for Tab completion (without the slash). */
export const COMMANDS: readonly string[] = SLASH_COMMANDS.map((c) => c.name);

/**
 * Usages narrower than this share the help's first column; wider ones line up together, past
 * the widest of them.
 */
const HELP_COLUMN = 16;

/** `rows` of usage and meaning as aligned help lines. */
function helpColumns(rows: readonly (readonly [string, string])[]): string[] {
  const wide = Math.max(0, ...rows.map(([u]) => u.length).filter((n) => n >= HELP_COLUMN)) + 3;
  return rows.map(([usage, help]) =>
    `  ${usage.padEnd(usage.length < HELP_COLUMN ? HELP_COLUMN : wide)}${help}`
  );
}

export const HELP: readonly string[] = [
  "Type a message for the planner, or:",
  ...helpColumns([
    ["!command", "run it in your shell; the planner gets its output as a reference (U,priv)"],
    ["!!command", "run it in your shell; the planner gets its output as your own words"],
    ...SLASH_COMMANDS.map((c) => [`/${c.name}${c.args ? ` ${c.args}` : ""}`, c.help] as const),
  ]),
  "Keys: Enter sends; Shift+Enter, Ctrl+J or \\ then Enter start a new line; Up/Down recall;",
  "Ctrl+R searches history; Tab completes /commands; Esc interrupts the turn; Ctrl-C stops it",
  "(and any command); Ctrl+L clears the screen; Ctrl-C twice or Ctrl-D leaves.",
  "Every write and edit is shown to you and asked; vouching is how a command stops being asked.",
];

/** The command a line typed as `/name args…` names, if any, and its arguments. */
export function findCommand(
  line: string,
): { typed: string; command: SlashCommand | undefined; args: string[] } {
  const [typed, ...args] = line.slice(1).trim().split(/\s+/);
  const command = SLASH_COMMANDS.find((c) => c.name === typed || c.aliases?.includes(typed));
  return { typed: typed ?? "", command, args };
}

/** Runs one `/command` line; "exit" when it leaves the session. A failure is said, not thrown. */
export async function runSlashCommand(line: string, c: CommandContext): Promise<"exit" | void> {
  const { typed, command, args } = findCommand(line);
  try {
    if (!command) {
      c.print(`unknown command /${escapeForScreen(typed)}; /help lists them`);
      return;
    }
    return await command.run(args, c);
  } catch (e) {
    c.print(
      pc.red(escapeForScreen(e instanceof UsageError ? e.message : `error: ${messageOf(e)}`)),
    );
  }
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

/** `/status`: model, endpoint, session, the context's label and fill, workspace, walls. */
async function statusReport(
  runtime: Runtime,
  settings: Settings,
  sessionId: string,
): Promise<string[]> {
  const fill = runtime.driver.contextFill;
  const walls = await runtime.policy.walls(settings);
  return [
    `model:      ${escapeForScreen(runtime.driver.plannerModel)}`,
    `endpoint:   ${escapeForScreen(settings.planner.url)}`,
    `session:    ${sessionId}`,
    `context:    ${formatLabel(runtime.policy.contextLabel)}`,
    `window:     ${runtime.driver.contextWindow.tokens} tokens (${
      runtime.driver.contextWindow.by === "server" ? "what the server serves" : "the config's"
    })${fill === null ? "" : `, ${Math.round(fill * 100)}% full at the last request`}`,
    `workspace:  ${escapeForScreen(runtime.session.workspace.root)}`,
    `walls:      ${
      !walls.ok
        ? "unknown"
        : walls.value.confined
        ? "commands run confined (bwrap)"
        : `commands run unconfined: ${escapeForScreen(walls.value.why)}`
    }`,
  ];
}
