/**
 * Reads the global options (docs/cli.md#options) into settings, config and paths: the one place the
 * command line, the config file and the defaults meet.
 */
import { resolve } from "node:path";
import { defaultConfigPath, defaultStateDir } from "../state/dirs.ts";
import { type Config, loadConfig } from "../state/config.ts";
import { type Settings, settingsFrom } from "../state/settings.ts";
import { loadWorkspaceConfig, narrowSettings } from "../state/workspace_config.ts";
import { UsageError } from "./exit_codes.ts";

export interface GlobalOptions {
  workspace?: string;
  endpoint?: string;
  model?: string;
  processorEndpoint?: string;
  processorModel?: string;
  approvals?: string;
  outputFormat?: string;
  maxTurns?: string;
  continue?: boolean;
  /** A session id or a unique start of one; true for a bare `--resume` (choose from a list). */
  resume?: string | true;
  stateDir?: string;
  config?: string;
  print?: string;
  trustStdin?: boolean;
}

export interface Resolved {
  workspaceDir: string;
  stateDir: string;
  configPath: string;
  config: Config;
  settings: Settings;
}

function checkUrl(name: string, value: string | undefined): void {
  if (value === undefined) return;
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
  } catch {
    throw new UsageError(
      `${name}: '${value}' is not an http(s) URL, e.g. http://127.0.0.1:11434/v1`,
    );
  }
}

export async function resolveGlobals(options: GlobalOptions): Promise<Resolved> {
  checkUrl("--endpoint", options.endpoint);
  checkUrl("--processor-endpoint", options.processorEndpoint);
  let maxTurns: number | undefined;
  if (options.maxTurns !== undefined) {
    maxTurns = Number(options.maxTurns);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new UsageError(
        `--max-turns: '${options.maxTurns}' is not a whole number of at least 1`,
      );
    }
  }
  const configPath = options.config ? resolve(options.config) : defaultConfigPath();
  const loaded = await loadConfig(configPath, options.config !== undefined);
  if (!loaded.ok) throw new UsageError(loaded.error);
  const workspaceDir = resolve(options.workspace ?? ".");
  try {
    if (!(await Deno.stat(workspaceDir)).isDirectory) throw new Error();
  } catch {
    throw new UsageError(`--workspace: ${workspaceDir} is not a directory`);
  }
  const userSettings = settingsFrom(loaded.value, {
    endpoint: options.endpoint,
    model: options.model,
    processorEndpoint: options.processorEndpoint,
    processorModel: options.processorModel,
    maxTurns,
  });
  // The workspace's own config may only narrow the user's (docs/contract.md §5.4).
  const wsConfig = loadWorkspaceConfig(workspaceDir);
  if (!wsConfig.ok) throw new UsageError(wsConfig.error);
  const settings = narrowSettings(
    userSettings,
    wsConfig.value,
    `${workspaceDir}/.bravebot/config.json`,
  );
  if (!settings.ok) throw new UsageError(settings.error);
  return {
    workspaceDir,
    stateDir: options.stateDir ? resolve(options.stateDir) : defaultStateDir(),
    configPath,
    config: loaded.value,
    settings: settings.value,
  };
}
