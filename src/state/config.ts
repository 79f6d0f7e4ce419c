/**
 * The user config (docs/contract.md §14; docs/config.md): validated with zod; an invalid file is a
 * clear error naming the field, never a silent default. A workspace `.bravebot/config.json` may
 * only narrow it.
 */
import { z } from "zod";
import { parseJsonFile } from "../util/json_schema.ts";
import { err, ok, type Result } from "../util/result.ts";

/**
 * How confined run stages are, from least to most (docs/contract.md §13.4): a workspace config may
 * only move up this list, never down (docs/config.md#the-workspace-config-may-only-narrow).
 */
export const SANDBOX_LEVELS = ["none", "auto", "bwrap"] as const;
export type SandboxLevel = typeof SANDBOX_LEVELS[number];

/**
 * The longest a run may take (docs/contract.md §14: at most 600 s): the one place the ceiling is
 * set.
 */
export const RUN_MAX_TIMEOUT_MS = 600_000;

export const DEFAULT_ENDPOINT = "http://127.0.0.1:11434/v1";

export const configSchema = z.strictObject({
  endpoint: z.url().optional(),
  model: z.string().min(1).optional(),
  /** Whether the planner endpoint may receive `priv` bytes; default: true only for loopback. */
  endpointLocal: z.boolean().optional(),
  processorEndpoint: z.url().optional(),
  processorModel: z.string().min(1).optional(),
  processorEndpointLocal: z.boolean().optional(),
  /** The model's context window in tokens; the driver compacts or stops before exceeding it. */
  contextWindow: z.number().int().min(1024).max(10_000_000).optional(),
  timeouts: z.strictObject({
    /** One model request, in milliseconds. */
    requestMs: z.number().int().min(1000).max(3_600_000).optional(),
    /** How long a server loading its model is waited for, in milliseconds. */
    loadMs: z.number().int().min(1000).max(3_600_000).optional(),
    /** Default `run` timeout, in milliseconds (at most the ceiling of docs/tools.md#run). */
    runMs: z.number().int().min(100).max(RUN_MAX_TIMEOUT_MS).optional(),
  }).optional(),
  /** Extra private-path globs, on top of the defaults (never instead of them). */
  privatePatterns: z.array(z.string().min(1)).optional(),
  run: z.strictObject({
    /** `auto` (default): bwrap where it works; `bwrap`: refuse runs where it does not. */
    sandbox: z.enum(SANDBOX_LEVELS).optional(),
    /** Programs the effect worker may start at all (absolute paths); default: any. */
    programs: z.array(z.string().min(1)).optional(),
    /** Folders a confined run may write besides the workspace (a build tool's cache). */
    writable: z.array(
      z.string().min(1).refine((p) => p.startsWith("/"), { message: "must be an absolute path" }),
    ).optional(),
    /** Whether a confined run may use the network (default: no). */
    network: z.boolean().optional(),
  }).optional(),
});

export type Config = z.infer<typeof configSchema>;

export function parseConfig(text: string, source: string): Result<Config> {
  return parseJsonFile(text, configSchema, source);
}

/** Loads the user config; a missing file is an empty config, an unreadable or invalid one an error. */
export async function loadConfig(path: string, required: boolean): Promise<Result<Config>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound && !required) return ok({});
    return err(`cannot read the config file ${path}: ${(e as Error).message}`);
  }
  return parseConfig(text, path);
}

/** Whether a URL's host is loopback, the default meaning of a `local` endpoint. */
export function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    // A whole IPv4 literal: `127.0.0.1.evil.example` is a remote name, not loopback.
    return host === "localhost" || host === "::1" || /^127(\.[0-9]{1,3}){3}$/.test(host);
  } catch {
    return false;
  }
}
