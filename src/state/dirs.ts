/**
 * Where Brave Bot keeps what must never live inside a workspace: the trust map, vouches,
 * sessions and audit (docs/contract.md §5.4, §14). Only environment variables
 * docs/cli.md#environment names are read.
 */
import { join } from "node:path";
import { sha256 } from "../util/hash.ts";

function env(name: string): string | undefined {
  const value = Deno.env.get(name);
  return value === undefined || value === "" ? undefined : value;
}

function home(): string {
  const h = env("HOME") ?? env("USERPROFILE");
  if (!h) throw new Error("neither HOME nor USERPROFILE is set; pass --state-dir and --config");
  return h;
}

/** `--state-dir`, else `$XDG_STATE_HOME/bravebot`, else the platform's equivalent. */
export function defaultStateDir(): string {
  const xdg = env("XDG_STATE_HOME");
  if (xdg) return join(xdg, "bravebot");
  if (Deno.build.os === "windows" && env("LOCALAPPDATA")) {
    return join(env("LOCALAPPDATA")!, "bravebot", "state");
  }
  return join(home(), ".local", "state", "bravebot");
}

/** `--config`, else `$XDG_CONFIG_HOME/bravebot/config.json`, else the platform's equivalent. */
export function defaultConfigPath(): string {
  return join(defaultConfigDir(), "config.json");
}

export function defaultConfigDir(): string {
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) return join(xdg, "bravebot");
  if (Deno.build.os === "windows" && env("APPDATA")) return join(env("APPDATA")!, "bravebot");
  return join(home(), ".config", "bravebot");
}

/**
 * The folder for one workspace's state, keyed by the workspace's real path so that two
 * checkouts never share trust, and a renamed link never inherits it.
 */
export function workspaceStateDir(stateDir: string, workspaceReal: string): string {
  const base = workspaceReal.split(/[\\/]/).filter(Boolean).at(-1) ?? "root";
  const safe = base.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40);
  return join(stateDir, "workspaces", `${safe}-${sha256(workspaceReal).slice(0, 16)}`);
}

/** Creates a directory readable by its owner only; state holds private bytes. */
export async function ensurePrivateDir(path: string): Promise<void> {
  await Deno.mkdir(path, { recursive: true, mode: 0o700 });
}
