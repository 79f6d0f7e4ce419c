/**
 * `bravebot diff --session ID` (docs/cli.md#commands): `/diff` of a session that is not running —
 * every file it wrote, edited or saw a run change, against its state before the session's first
 * change, drawn as approvals are. The change log is the session's own (its folder in the state
 * directory); the workspace's bytes now are read through an effect worker that may write nothing
 * and run nothing (its wall refuses both), as a session reads them, never on the main thread.
 */
import { openWorkspace } from "../../policy/workspace.ts";
import { ChangeLog } from "../../policy/change_log.ts";
import { sessionDiff } from "../../policy/undo.ts";
import { sessionPaths, statePaths } from "../../state/session_paths.ts";
import { ensurePrivateDir } from "../../state/dirs.ts";
import { sessionExists, sessionIds } from "../../session/runtime.ts";
import { EffectWorker } from "../../worker/client.ts";
import { renderChangedFile } from "../../person/diff_view.ts";
import { escapeForScreen } from "../../util/escape.ts";
import { columnsFor, printOut } from "../../util/output.ts";
import { EXIT, UsageError } from "../exit_codes.ts";
import { type GlobalOptions, resolveGlobals } from "../global_options.ts";

/**
 * The session `given` names: exactly an id, else the one id it begins (ids begin with their
 * start time, so a prefix is enough). None, or more than one, is a usage error.
 */
export async function sessionNamed(sessionsDir: string, given: string): Promise<string> {
  const shown = escapeForScreen(given);
  if (await sessionExists(sessionsDir, given)) return given;
  const ids: string[] = [];
  for (const id of await sessionIds(sessionsDir)) {
    if (given !== "" && id.startsWith(given) && await sessionExists(sessionsDir, id)) ids.push(id);
  }
  if (ids.length === 1) return ids[0];
  if (ids.length === 0) {
    throw new UsageError(
      `--session: no session '${shown}' in this workspace (bravebot sessions lists them)`,
    );
  }
  throw new UsageError(
    `--session: '${shown}' begins ${ids.length} sessions' ids; give more of it ` +
      "(bravebot sessions lists them)",
  );
}

/** Colour and width only on a terminal (and colour not under NO_COLOR); a pipe gets plain text. */
function screen(): { color: boolean; width: number } {
  if (!Deno.stdout.isTerminal()) return { color: false, width: columnsFor("out") };
  return { color: !Deno.env.get("NO_COLOR"), width: columnsFor("out") };
}

export async function diffCommand(
  options: GlobalOptions,
  given: string,
  print: (line: string, o?: { colour?: boolean }) => void = printOut,
): Promise<number> {
  const g = await resolveGlobals(options);
  const workspace = await openWorkspace(g.workspaceDir, g.stateDir);
  const state = statePaths(g.stateDir, workspace.root);
  const id = await sessionNamed(state.sessionsDir, given);
  const paths = sessionPaths(state, id);
  const { log: changes, problems } = await ChangeLog.open(paths.dir);
  for (const p of problems) print(`note: ${escapeForScreen(p)}`);
  await ensurePrivateDir(paths.scratch);
  const worker = EffectWorker.start({
    workspace: workspace.root,
    scratch: await Deno.realPath(paths.scratch),
    run: false,
    readOnly: true,
    hide: workspace.protectedDirs,
  });
  try {
    const files = await sessionDiff({ changes, worker, workspace });
    if (files.length === 0) {
      print(`session ${id} changed no file`);
      return EXIT.ok;
    }
    const { color, width } = screen();
    print(`session ${id}: what it changed, each file against its state before the first change`);
    for (const f of files) {
      for (const line of renderChangedFile(f, width, { color })) print(line, { colour: color });
    }
    return EXIT.ok;
  } finally {
    await worker.terminate();
  }
}
