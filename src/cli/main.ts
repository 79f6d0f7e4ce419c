/**
 * The command line (docs/cli.md), with commander. Usage and configuration errors are exit 2 with
 * one clear message, before anything runs; nothing reaches the person as a stack trace.
 *
 * Modules are imported when a command needs them. `bravebot --version` alone is answered by
 * main.ts before this module (or commander, or anything else from npm) is loaded, which was most
 * of its start-up time (docs/benchmarks.md).
 */
import type { Command, Help as HelpType } from "commander";
import { VERSION } from "../version.ts";
import { columnsFor, printErr, printOut, writeErr, writeOut } from "../util/output.ts";
import { EXIT, EXIT_MEANINGS, UsageError } from "./exit_codes.ts";
import { escapeForScreen } from "../util/escape.ts";
import type { GlobalOptions } from "./global_options.ts";
import { commandHandlers } from "./handlers.ts";
import { askYesNo, nearestCommand, readStdinLine } from "./did_you_mean.ts";

type Commander = typeof import("commander");

const out = (line: string) => printOut(line);

/** Options only a session reads: a subcommand's help leaves them out of the options it lists. */
const SESSION_ONLY = new Set([
  "--print",
  "--approvals",
  "--trust-stdin",
  "--output-format",
  "--max-turns",
  "--continue",
  "--resume",
  "--version",
]);
/**
 * A line on stderr. An error may name a path or quote a server or a repository's file: its
 * untrusted parts were escaped where it was worded, and the writer's wall marks anything that
 * was not (escaping the whole line again would mark the markers).
 */
const errLine = (line: string) => printErr(line);

/** Fewer columns than this left beside the options, and descriptions go under them instead. */
const NARROWEST_DESCRIPTION = 24;

function build(
  { Command, Help, Option }: Commander,
  setExit: (code: number) => void,
  defaultConfigPath: () => string,
): Command {
  const program = new Command("bravebot")
    .description("a coding agent for repositories full of text written by strangers")
    .version(VERSION, "--version", "print the version")
    .helpOption("-h, --help", "show this help")
    .argument("[prompt...]", "the first message (interactive) or the task (with -p)")
    .option(
      "-p, --print <prompt>",
      "one-shot: run until the planner finishes, print the answer, exit",
    )
    .option("-w, --workspace <dir>", "the workspace root (default: current directory)")
    .option("--endpoint <url>", "planner endpoint: an OpenAI-compatible base URL (…/v1)")
    .option("--model <name>", "planner model")
    .option("--processor-endpoint <url>", "processor endpoint (default: the planner's)")
    .option("--processor-model <name>", "processor model (default: the planner's)")
    .option("--approvals <file>", "approval policy file for this run")
    .option("--trust-stdin", "with -p: piped input is your own words, not a reference")
    .addOption(
      new Option("--output-format <format>", "with -p: text, json or stream-json").choices([
        "text",
        "json",
        "stream-json",
      ]),
    )
    .option("--max-turns <n>", "planner replies before stopping (default: 50)")
    .option("--continue", "go on with the latest session")
    .option(
      "--resume [id]",
      "go on with a given session (a unique start of its id will do; bare: choose from a list)",
    )
    .option("--state-dir <dir>", "where trust, vouches, sessions and audit live")
    .option("--config <file>", "user config file")
    .exitOverride()
    // A subcommand's --help lists the options it takes, which are the program's (set before the
    // subcommands are made, so that they inherit it).
    .configureHelp({
      // A narrow terminal still gets its descriptions wrapped (commander stops below 40).
      minWidthToWrap: 12,
      // Too narrow for two columns: each description goes under its option, indented.
      formatItem(this: HelpType, term, termWidth, description, helper) {
        const width = this.helpWidth ?? 80;
        if (!description || width - termWidth - 4 >= NARROWEST_DESCRIPTION) {
          return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
        }
        const wrapped = this.boxWrap(description, Math.max(12, width - 6));
        return `  ${term}\n${wrapped.replace(/^/gm, "      ")}`;
      },
      // The usage line too, under its own start ("Usage: " is seven columns).
      styleUsage(this: HelpType, usage: string) {
        return this.boxWrap(usage, Math.max(12, (this.helpWidth ?? 80) - 7))
          .replace(/\n/g, "\n       ");
      },
      showGlobalOptions: true,
      visibleGlobalOptions: (cmd) =>
        (cmd.parent?.options ?? []).filter((o) => !o.hidden && !SESSION_ONLY.has(o.long ?? "")),
    })
    .configureOutput({
      writeOut: (s) => writeOut(s),
      writeErr: (s) => writeErr(s),
      // Help is wrapped to the terminal it is shown on, not to a fixed 80 columns.
      getOutHelpWidth: () => columnsFor("out"),
      getErrHelpWidth: () => columnsFor("err"),
    })
    .action(async (promptWords: string[], options: GlobalOptions) => {
      if (options.print === undefined && await bareWord(program, promptWords, setExit)) return;
      setExit(await commandHandlers.session(options, promptWords.join(" ")));
    });

  program.addHelpText(
    "after",
    (context) => helpTail(program, context.error ? "err" : "out", defaultConfigPath),
  );

  program.command("trust")
    .description("list, add, untrust or remove trust-map rules")
    .argument("[action]", "list | add | untrust | remove", "list")
    .argument("[dir]", "a workspace-relative directory")
    .action(async (action: string, dir: string | undefined, _o: unknown, cmd: Command) => {
      const { resolveGlobals } = await import("./global_options.ts");
      const { trustCommand } = await import("./commands/trust.ts");
      const g = await resolveGlobals(cmd.optsWithGlobals() as GlobalOptions);
      await trustCommand(g.workspaceDir, g.stateDir, action, dir, out);
      setExit(EXIT.ok);
    });

  program.command("vouch")
    .description("list or remove vouched commands")
    .argument("[action]", "list | remove", "list")
    .argument("[id]", "the vouch to remove")
    .action(async (action: string, id: string | undefined, _o: unknown, cmd: Command) => {
      setExit(await commandHandlers.vouch(cmd.optsWithGlobals() as GlobalOptions, action, id));
    });

  program.command("skills")
    .description("the skills the planner would be listed, and where each was found")
    .action(async (_o: unknown, cmd: Command) => {
      setExit(await commandHandlers.skills(cmd.optsWithGlobals() as GlobalOptions));
    });

  program.command("sessions")
    .description("this workspace's sessions, newest first")
    .action(async (_o: unknown, cmd: Command) => {
      setExit(await commandHandlers.sessions(cmd.optsWithGlobals() as GlobalOptions));
    });

  program.command("diff")
    .description("what a session changed: each file against its state before the first change")
    .requiredOption(
      "--session <id>",
      "the session (bravebot sessions lists them; a prefix will do)",
    )
    .action(async (o: { session: string }, cmd: Command) => {
      const { diffCommand } = await import("./commands/diff.ts");
      setExit(await diffCommand(cmd.optsWithGlobals() as GlobalOptions, o.session));
    });

  program.command("doctor")
    .description("endpoint reachable, model present, tool calling works, permissions, sandbox")
    .action(async (_o: unknown, cmd: Command) => {
      setExit(await commandHandlers.doctor(cmd.optsWithGlobals() as GlobalOptions));
    });
  return program;
}

/** What `bravebot --help` shows by example: a command line and what it does. */
const EXAMPLES: readonly (readonly [string, string])[] = [
  ["bravebot", "a session in the current directory"],
  ["bravebot fix the failing test", "a session whose first message is the words given"],
  ['bravebot -p "what does src/app.ts do?"', "one-shot: the answer is printed, then it exits"],
  [
    'git diff | bravebot -p "review this" --output-format json',
    "one-shot over piped input (a reference the planner does not read), answered as JSON",
  ],
  ["bravebot --continue", "go on with this workspace's latest session"],
  ["bravebot doctor --endpoint http://127.0.0.1:8080/v1", "check a server before a first run"],
];

/** The user config's default path, or how it is found when HOME is not set. */
function configPathShown(defaultConfigPath: () => string): string {
  try {
    return escapeForScreen(defaultConfigPath());
  } catch {
    return "$XDG_CONFIG_HOME/bravebot/config.json";
  }
}

/**
 * The end of `bravebot --help`: examples, where the config file is and the exit statuses
 * (from {@link EXIT_MEANINGS}, the one list of them), wrapped to the width help is shown at.
 */
function helpTail(
  program: Command,
  stream: "out" | "err",
  defaultConfigPath: () => string,
): string {
  const help = program.createHelp();
  help.prepareContext({ helpWidth: columnsFor(stream) });
  const width = help.helpWidth ?? 80;
  const indented = (text: string, by: number) =>
    help.boxWrap(text, Math.max(20, width - by)).replace(/^/gm, " ".repeat(by));
  const codes = EXIT_MEANINGS.map(([code, meaning]) =>
    help.formatItem(String(code), 3, meaning, help)
  );
  return [
    "",
    "Examples:",
    ...EXAMPLES.flatMap(([line, what]) => [indented(`$ ${line}`, 2), indented(what, 6)]),
    "",
    "Config file:",
    indented(
      `${configPathShown(defaultConfigPath)} (another with --config FILE; docs/config.md)`,
      2,
    ),
    "",
    "Exit status:",
    ...codes,
  ].join("\n");
}

/**
 * `bravebot help` and `bravebot help COMMAND` are `--help`; a lone word one slip from a
 * subcommand asks, in a terminal, whether that was meant (Enter: yes, and the subcommand runs
 * bare, which only lists; `n`: the word is the first message, as the command line reads any words).
 * Returns whether it handled the words (the exit status is set), false when they are the
 * session's prompt after all.
 */
async function bareWord(
  program: Command,
  words: string[],
  setExit: (code: number) => void,
): Promise<boolean> {
  const sub = (name: string | undefined) => program.commands.find((c) => c.name() === name);
  const help = (cmd: Command) => {
    cmd.outputHelp();
    setExit(EXIT.ok);
    return true;
  };
  if (words[0] === "help" && (words.length === 1 || (words.length === 2 && sub(words[1])))) {
    return help(sub(words[1]) ?? program);
  }
  if (words.length !== 1 || !Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) return false;
  const near = nearestCommand(words[0], ["help", ...program.commands.map((c) => c.name())]);
  if (near === null) return false;
  const yes = await askYesNo(
    `bravebot: "${words[0]}" is not a command. Did you mean \`bravebot ${near}\`? ` +
      `[Y/n; n sends "${words[0]}" to the planner] `,
    { write: (t) => writeOut(t), read: readStdinLine },
  );
  if (yes === null) {
    setExit(EXIT.usage);
    return true;
  }
  if (!yes) return false;
  if (near === "help") return help(program);
  // The program's options are parsed already: the subcommand reads them through its parent.
  await sub(near)!.parseAsync([], { from: "user" });
  return true;
}

/**
 * NO_COLOR (docs/cli.md#environment) turns every colour off. picocolors and the prompt library read
 * it themselves; the colour library under the terminal UI reads only FORCE_COLOR, once, when it is
 * first imported, so FORCE_COLOR=0 is set here, before anything can import it (permissions/
 * main.flags lets the main thread write it).
 */
export function honourNoColor(): void {
  if (Deno.env.get("NO_COLOR")) Deno.env.set("FORCE_COLOR", "0");
}

/** Runs the command line and returns the exit status; never throws. */
export async function main(args: string[]): Promise<number> {
  honourNoColor();
  let code: number = EXIT.ok;
  const commander = await import("commander");
  const { CommanderError } = commander;
  // Loaded here, not at the top: `--version` alone should load none of it.
  const { defaultConfigPath } = await import("../state/dirs.ts");
  const program = build(commander, (c) => code = c, defaultConfigPath);
  try {
    await program.parseAsync(args, { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage errors were already printed.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof UsageError) {
      errLine(`bravebot: ${e.message}`);
      return EXIT.usage;
    }
    errLine(`bravebot: internal error: ${e instanceof Error ? e.message : String(e)}`);
    return EXIT.failure;
  }
}
