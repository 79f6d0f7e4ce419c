/**
 * Exit status of one-shot mode (docs/cli.md#exit-status); the other commands use 0, 1 and 2 the
 * same way.
 */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  maxTurns: 3,
  /** Stopped by SIGINT, as shells report a process ended by it (128 + 2); the transcript is kept. */
  interrupted: 130,
} as const;

/** A usage or configuration error found before anything ran: exit 2 with this message. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * What each exit status means, in the one order `--help` lists them and docs/cli.md#exit-status
 * tables them (test/cli_help_test.ts holds the two together).
 */
export const EXIT_MEANINGS: readonly (readonly [number, string])[] = [
  [EXIT.ok, "done (one-shot: the planner answered without a tool call)"],
  [EXIT.failure, "a failure once work had started (an endpoint that stayed unreachable, …)"],
  [EXIT.usage, "a usage or configuration error, found before anything ran or was sent"],
  [EXIT.maxTurns, "one-shot: stopped after --max-turns planner replies"],
  [EXIT.interrupted, "interrupted by Ctrl-C (SIGINT); the transcript is kept"],
];
