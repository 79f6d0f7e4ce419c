/**
 * Sessions (docs/cli.md#commands): `bravebot sessions` lists this workspace's sessions newest
 * first, and `--continue` / `--resume [ID]` pick one to go on with. A session is its folder in the
 * state directory; what it holds is read through the transcript loader, which survives a torn last
 * line (a kill mid-turn) and reports a corrupt one without losing the rest.
 *
 * Only a session with a message is one to go on with: it is listed, `--continue` takes the one
 * most recently active, and `--resume` takes a unique prefix of its id. A session closed without
 * a message leaves no folder (`session/open.ts`); a folder with none that remains (a crash before
 * the first message, or one kept for its audit log) is counted, never listed or picked.
 */
import pc from "picocolors";
import { openWorkspace } from "../policy/workspace.ts";
import { sessionPaths, statePaths } from "../state/session_paths.ts";
import { type LoadedTranscript, loadTranscript } from "../state/transcript.ts";
import type { ChatMessage } from "../util/chat.ts";
import { sessionExists, sessionIds } from "../session/runtime.ts";
import { escapeForScreen } from "../util/escape.ts";
import { EXIT, UsageError } from "./exit_codes.ts";
import { type GlobalOptions, resolveGlobals } from "./global_options.ts";
import { plural } from "../util/plural.ts";
import { printOut } from "../util/output.ts";

export interface SessionSummary {
  id: string;
  started: string | null;
  /** The person's first message, as written (escape it to show it). */
  first: string | null;
  messages: number;
  lastActivity: string | null;
  problems: string[];
}

export interface SessionList {
  /** The sessions with a message, most recently active first. */
  sessions: SessionSummary[];
  /** Folders holding no message, which are not listed. */
  withoutMessages: number;
}

/** What `--continue` and `--resume [ID]` ask for; `resume` true is a bare `--resume`. */
export interface SessionChoiceOptions {
  continue?: boolean;
  resume?: string | true;
}

/** How many candidates an ambiguous `--resume` prefix names before "and N more". */
const CANDIDATES_SHOWN = 8;

function checkOneChoice(options: SessionChoiceOptions): void {
  if (options.continue && options.resume !== undefined) {
    throw new UsageError("give --continue or --resume [ID], not both");
  }
}

async function sessionsDirOf(workspaceDir: string, stateDir: string) {
  const ws = await openWorkspace(workspaceDir, stateDir);
  return statePaths(stateDir, ws.root);
}

/**
 * The one session a `--resume` prefix names among those with a message: the id itself, or the
 * only id that starts with it. None, or several (listed, escaped), is a usage error.
 */
export function sessionByPrefix(sessions: SessionSummary[], prefix: string): string {
  if (prefix === "") throw new UsageError("--resume: the session id is empty");
  const exact = sessions.find((s) => s.id === prefix);
  if (exact) return exact.id;
  const matches = sessions.filter((s) => s.id.startsWith(prefix));
  if (matches.length === 1) return matches[0].id;
  const shown = `'${escapeForScreen(prefix)}'`;
  if (matches.length === 0) {
    throw new UsageError(
      `--resume: no session ${shown} with a message in this workspace (bravebot sessions lists them)`,
    );
  }
  const more = matches.length - CANDIDATES_SHOWN;
  throw new UsageError(
    [
      `--resume: ${shown} starts ${plural(matches.length, "session id")}; give more of it:`,
      ...matches.slice(0, CANDIDATES_SHOWN).map((s) => `  ${sessionLine(s, 60)}`),
      ...(more > 0 ? [`  and ${more} more (bravebot sessions lists them)`] : []),
    ].join("\n"),
  );
}

/**
 * Which session `--continue` / `--resume ID` name, or undefined for a new one. A bare
 * `--resume` is chosen from a list, which only a session in a terminal can show
 * ({@link sessionsToPick}); here it is a usage error.
 */
export async function chooseSession(
  workspaceDir: string,
  stateDir: string,
  options: SessionChoiceOptions,
): Promise<string | undefined> {
  if (!options.continue && options.resume === undefined) return undefined;
  checkOneChoice(options);
  if (options.resume === true) {
    throw new UsageError(
      "--resume: give a session id (bravebot sessions lists them); choosing from a list needs " +
        "an interactive session in a terminal",
    );
  }
  const { sessions } = await listSessions(workspaceDir, stateDir);
  if (options.resume !== undefined) return sessionByPrefix(sessions, options.resume);
  if (sessions.length === 0) {
    throw new UsageError("--continue: this workspace has no session with a message yet");
  }
  return sessions[0].id;
}

/**
 * For a bare `--resume`: the sessions to choose from, most recently active first (never none:
 * that is a usage error). Null when the options ask for no choice from a list.
 */
export async function sessionsToPick(
  workspaceDir: string,
  stateDir: string,
  options: SessionChoiceOptions,
): Promise<SessionSummary[] | null> {
  if (options.resume !== true) return null;
  checkOneChoice(options);
  const { sessions } = await listSessions(workspaceDir, stateDir);
  if (sessions.length === 0) {
    throw new UsageError("--resume: this workspace has no session with a message yet");
  }
  return sessions;
}

/** A workspace's sessions with a message, most recently active first, and how many had none. */
export async function listSessions(workspaceDir: string, stateDir: string): Promise<SessionList> {
  const state = await sessionsDirOf(workspaceDir, stateDir);
  const sessions: SessionSummary[] = [];
  let withoutMessages = 0;
  for (const id of await sessionIds(state.sessionsDir)) {
    const paths = sessionPaths(state, id);
    if (!(await sessionExists(state.sessionsDir, id))) {
      withoutMessages++;
      continue;
    }
    const loaded = await loadTranscript(paths.transcript);
    if (loaded.history.length === 0) {
      withoutMessages++;
      continue;
    }
    const first = loaded.history.find((m) => m.role === "user");
    let lastActivity: string | null = null;
    try {
      lastActivity = (await Deno.stat(paths.transcript)).mtime?.toISOString() ?? null;
    } catch { /* listed anyway */ }
    sessions.push({
      id,
      started: loaded.meta?.started ?? null,
      first: first && typeof first.content === "string" ? first.content : null,
      messages: loaded.history.length,
      lastActivity,
      problems: loaded.problems,
    });
  }
  // A session resumed today is newer than one started yesterday and left: activity first, then
  // the id (which sorts by the time it started).
  const key = (s: SessionSummary) => s.lastActivity ?? s.started ?? "";
  sessions.sort((a, b) => key(b).localeCompare(key(a)) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { sessions, withoutMessages };
}

/** Text on one line, its whitespace collapsed, cut to `max` characters, escaped. */
function oneLine(text: string, max: number): string {
  const chars = [...text.replace(/\s+/g, " ").trim()];
  const cut = chars.length > max ? chars.slice(0, max - 1).join("") + "…" : chars.join("");
  return escapeForScreen(cut);
}

/** When a session was last active, as `2026-11-30 13:29` (UTC). */
function when(s: SessionSummary): string {
  return (s.lastActivity ?? s.started ?? "").replace("T", " ").slice(0, 16);
}

/**
 * One session as a person recognises it: when, how many messages, and the first words of their
 * first request (their own words, escaped), in at most `firstMax` characters of them.
 */
export function sessionLine(s: SessionSummary, firstMax = 70, withId = true): string {
  return [
    ...(withId ? [escapeForScreen(s.id)] : []),
    when(s),
    plural(s.messages, "message"),
    s.first ? oneLine(s.first, firstMax) : "",
  ].join("  ").trimEnd();
}

export async function sessionsCommand(
  options: GlobalOptions,
  print: (line: string) => void = printOut,
): Promise<number> {
  const g = await resolveGlobals(options);
  const { sessions, withoutMessages } = await listSessions(g.workspaceDir, g.stateDir);
  print(`workspace: ${escapeForScreen(g.workspaceDir)}`);
  if (sessions.length === 0) print("no sessions yet");
  else {
    print("sessions, most recently active first (bravebot --resume ID goes on with one):");
    for (const s of sessions) {
      print(`  ${sessionLine(s)}`);
      for (const p of s.problems) print(`      note: ${p}`);
    }
  }
  if (withoutMessages > 0) {
    print(
      `(${
        plural(withoutMessages, "more session folder")
      } with no message, not listed: left by a session that stopped before its first message, ` +
        `or kept for its audit log)`,
    );
  }
  return EXIT.ok;
}

export interface Exchange {
  /** The person's message (null when the conversation kept starts with the planner's). */
  request: string | null;
  /** The planner's texts in answer, in order (its tool calls and their results left out). */
  answers: string[];
}

/**
 * The last `n` exchanges of the conversation a resume carries on: since the last `/clear`, and
 * after a compaction the messages it kept (the summary is no exchange). Only the person's
 * messages and the planner's texts: never a tool result, whose content may be a stranger's.
 */
export function lastExchanges(
  loaded: LoadedTranscript,
  n: number,
): { exchanges: Exchange[]; earlier: number; compacted: boolean } {
  // The loader hands out the same message objects in `history` and in `messages`; what is in
  // `messages` and not in `history` is Brave Bot's: a compaction's summary, an interrupted result.
  const recorded = new Set<ChatMessage>(loaded.history);
  const all: Exchange[] = [];
  let compacted = false;
  for (const m of loaded.messages) {
    if (!recorded.has(m)) {
      if (m.role === "user") compacted = true;
      continue;
    }
    if (m.role === "user") all.push({ request: m.content, answers: [] });
    else if (m.role === "assistant" && m.content && m.content.trim() !== "") {
      if (all.length === 0) all.push({ request: null, answers: [] });
      all[all.length - 1].answers.push(m.content);
    }
  }
  const kept = all.slice(Math.max(0, all.length - n));
  return { exchanges: kept, earlier: all.length - kept.length, compacted };
}

/** The replay of the session at `transcript` ({@link replayLines}). */
export async function resumeReplay(
  transcript: string,
  markdown: (text: string) => string[],
): Promise<string[]> {
  return replayLines(await loadTranscript(transcript), markdown);
}

/** Lines of one side of an exchange shown before "… N more lines". */
const REPLAY_LINES = 12;

function capped(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), pc.dim(`  … ${plural(lines.length - max, "more line")}`)];
}

/**
 * What a resumed session shows before its prompt: the last few exchanges, the person's words
 * escaped and the planner's drawn by `markdown` (which escapes), each cut to a few lines.
 */
export function replayLines(
  loaded: LoadedTranscript,
  markdown: (text: string) => string[],
  n = 3,
): string[] {
  const { exchanges, earlier, compacted } = lastExchanges(loaded, n);
  if (exchanges.length === 0) return [];
  const before = [
    ...(earlier > 0 ? [`${plural(earlier, "earlier exchange")} not shown`] : []),
    ...(compacted ? ["older messages were compacted into a summary"] : []),
  ];
  const out = [
    pc.dim(
      `── the last ${exchanges.length === 1 ? "exchange" : `${exchanges.length} exchanges`}${
        before.length ? ` (${before.join("; ")})` : ""
      } ──`,
    ),
  ];
  for (const e of exchanges) {
    if (e.request !== null) {
      const lines = escapeForScreen(e.request.trimEnd(), true).split("\n");
      out.push(...capped(lines.map((l, i) => `${i === 0 ? "›" : " "} ${l}`), REPLAY_LINES / 2));
    }
    const answer = e.answers.flatMap((a) => markdown(a));
    if (answer.length) out.push(...capped(answer, REPLAY_LINES));
    else out.push(pc.dim("  (no answer)"));
  }
  out.push(pc.dim("── end of the replay ──"));
  return out;
}
