/**
 * Settings: the config file, the command line and the defaults of docs/contract.md §14 folded into
 * one value, so no module re-derives a limit on its own.
 */
import {
  type Config,
  DEFAULT_ENDPOINT,
  isLoopback,
  RUN_MAX_TIMEOUT_MS,
  type SandboxLevel,
} from "./config.ts";

export interface Limits {
  readLines: number;
  readBytes: number;
  lineChars: number;
  listEntries: number;
  searchLines: number;
  searchLineChars: number;
  searchFileBytes: number;
  runTimeoutMs: number;
  runMaxTimeoutMs: number;
  shownOutputChars: number;
  refOutputBytes: number;
  askQuestions: number;
  toolCallsPerReply: number;
  /**
   * A run's snapshots (docs/contract.md §13.5): entries recorded in full, then how many changed
   * ones (or folders, before the run) past them, then how many folders marked whole at most.
   */
  snapshotEntries: number;
  snapshotChanges: number;
  snapshotMarks: number;
}

export const DEFAULT_LIMITS: Limits = {
  readLines: 2_000,
  readBytes: 256 * 1024,
  lineChars: 2_000,
  listEntries: 1_000,
  searchLines: 200,
  searchLineChars: 500,
  searchFileBytes: 10 * 1024 * 1024,
  runTimeoutMs: 120_000,
  runMaxTimeoutMs: RUN_MAX_TIMEOUT_MS,
  shownOutputChars: 30_000,
  refOutputBytes: 16 * 1024 * 1024,
  askQuestions: 4,
  toolCallsPerReply: 16,
  snapshotEntries: 200_000,
  snapshotChanges: 100_000,
  snapshotMarks: 1_000,
};

export interface EndpointSettings {
  url: string;
  model: string | undefined;
  /** May receive `priv` bytes without asking (docs/contract.md §3.4). */
  local: boolean;
}

export interface Settings {
  planner: EndpointSettings;
  processor: EndpointSettings;
  contextWindow: number;
  requestTimeoutMs: number;
  /** How long a server that is loading its model is waited for. */
  loadTimeoutMs: number;
  limits: Limits;
  privatePatterns: string[];
  sandbox: SandboxLevel;
  runPrograms: string[] | null;
  /** Folders a confined run may write besides the workspace and scratch (user config only). */
  runWritable: string[];
  /** Whether a confined run keeps the network (user config only). */
  runNetwork: boolean;
  maxTurns: number;
}

export interface CommandLineSettings {
  endpoint?: string;
  model?: string;
  processorEndpoint?: string;
  processorModel?: string;
  maxTurns?: number;
}

export function settingsFrom(config: Config, cli: CommandLineSettings = {}): Settings {
  const plannerUrl = cli.endpoint ?? config.endpoint ?? DEFAULT_ENDPOINT;
  const plannerModel = cli.model ?? config.model;
  const processorUrl = cli.processorEndpoint ?? config.processorEndpoint ?? plannerUrl;
  const processorModel = cli.processorModel ?? config.processorModel ?? plannerModel;
  return {
    planner: {
      url: plannerUrl,
      model: plannerModel,
      local: config.endpointLocal ?? isLoopback(plannerUrl),
    },
    processor: {
      url: processorUrl,
      model: processorModel,
      local: config.processorEndpointLocal ?? isLoopback(processorUrl),
    },
    contextWindow: config.contextWindow ?? 32_768,
    requestTimeoutMs: config.timeouts?.requestMs ?? 300_000,
    loadTimeoutMs: config.timeouts?.loadMs ?? 180_000,
    limits: {
      ...DEFAULT_LIMITS,
      runTimeoutMs: config.timeouts?.runMs ?? DEFAULT_LIMITS.runTimeoutMs,
    },
    privatePatterns: config.privatePatterns ?? [],
    sandbox: config.run?.sandbox ?? "auto",
    runPrograms: config.run?.programs ?? null,
    runWritable: config.run?.writable ?? [],
    runNetwork: config.run?.network ?? false,
    maxTurns: cli.maxTurns ?? 50,
  };
}
