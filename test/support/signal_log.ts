/**
 * Commands that write down the signals they get, for the tests of stopping a run
 * (src/worker/ops/stop_ladder_test.ts, test/run_stop_test.ts, test/run_stop_pty_test.ts): they
 * assert the order of what the command saw, never how long anything took.
 */
import { exists } from "./run_fixture.ts";

/**
 * A command for `sh`: `int` exits on SIGINT, `term` goes on after SIGINT and exits on SIGTERM,
 * `none` goes on after both; each signal is appended to the log. With `child`, the command runs
 * a `term` child in the foreground, which logs to `LOG.child`.
 */
export const STAGE_SCRIPT = `log=$1
case $2 in
  int) trap 'echo INT >> "$log"; exit 3' INT; trap 'echo TERM >> "$log"; exit 4' TERM ;;
  term) trap 'echo INT >> "$log"' INT; trap 'echo TERM >> "$log"; exit 4' TERM ;;
  none|child) trap 'echo INT >> "$log"' INT; trap 'echo TERM >> "$log"' TERM ;;
esac
if [ "$2" = child ]; then sh "$0" "$log.child" term "$3"; exit 0; fi
echo ready > "$log.ready"
echo "traps set ($2)"
while :; do sleep 1; done
`;

/** Waits (bounded in tries) until `path` exists: the command has set its traps. */
export async function waitFor(path: string, tries = 1_200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await exists(path)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never appeared: ${path}`);
}

/** The lines of a log the command wrote, or none. */
export async function logLines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l !== "");
}

/** Processes whose command line holds `marker`, by pgrep (bounded tries: SIGKILL is not instant). */
export async function leftRunning(marker: string, tries = 200): Promise<string> {
  let found = "";
  for (let i = 0; i < tries; i++) {
    const out = await new Deno.Command("pgrep", { args: ["-a", "-f", marker], stdout: "piped" })
      .output();
    found = new TextDecoder().decode(out.stdout).trim();
    if (found === "") return "";
    await new Promise((r) => setTimeout(r, 25));
  }
  return found;
}
