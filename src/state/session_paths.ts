/** Where one workspace's and one session's files live inside the state directory. */
import { join } from "node:path";
import { workspaceStateDir } from "./dirs.ts";

export interface StatePaths {
  /** The workspace's folder in the state directory. */
  workspaceDir: string;
  trustFile: string;
  vouchesFile: string;
  sessionsDir: string;
}

export interface SessionPaths {
  id: string;
  dir: string;
  transcript: string;
  audit: string;
  meta: string;
  /** The effect worker may read and write here besides the workspace. */
  scratch: string;
}

export function statePaths(stateDir: string, workspaceReal: string): StatePaths {
  const workspaceDir = workspaceStateDir(stateDir, workspaceReal);
  return {
    workspaceDir,
    trustFile: join(workspaceDir, "trust.json"),
    vouchesFile: join(workspaceDir, "vouches.json"),
    sessionsDir: join(workspaceDir, "sessions"),
  };
}

/** Session ids sort by time: `2026-11-30T13-29-06-123Z-ab12`. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  return `${stamp}-${crypto.randomUUID().slice(0, 4)}`;
}

export function sessionPaths(paths: StatePaths, id: string): SessionPaths {
  const dir = join(paths.sessionsDir, id);
  return {
    id,
    dir,
    transcript: join(dir, "transcript.jsonl"),
    audit: join(dir, "audit.jsonl"),
    meta: join(dir, "meta.json"),
    scratch: join(dir, "scratch"),
  };
}
