/**
 * The command line of cli.md, with commander. Usage and configuration errors are exit 2 with
 * one clear message, before anything runs; nothing reaches the person as a stack trace.
 *
 * Modules are imported when a command needs them: `bravebot --version` alone prints the
 * version before commander (or anything else from npm) is loaded, which is most of its
 * start-up time (docs/benchmarks.md).
 */
import type { Command } from "commander";
import { VERSION } from "../version.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import type { GlobalOptions } from "./global_options.ts";
import { commandHandlers } from "./handlers.ts";

type Commander = typeof import("commander");

const out = (line: string) => console.log(line);
const errLine = (line: string) => console.error(line);

function build(
  { Command, Option }: Commander,
  setExit: (code: number) => void,
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
    .option("--resume <id>", "go on with a given session")
    .option("--state-dir <dir>", "where trust, vouches, sessions and audit live")
    .option("--config <file>", "user config file")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => Deno.stdout.writeSync(new TextEncoder().encode(s)),
      writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
    })
    .action(async (promptWords: string[], options: GlobalOptions) => {
      setExit(await commandHandlers.session(options, promptWords.join(" ")));
    });

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

  program.command("doctor")
    .description("endpoint reachable, model present, tool calling works, permissions, sandbox")
    .action(async (_o: unknown, cmd: Command) => {
      setExit(await commandHandlers.doctor(cmd.optsWithGlobals() as GlobalOptions));
    });
  return program;
}

/** Runs the command line and returns the exit status; never throws. */
export async function main(args: string[]): Promise<number> {
  if (args.length === 1 && args[0] === "--version") {
    out(VERSION); // what commander prints for --version, without loading it
    return EXIT.ok;
  }
  let code: number = EXIT.ok;
  const commander = await import("commander");
  const { CommanderError } = commander;
  const program = build(commander, (c) => code = c);
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
