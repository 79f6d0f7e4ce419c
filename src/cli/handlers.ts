/**
 * The commands other than `trust`, each in its own module. This table is the seam where the
 * session, vouch, skills, sessions and doctor commands plug into the command line.
 */
import type { GlobalOptions } from "./global_options.ts";
import { oneShot } from "./one_shot.ts";
import { skillsCommand } from "./commands/skills.ts";
import { doctorCommand } from "./commands/doctor.ts";
import { vouchCommand } from "./commands/vouch.ts";
import { interactiveSession } from "./interactive.ts";
import { sessionsCommand } from "./sessions.ts";

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
  session: (options, prompt) =>
    options.print !== undefined
      ? oneShot(options, [options.print, prompt].filter((p) => p !== "").join(" "))
      : commandHandlers.interactive(options, prompt),
  interactive: interactiveSession,
  vouch: (options, action, id) => vouchCommand(options, action, id),
  skills: skillsCommand,
  sessions: (options) => sessionsCommand(options),
  doctor: doctorCommand,
};
