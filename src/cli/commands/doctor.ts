/**
 * `bravebot doctor` (docs/cli.md#commands): checks, one line each, what a first run needs — the
 * endpoint answers, the model is there, tool calling works, the second wall stands, and what
 * confines run stages. Exit 0 only when every essential check passed. It is the one command that
 * talks to the endpoint without being asked a question, so it says exactly what it sent.
 */
import { dirname, join } from "node:path";
import pc from "picocolors";
import type { GlobalOptions } from "../global_options.ts";
import { resolveGlobals } from "../global_options.ts";
import type { Settings } from "../../state/settings.ts";
import { EXIT } from "../exit_codes.ts";
import { apiKeyFromEnv, OpenAIModelClient } from "../../model/client.ts";
import { ModelError } from "../../model/failure.ts";
import { EffectWorker, kernelWallStatus } from "../../worker/client.ts";
import { sandboxStatus } from "../../policy/sandbox.ts";
import { messageOf } from "../../util/result.ts";
import { isWithin } from "../../policy/workspace.ts";
import { escapeForScreen } from "../../util/escape.ts";
import { printOut } from "../../util/output.ts";
import { plural } from "../../util/plural.ts";
import {
  boundedHttp,
  contextFix,
  probeServedContext,
  type ServedContext,
  type ServerKind,
  serverName,
} from "../../model/served_context.ts";
import { findModel, listModels, missingHint } from "../../model/served_models.ts";
import { effectiveWindow } from "../../util/window.ts";
import { findTextCalls } from "../../driver/text_calls.ts";

export interface Check {
  name: string;
  ok: boolean;
  /** Whether a failure makes doctor exit non-zero. */
  essential: boolean;
  detail: string;
  /** Passed, with something to know (shown as `warn`). */
  warn?: boolean;
}

const TOOL_TIMEOUT_MS = 120_000;

/**
 * An OpenAI-compatible base URL that lacks its `/v1` (`http://127.0.0.1:11434`): Ollama, vLLM and
 * LM Studio answer the OpenAI API only under `/v1`, so `GET /models` misses there. When
 * `URL/v1/models` lists models, the fix is that URL; null when it does not, or `/v1` is there.
 */
async function withV1(url: string, apiKey: string | undefined): Promise<string | null> {
  const base = url.replace(/\/+$/, "");
  let path: string;
  try {
    path = new URL(base).pathname;
  } catch {
    return null;
  }
  if (/\/v1$/.test(path)) return null;
  const listed = await listModels(`${base}/v1`, apiKey);
  return listed.ok ? `${base}/v1` : null;
}

/** The window a session will use against this server, and where each number comes from. */
function contextCheck(prefix: string, served: ServedContext, configured: number): Check {
  const name = `${prefix}context window`;
  const who = serverName(served.server);
  if (served.server === null) {
    return {
      name,
      ok: true,
      essential: false,
      detail: `not Ollama, llama.cpp, vLLM or LM Studio: the server did not say what context it ` +
        `serves; the config's ${configured} tokens are used (if the server holds fewer, it may ` +
        "cut the conversation: the session says so when its counts show it)",
    };
  }
  if (served.tokens === null) {
    return {
      name,
      ok: true,
      essential: false,
      detail: `${who} found; ${served.source}: the window is learned on the first request ` +
        `(the config says ${configured})`,
    };
  }
  const window = effectiveWindow(configured, served.tokens);
  const trained = served.trained ? `; the model was trained for ${served.trained}` : "";
  return {
    name,
    ok: true,
    warn: window.by === "server",
    essential: false,
    detail: `${who} found; it serves ${served.tokens} tokens (${served.source}${trained}); ` +
      `the window used is ${window.tokens} (config: ${configured})` +
      (window.by === "server" ? `. For more: ${contextFix(served.server)}` : "") +
      (served.provisional ? "; asked again once the model is loaded" : ""),
  };
}

async function endpointChecks(
  role: "planner" | "processor",
  url: string,
  model: string | undefined,
  apiKey: string | undefined,
  configured: number,
): Promise<{ checks: Check[]; usable: boolean; served: ServedContext | null }> {
  const prefix = role === "planner" ? "" : "processor ";
  const checks: Check[] = [];
  const listed = await listModels(url, apiKey);
  const fixed = !listed.ok && listed.reached ? await withV1(url, apiKey) : null;
  const option = role === "planner" ? "--endpoint" : "--processor-endpoint";
  const field = role === "planner" ? "endpoint" : "processorEndpoint";
  checks.push({
    name: `${prefix}endpoint reachable`,
    ok: listed.ok,
    essential: true,
    detail: listed.ok
      ? `${url} answered GET /models`
      : fixed !== null
      ? `${escapeForScreen(url)} lacks /v1: ${listed.why}, and ${escapeForScreen(fixed)}/models ` +
        `lists the server's models; pass ${option} ${escapeForScreen(fixed)} (or set ` +
        `"${field}" to it in the config)`
      : `${url}: ${listed.why}${
        !listed.ok && !listed.reached
          ? " — is the server running (ollama serve, llama-server) and is --endpoint right?"
          : ""
      }`,
  });
  if (!model) {
    checks.push({
      name: `${prefix}model present`,
      ok: false,
      essential: true,
      detail: 'no model is configured: pass --model NAME or set "model" in the config',
    });
    return { checks, usable: false, served: null };
  }
  if (!listed.ok) {
    checks.push({
      name: `${prefix}model present`,
      ok: false,
      essential: true,
      detail: `not checked: the endpoint did not list its models`,
    });
    return { checks, usable: false, served: null };
  }
  // Which server this is, and what it serves the model with: its own API, bounded probes.
  const found = await findModel(url, model, listed.ids, apiKey);
  const { as, served } = found;
  // The server's names, made safe for the terminal.
  const available = escapeForScreen(listed.ids.slice(0, 10).join(", ").slice(0, 600)) || "none";
  const shown = escapeForScreen(model);
  // A single-model llama-server answers whatever name it is sent.
  const present = as !== null || found.anyName;
  checks.push({
    name: `${prefix}model present`,
    ok: present,
    essential: true,
    detail: as !== null
      ? `${shown} is served${as !== model ? ` (as ${escapeForScreen(as)})` : ""}`
      : found.anyName
      ? `llama-server serves one model (${available}) and answers to any name it is sent, ` +
        `${shown} included; start it with --alias ${shown} to list it by that name`
      : `${shown} is not among the endpoint's models (${available})` +
        (found.near !== null ? `; did you mean ${escapeForScreen(found.near)}?` : "") +
        `; ${escapeForScreen(missingHint(model, served.server))}`,
  });
  checks.push(contextCheck(prefix, served, configured));
  return { checks, usable: present, served };
}

/** What makes this server call tools natively, for a model that wrote its call as text. */
function toolHint(server: ServerKind | null): string {
  switch (server) {
    case "llama.cpp":
      return "start llama-server with --jinja (and a chat template with tools)";
    case "vllm":
      return "start vLLM with --enable-auto-tool-choice --tool-call-parser NAME (hermes, " +
        "llama3_json, mistral, qwen3_coder, … for the model)";
    case "ollama":
      return "use a model whose template supports tools (ollama show MODEL lists 'tools' " +
        "among its capabilities)";
    case "lmstudio":
      return "use a model LM Studio marks as trained for tool use";
    default:
      return "use a model with tool support (llama-server needs --jinja)";
  }
}

async function toolCallCheck(
  settings: Settings,
  apiKey: string | undefined,
  server: ServerKind | null,
): Promise<Check> {
  const name = "tool calling works";
  const client = new OpenAIModelClient({
    endpoint: settings.planner.url,
    model: settings.planner.model!,
    timeoutMs: Math.min(settings.requestTimeoutMs, TOOL_TIMEOUT_MS),
    apiKey,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, totalMs: 0 },
  });
  try {
    const reply = await client.complete({
      messages: [
        { role: "system", content: "You are being tested. Answer only by calling a tool." },
        { role: "user", content: 'Call the tool "ping" with {"word": "ok"}.' },
      ],
      tools: [{
        type: "function",
        function: {
          name: "ping",
          description: "Answers the test.",
          parameters: {
            type: "object",
            properties: { word: { type: "string" } },
            required: ["word"],
          },
        },
      }],
    });
    const call = reply.toolCalls.find((c) => c.function.name === "ping");
    if (call) {
      return {
        name,
        ok: true,
        essential: true,
        detail: "one request with one tool: the model called it",
      };
    }
    // A call written as text is recovered by the driver (text_calls.ts): it works, slower.
    const inText = reply.toolCalls.length === 0
      ? findTextCalls(reply.text).calls.find((c) => c.name === "ping")
      : undefined;
    if (inText) {
      return {
        name,
        ok: true,
        warn: true,
        essential: true,
        detail: "works, tool calls recovered from text: the model wrote its call in its " +
          `answer instead of as a tool call; for native calls, ${toolHint(server)}`,
      };
    }
    return {
      name,
      ok: false,
      essential: true,
      detail: reply.toolCalls.length
        ? `the model called ${reply.toolCalls.map((c) => c.function.name).join(", ")}, not ping`
        : `the model answered in text instead of calling the tool: ${toolHint(server)}`,
    };
  } catch (e) {
    // The doctor's report is the person's: it may carry what the endpoint said.
    const detail = e instanceof ModelError ? e.forPerson("planner") : messageOf(e);
    return { name, ok: false, essential: true, detail };
  }
}

/**
 * Which wall contains the worker's file operations (docs/contract.md §13.2, §13.3), and why not the
 * kernel's.
 */
function wallLine(worker: EffectWorker): string {
  if (worker.wall === "kernel") {
    return "wall: kernel (file operations in a bwrap child process that sees only the workspace and scratch folder)";
  }
  return `wall: process (file operations in an in-process worker; the kernel wall is not in use: ${kernelWallStatus().why})`;
}

/** Whether `path` is `dir` or lies under it (both real paths). */
/**
 * A fresh, empty directory for the write probe that is really outside the worker's writable
 * places: `$TMPDIR` may be the workspace or lie inside it (then a temporary directory would be
 * writable, and the wall would look broken). Tried in order: `$TMPDIR`, /tmp, /var/tmp, the
 * workspace's parent. Null when every one is inside (a workspace at `/`).
 */
export async function outsideProbeDir(
  workspace: string,
  scratch: string,
): Promise<string | null> {
  for (const dir of [undefined, "/tmp", "/var/tmp", dirname(workspace)]) {
    let made: string;
    try {
      made = await Deno.realPath(
        await Deno.makeTempDir({ dir, prefix: "bravebot-doctor-outside-" }),
      );
    } catch {
      continue;
    }
    if (!isWithin(workspace, made) && !isWithin(scratch, made)) return made;
    await Deno.remove(made, { recursive: true }).catch(() => {});
  }
  return null;
}

/** Asks the effect worker, with the session's narrowed permissions, to do what it must not. */
async function wallCheck(workspace: string): Promise<Check> {
  const ws = await Deno.realPath(workspace);
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bravebot-doctor-" }));
  const outside = await outsideProbeDir(ws, scratch);
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false });
  try {
    const probes = [
      { what: "read" as const, target: "/etc/passwd", say: "read /etc/passwd" },
      ...(outside
        ? [{ what: "write" as const, target: join(outside, "probe.txt"), say: "write outside" }]
        : []),
      { what: "net" as const, target: "127.0.0.1:9", say: "open a socket" },
      { what: "env" as const, target: "HOME", say: "read $HOME" },
    ];
    const allowed: string[] = [];
    for (const p of probes) {
      const r = await worker.call({ op: "probe", what: p.what, target: p.target });
      if (!r.ok || !r.value.refused) {
        allowed.push(`${p.say} (${r.ok ? r.value.error ?? "allowed" : r.error.message})`);
      }
    }
    return {
      name: "permissions",
      ok: allowed.length === 0,
      essential: true,
      detail: (allowed.length === 0
        ? "the effect worker may not read /etc/passwd, write outside the workspace, open a socket or read the environment: the second wall stands"
        : `the effect worker was NOT stopped from: ${allowed.join("; ")}`) +
        (outside ? "" : "; writing outside not checked: no directory outside the workspace") +
        `; ${wallLine(worker)}`,
    };
  } catch (e) {
    return { name: "permissions", ok: false, essential: true, detail: messageOf(e) };
  } finally {
    await worker.terminate();
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
    if (outside) await Deno.remove(outside, { recursive: true }).catch(() => {});
  }
}

/** Runs every check; the order is the order a person fixes things in. */
export async function runDoctor(workspace: string, settings: Settings): Promise<Check[]> {
  const apiKey = apiKeyFromEnv();
  const checks: Check[] = [];
  const planner = await endpointChecks(
    "planner",
    settings.planner.url,
    settings.planner.model,
    apiKey,
    settings.contextWindow,
  );
  checks.push(...planner.checks);
  if (planner.usable) {
    checks.push(await toolCallCheck(settings, apiKey, planner.served?.server ?? null));
    // The tool-calling request loaded the model: what it was loaded with is known now.
    if (planner.served?.provisional && settings.planner.model) {
      const now = await probeServedContext(
        settings.planner.url,
        settings.planner.model,
        boundedHttp({ apiKey }),
      );
      const at = checks.findIndex((c) => c.name === "context window");
      if (at >= 0) checks[at] = contextCheck("", now, settings.contextWindow);
    }
  } else {
    checks.push({
      name: "tool calling works",
      ok: false,
      essential: true,
      detail: "not checked: the endpoint or the model is not available",
    });
  }
  const sameProcessor = settings.processor.url === settings.planner.url &&
    settings.processor.model === settings.planner.model;
  if (!sameProcessor) {
    checks.push(
      ...(await endpointChecks(
        "processor",
        settings.processor.url,
        settings.processor.model,
        apiKey,
        settings.contextWindow,
      ))
        .checks,
    );
  }
  checks.push(await wallCheck(workspace));
  try {
    // Probed over this workspace: who owns it decides which capabilities a stage keeps.
    const s = await sandboxStatus(settings, undefined, workspace);
    checks.push({
      name: "sandbox",
      ok: s.configured === "none" || s.inUse,
      essential: s.configured === "bwrap",
      detail: s.detail,
    });
  } catch (e) {
    checks.push({ name: "sandbox", ok: false, essential: false, detail: messageOf(e) });
  }
  return checks;
}

export function formatCheck(c: Check): string {
  const mark = c.ok && !c.warn
    ? pc.green("ok  ")
    : c.ok || !c.essential
    ? pc.yellow("warn")
    : pc.red("FAIL");
  return `${mark}  ${c.name.padEnd(28)} ${c.detail}`;
}

export async function doctorCommand(options: GlobalOptions): Promise<number> {
  const g = await resolveGlobals(options);
  // The ok/warn/FAIL marks are doctor's own colours: the writer lets those (and nothing else) pass.
  const print = (line: string) => printOut(line, { colour: true });
  print(
    `config: ${g.configPath}${
      Object.keys(g.config).length ? "" : " (not found or empty: defaults)"
    }`,
  );
  print(`workspace: ${g.workspaceDir}`);
  const checks = await runDoctor(g.workspaceDir, g.settings);
  for (const c of checks) print(formatCheck(c));
  const failed = checks.filter((c) => !c.ok && c.essential);
  print(
    failed.length === 0
      ? "all essential checks passed"
      : `${plural(failed.length, "essential check")} failed`,
  );
  return failed.length === 0 ? EXIT.ok : EXIT.failure;
}
