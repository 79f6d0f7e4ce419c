/**
 * The session input's history, per workspace, in the state directory (never in the workspace:
 * what a person typed is private). A small JSON file, bounded in entries and in each entry's
 * length, changed under its lock so two sessions in one workspace both keep their lines.
 */
import { join } from "node:path";
import { z } from "zod";
import { loadJsonFile, type LockWait, updateJsonFile } from "./jsonfile.ts";
import { statePaths } from "./session_paths.ts";

/** Entries kept; the oldest go first. */
export const HISTORY_ENTRIES = 500;
/** Longer messages (a large paste) are not kept: recalling half of one would mislead. */
export const HISTORY_ENTRY_CHARS = 10_000;

const Schema = z.object({ version: z.literal(1), entries: z.array(z.string()) });

export function historyFile(stateDir: string, workspaceReal: string): string {
  return join(statePaths(stateDir, workspaceReal).workspaceDir, "history.json");
}

/** The entries, oldest first; a missing file is none, a corrupt one is set aside and reported. */
export async function loadHistory(
  path: string,
): Promise<{ entries: string[]; problem?: string }> {
  const loaded = await loadJsonFile(path, Schema);
  if (loaded.status === "ok") return { entries: loaded.value.entries };
  if (loaded.status === "corrupt") return { entries: [], problem: loaded.problem };
  return { entries: [] };
}

/**
 * Adds one message at the end (the same as the last is not repeated) and keeps the bound. Gives
 * up when another process holds the file's lock past its bound: a line of history lost is said
 * (by the caller) and harms nothing. `wait` is for the tests.
 */
export async function appendHistory(
  path: string,
  entry: string,
  wait: LockWait = {},
): Promise<void> {
  if (entry.trim() === "" || entry.length > HISTORY_ENTRY_CHARS) return;
  await updateJsonFile(path, Schema, (current) => {
    const entries = current.status === "ok" ? current.value.entries : [];
    if (entries.at(-1) === entry) return undefined;
    return { version: 1 as const, entries: [...entries, entry].slice(-HISTORY_ENTRIES) };
  }, { ...wait, fail: true });
}
