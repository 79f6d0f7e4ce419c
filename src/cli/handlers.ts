/**
 * The commands other than `trust`, each in its own module. This table is the seam where the
 * session, vouch, skills, sessions and doctor commands plug into the command line.
 *
 * Each command's module is imported when the command runs, not before: `bravebot --version`
 * and `--help` then load no model client, prompt library or tool (start-up time, docs/benchmarks.md).
 */
import type { GlobalOptions } from "./global_options.ts";
import { paintEarlyPrompt } from "./early_prompt.ts";

type Handler<A extends unknown[]> = (options: GlobalOptions, ...args: A) => Promise<number>;

export const commandHandlers: {
  /** `-p` runs one-shot; otherwise the interactive session. */
  session: Handler<[prompt: string]>;
  interactive: Handler<[prompt: string]>;
  vouch: Handler<[action: string, id: string | undefined]>;
  skills: Handler<[]>;
  sessions: Handler<[]>;
  doctor: Handler<[]>;
} = {
  session: async (options, prompt) =>
    options.print !== undefined
      ? (await import("./one_shot.ts")).oneShot(
        options,
        [options.print, prompt].filter((p) => p !== "").join(" "),
      )
      : commandHandlers.interactive(options, prompt),
  interactive: async (options, prompt) => {
    // Painted before the session's modules load (start-up time, docs/benchmarks.md).
    const early = Deno.stdin.isTerminal() && Deno.stdout.isTerminal()
      ? paintEarlyPrompt(options.workspace)
      : null;
    try {
      return await (await import("./interactive.ts")).interactiveSession(options, prompt, early);
    } catch (e) {
      early?.erase();
      throw e;
    }
  },
  vouch: async (options, action, id) =>
    (await import("./commands/vouch.ts")).vouchCommand(options, action, id),
  skills: async (options) => (await import("./commands/skills.ts")).skillsCommand(options),
  sessions: async (options) => (await import("./sessions.ts")).sessionsCommand(options),
  doctor: async (options) => (await import("./commands/doctor.ts")).doctorCommand(options),
};
