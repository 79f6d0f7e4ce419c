/**
 * Shell mode (docs/contract.md §9). There is no shell tool; the person has a shell. A line the
 * person types that begins with `!` runs through their `$SHELL` (or /bin/sh) in the workspace, with
 * their authority and no approval — but still spawned by the effect worker, with the same short
 * environment as a run stage and nothing on its stdin.
 *
 * What the planner gets is decided by what the person typed:
 * - `!cmd`: the output becomes a reference `(U,priv)`, mentioned in the person's next message;
 * - `!!cmd`: the output is handed over as the person's own words `(T,priv)` (capped).
 *
 * The policy layer decides all of it here — the shell, the labels, the reference, the audit
 * entry; the interactive session calls {@link parseShellLine} on each line and
 * {@link runShellLine} when it is a shell line, shows `display`, and adds `forPlanner` to the
 * person's next message.
 */
import type { Asking, Recording, References, WorkspaceFiles } from "./capabilities.ts";
import { type Label, TRUSTED_PRIVATE, UNTRUSTED_PRIVATE } from "../util/label.ts";
import type { RefRecord } from "./refs.ts";
import { decodeOutput, headTail, keepOutput, statusLines } from "./outputs.ts";
import { personWatch } from "./watch.ts";
import { defaultTimeoutMs } from "./run_prepare.ts";
import { spawnRequest } from "./runs.ts";
import { doneLine, seatAt, settle } from "./verdict.ts";
import type { Settings } from "../state/settings.ts";
import { escapeForScreen } from "../util/escape.ts";
import { err, ok, type Result } from "../util/result.ts";
import { plural } from "../util/plural.ts";

export interface ShellLine {
  /** `ref`: typed `!cmd`; `words`: typed `!!cmd`. */
  mode: "ref" | "words";
  command: string;
}

/** Whether a typed line is a shell line, and which kind; null for an ordinary message. */
export function parseShellLine(line: string): ShellLine | null {
  if (line.startsWith("!!")) return { mode: "words", command: line.slice(2).trim() };
  if (line.startsWith("!")) return { mode: "ref", command: line.slice(1).trim() };
  return null;
}

export interface ShellOutcome {
  line: ShellLine;
  /** The shell that ran it. */
  shell: string;
  /** For the person's screen: the output escaped (control and invisible characters shown). */
  display: string;
  /** The person watched the output as it came (Person.runOutput): `display` need not be shown. */
  watched: boolean;
  /** Exit status, duration, byte counts, cut or timed out. */
  status: string[];
  /** What the person's next message carries to the planner, and the label it has there. */
  forPlanner: { text: string; label: Label };
  /** The reference holding the output (`!cmd`), or null (`!!cmd`). */
  ref: RefRecord | null;
}

/** `$SHELL` when it names an absolute path, else /bin/sh. */
function personShell(): string {
  let shell: string | undefined;
  try {
    shell = Deno.env.get("SHELL");
  } catch { /* not readable: the default */ }
  return shell && shell.startsWith("/") ? shell : "/bin/sh";
}

/** Runs one shell line for the person. Errors (an empty line, a shell that cannot start) are values. */
export async function runShellLine(
  policy: Asking & Recording & WorkspaceFiles & References,
  settings: Settings,
  line: ShellLine,
  options: { shell?: string; timeoutMs?: number } = {},
): Promise<Result<ShellOutcome>> {
  if (line.command === "") {
    return err(
      "nothing to run: type a command after ! (or !! to hand its output over as your words)",
    );
  }
  const shell = options.shell ?? personShell();
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs(settings);
  // The person typed it: they watch it print, as they would in their own shell (§15).
  const watching = personWatch(policy, true);
  const spawned = await policy.worker.call({
    op: "spawn",
    request: spawnRequest(policy, settings, {
      stages: [{ program: shell, args: ["-c", line.command] }],
      stdin: null,
      env: { SHELL: shell },
      timeoutMs,
      watching,
    }),
  }, watching?.onProgress);
  const typed = `${line.mode === "words" ? "!!" : "!"}${line.command}`;
  if (!spawned.ok) {
    await settle(
      doneLine({
        tool: "shell",
        routing: { command: line.command, shell },
        labels: {},
        decision: "failed to start",
        by: "person",
        reason: `${spawned.error.name}: ${spawned.error.message}`,
      }),
      seatAt(policy),
    );
    return err(`${shell} could not start: ${spawned.error.message}`);
  }
  const result = spawned.value;
  watching?.end(result);
  const watched = watching !== null;
  const outLabel = line.mode === "words" ? TRUSTED_PRIVATE : UNTRUSTED_PRIVATE;
  await settle(
    doneLine({
      tool: "shell",
      routing: { command: line.command, shell, mode: line.mode },
      labels: { output: outLabel },
      decision: "ran (the person's own command, no approval)",
      by: "person",
    }),
    seatAt(policy),
  );
  const cap = settings.limits.shownOutputChars;
  const refCap = settings.limits.refOutputBytes;

  if (line.mode === "words") {
    const combined = new Uint8Array(result.stdout.length + result.stderr.length);
    combined.set(result.stdout);
    combined.set(result.stderr, result.stdout.length);
    const decoded = decodeOutput(combined.subarray(0, refCap));
    const status = statusLines(result, timeoutMs, refCap, {
      cut: result.truncated || combined.length > refCap,
      utf8: decoded.utf8,
    });
    const capped = headTail(decoded.text, cap);
    const body = capped.text.endsWith("\n") || capped.text === ""
      ? capped.text
      : capped.text + "\n";
    return ok({
      line,
      shell,
      display: escapeForScreen(capped.text, true),
      watched,
      status,
      forPlanner: {
        text: `I ran \`${line.command}\` in my shell (${status[0]}); its output:\n${body}`,
        label: TRUSTED_PRIVATE,
      },
      ref: null,
    });
  }

  // Stored as shown (escaped), like a run's argv: a pasted line may hold an escape sequence.
  const kept = await keepOutput(
    policy,
    settings,
    result,
    UNTRUSTED_PRIVATE,
    escapeForScreen(typed),
    "shell",
  );
  const status = statusLines(result, timeoutMs, refCap, kept);
  const shownToPerson = headTail(decodeOutput(await policy.refs.bytes(kept.ref)).text, cap);
  return ok({
    line,
    shell,
    display: escapeForScreen(shownToPerson.text, true),
    watched,
    status,
    forPlanner: {
      text:
        `I ran \`${line.command}\` in my shell (${status[0]}). Its output is ref:${kept.ref.id}` +
        ` (command output, (U,priv), ${plural(kept.ref.size ?? 0, "byte")}, ${
          plural(kept.ref.lines ?? 0, "line")
        }); ` +
        `you are not shown it.`,
      label: TRUSTED_PRIVATE,
    },
    ref: kept.ref,
  });
}
