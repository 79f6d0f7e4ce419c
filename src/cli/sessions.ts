/**
 * Sessions (docs/cli.md#commands): `bravebot sessions` lists this workspace's sessions newest
 * first, and `--continue` / `--resume ID` pick one to go on with. A session is its folder in the
 * state directory; what it holds is read through the transcript loader, which survives a torn last
 * line (a kill mid-turn) and reports a corrupt one without losing the rest.
 */
import { openWorkspace } from "../policy/workspace.ts";
import { sessionPaths, statePaths } from "../state/session_paths.ts";
import { loadTranscript } from "../state/transcript.ts";
import { sessionExists, sessionIds } from "../session/runtime.ts";
import { escapeForScreen } from "../util/escape.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { plural } from "../util/plural.ts";
import { printOut } from "../util/output.ts";

export interface SessionSummary {
  id: string;
  started: string | null;
  /** The person's first message, one line, for recognising the session. */
  first: string | null;
  messages: number;
  lastActivity: string | null;
  problems: string[];
}

/** Which session `--continue` / `--resume ID` name, or undefined for a new one. */
export async function chooseSession(
  workspaceDir: string,
  stateDir: string,
  options: { continue?: boolean; resume?: string },
): Promise<string | undefined> {
  if (!options.continue && options.resume === undefined) return undefined;
  if (options.continue && options.resume !== undefined) {
    throw new UsageError("give --continue or --resume ID, not both");
  }
  const ws = await openWorkspace(workspaceDir, stateDir);
  const dir = statePaths(stateDir, ws.root).sessionsDir;
  if (options.resume !== undefined) {
    if (!(await sessionExists(dir, options.resume))) {
      throw new UsageError(
        `--resume: no session '${
          escapeForScreen(options.resume)
        }' in this workspace (bravebot sessions lists them)`,
      );
    }
    return options.resume;
  }
  for (const id of await sessionIds(dir)) if (await sessionExists(dir, id)) return id;
  throw new UsageError("--continue: this workspace has no session yet");
}

/** Summaries of a workspace's sessions, newest first. */
export async function listSessions(
  workspaceDir: string,
  stateDir: string,
): Promise<SessionSummary[]> {
  const ws = await openWorkspace(workspaceDir, stateDir);
  const state = statePaths(stateDir, ws.root);
  const out: SessionSummary[] = [];
  for (const id of await sessionIds(state.sessionsDir)) {
    if (!(await sessionExists(state.sessionsDir, id))) continue;
    const paths = sessionPaths(state, id);
    const loaded = await loadTranscript(paths.transcript);
    const first = loaded.history.find((m) => m.role === "user");
    let lastActivity: string | null = null;
    try {
      lastActivity = (await Deno.stat(paths.transcript)).mtime?.toISOString() ?? null;
    } catch { /* listed anyway */ }
    out.push({
      id,
      started: loaded.meta?.started ?? null,
      first: first && typeof first.content === "string" ? first.content : null,
      messages: loaded.history.length,
      lastActivity,
      problems: loaded.problems,
    });
  }
  return out;
}

function oneLine(text: string, max = 70): string {
  const s = escapeForScreen(text.replace(/\s+/g, " ").trim());
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

export async function sessionsCommand(
  options: GlobalOptions,
  print: (line: string) => void = printOut,
): Promise<number> {
  const g = await resolveGlobals(options);
  const sessions = await listSessions(g.workspaceDir, g.stateDir);
  print(`workspace: ${g.workspaceDir}`);
  if (sessions.length === 0) {
    print("no sessions yet");
    return EXIT.ok;
  }
  print("sessions, newest first (bravebot --resume ID goes on with one):");
  for (const s of sessions) {
    const when = (s.lastActivity ?? s.started ?? "").replace("T", " ").slice(0, 19);
    print(
      `  ${s.id}  ${when}  ${plural(s.messages, "message")}  ${s.first ? oneLine(s.first) : ""}`,
    );
    for (const p of s.problems) print(`      note: ${p}`);
  }
  return EXIT.ok;
}
