/** An audit entry as the log holds it, less what differs from run to run (time and session). */
export function loggedLine(entry: unknown): string {
  const { time: _time, session: _session, ...rest } = entry as Record<string, unknown>;
  return JSON.stringify(rest);
}
