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
