/**
 * The workspace's `.bravebot/config.json` (docs/contract.md §5.4; docs/config.md): written by
 * whoever wrote the repository, so it may only narrow what the user config allows — more private
 * patterns, lower timeouts and limits, the sandbox forced on, fewer programs. It can never trust,
 * vouch, approve, or change an endpoint or a model; any such field is an error that names it.
 */
import { SANDBOX_LEVELS } from "./config.ts";
import { join } from "node:path";
import { z } from "zod";
import { escapeForScreen } from "../util/escape.ts";
import { parseJsonFile } from "../util/json_schema.ts";
import { readRegularFile } from "../util/regular_file.ts";
import { err, ok, type Result } from "../util/result.ts";
import type { Limits, Settings } from "./settings.ts";

export const WORKSPACE_CONFIG = ".bravebot/config.json";
/**
 * The most a workspace config may hold (docs/decisions.md): a real one is a few hundred bytes;
 * the bound is what keeps a hostile one from filling memory before anything else runs.
 */
export const MAX_WORKSPACE_CONFIG_BYTES = 256 * 1024;

const positive = z.number().int().min(1);

/** The limits a workspace may lower (every other limit is the user's alone). */
const LOWERABLE = [
  "readLines",
  "readBytes",
  "lineChars",
  "listEntries",
  "searchLines",
  "searchLineChars",
  "searchFileBytes",
  "runMaxTimeoutMs",
  "shownOutputChars",
  "refOutputBytes",
  "askQuestions",
  "toolCallsPerReply",
] as const satisfies readonly (keyof Limits)[];

export const workspaceConfigSchema = z.strictObject({
  privatePatterns: z.array(z.string().min(1)).optional(),
  contextWindow: z.number().int().min(1024).optional(),
  maxTurns: positive.optional(),
  timeouts: z.strictObject({
    requestMs: z.number().int().min(1000).optional(),
    runMs: z.number().int().min(100).optional(),
  }).optional(),
  limits: z.strictObject(
    Object.fromEntries(LOWERABLE.map((k) => [k, positive.optional()])) as Record<
      typeof LOWERABLE[number],
      z.ZodOptional<typeof positive>
    >,
  ).optional(),
  run: z.strictObject({
    sandbox: z.enum(SANDBOX_LEVELS).optional(),
    programs: z.array(z.string().min(1)).optional(),
  }).optional(),
  /** Only `false`: a workspace may stop private bytes going to an endpoint, never allow it. */
  endpointLocal: z.literal(false).optional(),
  processorEndpointLocal: z.literal(false).optional(),
});

export type WorkspaceConfig = z.infer<typeof workspaceConfigSchema>;

/** Fields a workspace may never set, with the reason the person is told. */
const FORBIDDEN: Record<string, string> = {
  endpoint: "a workspace config may not change endpoints; only the user config can",
  processorEndpoint: "a workspace config may not change endpoints; only the user config can",
  model: "a workspace config may not change the model; only the user config can",
  processorModel: "a workspace config may not change the model; only the user config can",
  trust: "a workspace config can never trust; use bravebot trust",
  untrust: "a workspace config cannot change the trust map; use bravebot trust",
  vouch: "a workspace config can never vouch; vouches are made at the run approval",
  vouches: "a workspace config can never vouch; vouches are made at the run approval",
  writes: "a workspace config can never approve writes",
  approvals: "a workspace config can never approve anything",
  approve: "a workspace config can never approve anything",
  readOutput: "a workspace config can never approve anything",
  quarantinedRead: "a workspace config can never answer the quarantined-read prompt",
};

/**
 * A field a workspace may never set, named with its reason before the schema would call it
 * unknown; null when there is none.
 */
function forbiddenField(data: unknown): string | null {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return null;
  for (const key of Object.keys(data)) {
    if (key in FORBIDDEN) return `${key}: ${FORBIDDEN[key]}`;
  }
  const run = (data as { run?: unknown }).run;
  if (run !== null && typeof run === "object") {
    for (const key of ["writable", "network"]) {
      if (key in run) {
        return `run.${key}: a workspace config may not widen what a run may reach; ` +
          "only the user config can";
      }
    }
  }
  return null;
}

export function parseWorkspaceConfig(text: string, source: string): Result<WorkspaceConfig> {
  // The parser's message quotes the text around the error: the repository's bytes, escaped.
  return parseJsonFile(text, workspaceConfigSchema, source, {
    precheck: forbiddenField,
    hint: "a workspace config may only narrow the user config: privatePatterns, contextWindow, " +
      "maxTurns, timeouts, limits, run, endpointLocal: false",
  });
}

/**
 * Reads the workspace's config; a missing file is no narrowing at all. It is repository text
 * read on the main thread before any worker exists, so it is read as util/regular_file.ts
 * reads: a link (even to a regular file), a FIFO, a device or a file past
 * {@link MAX_WORKSPACE_CONFIG_BYTES} is refused, and the start goes no further.
 */
export function loadWorkspaceConfig(workspaceDir: string): Result<WorkspaceConfig | null> {
  const path = join(workspaceDir, WORKSPACE_CONFIG);
  const read = readRegularFile(workspaceDir, WORKSPACE_CONFIG, MAX_WORKSPACE_CONFIG_BYTES);
  if (read.kind === "missing") return ok(null);
  if (read.kind === "refused") return err(`${path} ${read.why}`);
  return parseWorkspaceConfig(new TextDecoder().decode(read.bytes), path);
}

function lower(field: string, value: number | undefined, current: number): Result<number> {
  if (value === undefined) return ok(current);
  if (value > current) {
    return err(
      `${field}: ${value} is above the user's ${current}; a workspace config may only lower it`,
    );
  }
  return ok(value);
}

/**
 * Settings narrowed by a workspace config, or an error naming the field that tried to widen
 * them. The user's settings are never changed in place.
 */
export function narrowSettings(
  settings: Settings,
  ws: WorkspaceConfig | null,
  source = WORKSPACE_CONFIG,
): Result<Settings> {
  if (!ws) return ok(settings);
  const fail = (e: string) => err<Settings>(`${source}: ${e}`);
  const limits: Limits = { ...settings.limits };
  for (const key of LOWERABLE) {
    const r = lower(`limits.${key}`, ws.limits?.[key], limits[key]);
    if (!r.ok) return fail(r.error);
    limits[key] = r.value;
  }
  const runMs = lower("timeouts.runMs", ws.timeouts?.runMs, limits.runTimeoutMs);
  if (!runMs.ok) return fail(runMs.error);
  limits.runTimeoutMs = Math.min(runMs.value, limits.runMaxTimeoutMs);
  const requestMs = lower("timeouts.requestMs", ws.timeouts?.requestMs, settings.requestTimeoutMs);
  if (!requestMs.ok) return fail(requestMs.error);
  const contextWindow = lower("contextWindow", ws.contextWindow, settings.contextWindow);
  if (!contextWindow.ok) return fail(contextWindow.error);
  const maxTurns = lower("maxTurns", ws.maxTurns, settings.maxTurns);
  if (!maxTurns.ok) return fail(maxTurns.error);

  let sandbox = settings.sandbox;
  if (ws.run?.sandbox !== undefined) {
    const level = (l: string) => SANDBOX_LEVELS.indexOf(l as typeof SANDBOX_LEVELS[number]);
    if (level(ws.run.sandbox) < level(settings.sandbox)) {
      return fail(
        `run.sandbox: "${ws.run.sandbox}" is less confined than the user's "${settings.sandbox}"; ` +
          "a workspace config may only confine more (none < auto < bwrap)",
      );
    }
    sandbox = ws.run.sandbox;
  }
  let runPrograms = settings.runPrograms;
  if (ws.run?.programs) {
    if (runPrograms !== null) {
      const extra = ws.run.programs.find((p) => !runPrograms!.includes(p));
      if (extra !== undefined) {
        return fail(
          `run.programs: '${
            escapeForScreen(extra)
          }' is not allowed by the user config; a workspace config may ` +
            "only leave programs out",
        );
      }
    }
    runPrograms = [...ws.run.programs];
  }
  return ok({
    ...settings,
    planner: { ...settings.planner, local: settings.planner.local && ws.endpointLocal !== false },
    processor: {
      ...settings.processor,
      local: settings.processor.local && ws.processorEndpointLocal !== false,
    },
    contextWindow: contextWindow.value,
    requestTimeoutMs: requestMs.value,
    maxTurns: maxTurns.value,
    limits,
    privatePatterns: [...settings.privatePatterns, ...(ws.privatePatterns ?? [])],
    sandbox,
    runPrograms,
  });
}
