/**
 * What context the server really serves. A local server often holds far fewer tokens than the
 * model was trained for (Ollama loads 4,096 unless told otherwise) and some of them drop the
 * oldest messages without a word when a conversation is longer; so on the session's first model
 * request Brave Bot asks the server itself, through each server's own API:
 * - llama.cpp: `GET /props` → `default_generation_settings.n_ctx` (per slot); a router answers
 *   `role: "router"` and `n_ctx: 0`, and `GET /props?model=NAME&autoload=false` gives the child's;
 * - Ollama: `GET /api/version` says it is Ollama; `POST /api/show` gives the trained length
 *   (`model_info["<arch>.context_length"]`) and a Modelfile's `num_ctx` (`parameters`);
 *   `GET /api/ps` the `context_length` of the loaded model;
 * - LM Studio: `GET /api/v0/models` → `loaded_context_length` of a loaded model, and
 *   `max_context_length` (the model's own); `GET /api/v1/models` → `loaded_instances[].config`;
 * - vLLM: `GET {endpoint}/models` → `max_model_len` on its model card;
 * - llama.cpp again, when its own routes are out of reach (a proxy that forwards only `/v1`):
 *   `GET {endpoint}/models` lists its models `owned_by: "llamacpp"`, a single-model server one
 *   entry with `meta.n_ctx`, a router each with its `status`.
 * Every probe is bounded (a short timeout, a small body), and junk of any kind is "did not say":
 * nothing a server sends here can crash or stall the session. test/fixtures/served/ holds each
 * shape, with the upstream file it comes from.
 */
import { readHead } from "../util/body.ts";

export type ServerKind = "ollama" | "llama.cpp" | "vllm" | "lmstudio";

/** What a server said about the context it serves one model with. */
export interface ServedContext {
  /** Which server answered; null when none of the four was recognised. */
  server: ServerKind | null;
  /** The tokens the server holds for this model now; null when it did not say. */
  tokens: number | null;
  /** Where `tokens` came from, in words for the person ("/api/ps", "Ollama's default"). */
  source: string;
  /** The length the model was trained for, when the server gave it. */
  trained: number | null;
  /**
   * The value may change once the model is loaded (Ollama or LM Studio before the model is
   * loaded, a llama.cpp router's model not started yet): asked again after the first reply.
   */
  provisional: boolean;
  /** The model as this server names it (Ollama's `qwen3` is `qwen3:latest`), when it said. */
  servedName: string | null;
  /** A single-model llama-server answers whatever model name it is sent. */
  anyName: boolean;
}

/**
 * One probe's answer: its HTTP status and JSON body (undefined when not JSON); a probe that got
 * no answer has status 0 and says why.
 */
export interface Probed {
  status: number;
  body: unknown;
  failed?: string;
}

export interface ProbeHttp {
  get(url: string): Promise<Probed>;
  post(url: string, body: unknown): Promise<Probed>;
}

/** Each probe's bound: a local server answers these in milliseconds. */
export const PROBE_TIMEOUT_MS = 3_000;
/** Ollama's `/api/show` carries the model's metadata; nothing needed here is larger. */
export const PROBE_MAX_BYTES = 1024 * 1024;
/** What Ollama loads a model with when neither the Modelfile nor the server says (envconfig). */
export const OLLAMA_DEFAULT_CONTEXT = 4_096;
/** A context length past this is not believed (the config's own bound). */
const MAX_TOKENS = 10_000_000;

/**
 * Probes over `fetch`, each stopped after `timeoutMs` and `maxBytes`; a failure of any kind is a
 * value. The token is sent when set (vLLM's `--api-key` guards `/v1/models` too).
 */
export function boundedHttp(options: {
  apiKey?: string;
  timeoutMs?: number;
  maxBytes?: number;
  fetch?: typeof fetch;
} = {}): ProbeHttp {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? PROBE_MAX_BYTES;
  const doFetch = options.fetch ?? fetch;
  const once = async (url: string, init: RequestInit): Promise<Probed> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
      if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
      const response = await doFetch(url, {
        ...init,
        headers,
        signal: controller.signal,
        redirect: "error",
      });
      const read = await readHead(response.body, maxBytes);
      if (read.failed) throw new Error("the answer broke off");
      if (read.over) return { status: 0, body: undefined, failed: "the answer was too large" };
      const text = read.text;
      let body: unknown = undefined;
      try {
        body = JSON.parse(text);
      } catch { /* not JSON: the status alone is known */ }
      return { status: response.status, body };
    } catch (e) {
      return {
        status: 0,
        body: undefined,
        failed: controller.signal.aborted ? "no answer in time" : String(e).slice(0, 200),
      };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    get: (url) => once(url, { method: "GET" }),
    post: (url, body) =>
      once(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }),
  };
}

/**
 * The server's root from the OpenAI-compatible base URL: `http://h:11434/v1` → `http://h:11434`.
 * Only a last `/v1` segment is taken off, so a server behind a path prefix keeps it.
 */
export function serverRoot(endpoint: string): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return endpoint.replace(/\/+$/, "");
  }
  const path = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return `${u.origin}${path}`;
}

/** Ollama's name for a model: `qwen3` is `qwen3:latest` (the tag defaults to `latest`). */
export function ollamaName(name: string): string {
  const n = name.trim().toLowerCase().replace(/^(registry\.ollama\.ai\/)?library\//, "");
  return /:[^/]+$/.test(n) ? n : `${n}:latest`;
}

/**
 * Asks the server behind `endpoint` what context it serves `model` with. Never throws: what is
 * not recognised is `server: null`, what was not said is `tokens: null`.
 */
export async function probeServedContext(
  endpoint: string,
  model: string,
  http: ProbeHttp,
): Promise<ServedContext> {
  try {
    return await probe(endpoint.replace(/\/+$/, ""), model, http);
  } catch {
    return unknown();
  }
}

async function probe(endpoint: string, model: string, http: ProbeHttp): Promise<ServedContext> {
  const root = serverRoot(endpoint);
  // The three servers with an API of their own are told apart in one round trip.
  const [props, version, lms] = await Promise.all([
    http.get(`${root}/props`),
    http.get(`${root}/api/version`),
    http.get(`${root}/api/v0/models`),
  ]);
  if (isLlamaProps(props) || isLlamaLoading(props)) return await llamaCpp(root, model, props, http);
  if (version.status === 200 && typeof field(version.body, "version") === "string") {
    return await ollama(root, model, http);
  }
  if (lms.status === 200 && isModelList(lms.body)) {
    const found = await lmStudio(root, model, lms.body, http);
    if (found) return found;
  }
  return await vllm(endpoint, model, http);
}

// --- llama.cpp: tools/server/server-context.cpp (props), tools/server/server-models.cpp (router)

function isLlamaProps(p: Probed): boolean {
  return p.status === 200 && isObject(field(p.body, "default_generation_settings"));
}

/** llama-server answers 503 `{"error":{"message":"Loading model"}}` before its model is up. */
function isLlamaLoading(p: Probed): boolean {
  const message = field(field(p.body, "error"), "message");
  return p.status === 503 && typeof message === "string" && /loading model/i.test(message);
}

async function llamaCpp(
  root: string,
  model: string,
  props: Probed,
  http: ProbeHttp,
): Promise<ServedContext> {
  const base = { ...unknown(), server: "llama.cpp" as const };
  if (isLlamaLoading(props)) {
    return { ...base, source: "llama-server is loading its model", provisional: true };
  }
  if (field(props.body, "role") === "router") {
    // A router serves many models, each in a child started on demand: ask about this one,
    // without starting it.
    const child = await http.get(
      `${root}/props?model=${encodeURIComponent(model)}&autoload=false`,
    );
    const n = tokensIn(field(field(child.body, "default_generation_settings"), "n_ctx"));
    if (child.status === 200 && n !== null) {
      return { ...base, tokens: n, source: "/props?model= (n_ctx of the router's model)" };
    }
    return {
      ...base,
      source: "the llama.cpp router has not loaded the model yet",
      provisional: true,
    };
  }
  const n = tokensIn(field(field(props.body, "default_generation_settings"), "n_ctx"));
  return {
    ...base,
    tokens: n,
    source: n === null ? "/props gave no n_ctx" : "/props (n_ctx per slot)",
    anyName: true,
  };
}

// --- Ollama: api/types.go (ShowResponse, ProcessModelResponse), server/routes.go
// (ShowHandler, GetModelInfo, PsHandler), envconfig/config.go (OLLAMA_CONTEXT_LENGTH).

async function ollama(root: string, model: string, http: ProbeHttp): Promise<ServedContext> {
  const [show, ps] = await Promise.all([
    http.post(`${root}/api/show`, { model }),
    http.get(`${root}/api/ps`),
  ]);
  const base = { ...unknown(), server: "ollama" as const };
  const wanted = ollamaName(model);
  const shown = show.status === 200 && isObject(show.body);
  const trained = shown ? trainedIn(field(show.body, "model_info")) : null;
  const numCtx = shown ? numCtxIn(field(show.body, "parameters")) : null;
  const models = field(ps.body, "models");
  const loaded = ps.status === 200 && Array.isArray(models)
    ? models.find((m) =>
      [field(m, "name"), field(m, "model")].some((n) =>
        typeof n === "string" && ollamaName(n) === wanted
      )
    )
    : undefined;
  const servedName = shown ? safeName(wanted) : null;
  const running = tokensIn(field(loaded, "context_length"));
  if (running !== null) {
    return { ...base, tokens: running, source: "/api/ps (the loaded model)", trained, servedName };
  }
  if (!shown) {
    // Not a model this server describes (or not Ollama after all): nothing is guessed.
    return { ...base, source: "/api/show did not describe the model", provisional: true };
  }
  // Not loaded yet: what it will be loaded with, asked again after the first reply.
  const planned = numCtx ?? OLLAMA_DEFAULT_CONTEXT;
  return {
    ...base,
    tokens: trained === null ? planned : Math.min(planned, trained),
    source: numCtx !== null
      ? "the Modelfile's num_ctx (the model is not loaded yet)"
      : `Ollama's default of ${OLLAMA_DEFAULT_CONTEXT} (the model is not loaded yet)`,
    trained,
    provisional: true,
    servedName,
  };
}

/** `model_info["<arch>.context_length"]`, the architecture named by `general.architecture`. */
function trainedIn(info: unknown): number | null {
  if (!isObject(info)) return null;
  const arch = info["general.architecture"];
  if (typeof arch === "string") {
    const n = tokensIn(info[`${arch}.context_length`]);
    if (n !== null) return n;
  }
  for (const [k, v] of Object.entries(info)) {
    if (k.endsWith(".context_length")) return tokensIn(v);
  }
  return null;
}

/** `parameters` is one `name value` a line (`%-30s %#v`): the Modelfile's `num_ctx`, if set. */
function numCtxIn(parameters: unknown): number | null {
  if (typeof parameters !== "string") return null;
  const m = /^num_ctx[ \t]+"?(\d{1,9})"?[ \t]*$/m.exec(parameters.slice(0, 100_000));
  return m ? tokensIn(Number(m[1])) : null;
}

// --- LM Studio: its documentation, 1_developer/2_rest/endpoints.mdx (REST API v0) and
// 1_developer/2_rest/list.md (v1 `loaded_instances`).

async function lmStudio(
  root: string,
  model: string,
  list: { data: unknown[] },
  http: ProbeHttp,
): Promise<ServedContext | null> {
  const entry = list.data.find((m) => field(m, "id") === model);
  const looksLms = list.data.some((m) =>
    field(m, "max_context_length") !== undefined || field(m, "state") !== undefined
  );
  if (!looksLms) return null;
  const base = { ...unknown(), server: "lmstudio" as const };
  if (!entry) return { ...base, source: "LM Studio does not list the model", provisional: true };
  const trained = tokensIn(field(entry, "max_context_length"));
  const loaded = tokensIn(field(entry, "loaded_context_length"));
  const servedName = safeName(model);
  if (loaded !== null) {
    return {
      ...base,
      tokens: loaded,
      source: "/api/v0/models (loaded_context_length)",
      trained,
      servedName,
    };
  }
  if (field(entry, "state") === "loaded") {
    // Older v0 answers lack the loaded length; the v1 API lists each loaded instance's config.
    const v1 = await http.get(`${root}/api/v1/models`);
    const models = field(v1.body, "models");
    const m = Array.isArray(models) ? models.find((x) => field(x, "key") === model) : undefined;
    const instances = field(m, "loaded_instances");
    const n = Array.isArray(instances)
      ? tokensIn(field(field(instances[0], "config"), "context_length"))
      : null;
    if (n !== null) {
      return {
        ...base,
        tokens: n,
        source: "/api/v1/models (the loaded instance)",
        trained,
        servedName,
      };
    }
  }
  return {
    ...base,
    source: "LM Studio has not loaded the model yet",
    trained,
    provisional: true,
    servedName,
  };
}

// --- vLLM: vllm/entrypoints/openai/protocol.py (ModelCard.max_model_len); and llama.cpp's own
// listing: tools/server/server-context.cpp (get_res_model_info), server-models.cpp (the router's).

async function vllm(endpoint: string, model: string, http: ProbeHttp): Promise<ServedContext> {
  const list = await http.get(`${endpoint}/models`);
  if (list.status !== 200 || !isModelList(list.body)) return unknown();
  const cards = list.body.data;
  const llama = llamaListing(cards);
  if (llama) return llama;
  const card = cards.find((m) => field(m, "id") === model);
  const isVllm = cards.some((m) =>
    field(m, "owned_by") === "vllm" || field(m, "max_model_len") !== undefined
  );
  if (!isVllm) return unknown();
  const n = tokensIn(field(card, "max_model_len"));
  return {
    ...unknown(),
    server: "vllm",
    tokens: n,
    source: n === null ? "vLLM does not list the model" : "/v1/models (max_model_len)",
    trained: null,
    servedName: card ? safeName(model) : null,
  };
}

/**
 * llama-server known by its `/v1/models` alone, when `/props` did not answer as it does: every
 * entry `owned_by: "llamacpp"`. One entry without a router's `status` is a single-model server,
 * which answers whatever model name it is sent (its name is its file's without `--alias`); its
 * `meta.n_ctx` is the per-slot context. A router's entries each carry a `status`. Null when the
 * listing is not llama.cpp's.
 */
function llamaListing(cards: unknown[]): ServedContext | null {
  if (cards.length === 0 || !cards.every((m) => field(m, "owned_by") === "llamacpp")) return null;
  const base = { ...unknown(), server: "llama.cpp" as const };
  if (cards.length > 1 || field(cards[0], "status") !== undefined) {
    return { ...base, source: "/v1/models (a router's list; /props did not answer)" };
  }
  const meta = field(cards[0], "meta");
  const n = tokensIn(field(meta, "n_ctx"));
  return {
    ...base,
    tokens: n,
    trained: tokensIn(field(meta, "n_ctx_train")),
    source: n === null
      ? "/v1/models gave no n_ctx (/props did not answer)"
      : "/v1/models (meta.n_ctx per slot; /props did not answer)",
    anyName: true,
  };
}

/**
 * Whether to ask again after the session's first reply: the answer was provisional, or the server
 * loads models on demand (Ollama, LM Studio) and may have loaded this one again for that request
 * with other settings than it had when it was first asked (the first ask runs alongside it).
 */
export function askAgainAfterReply(served: ServedContext): boolean {
  return served.provisional || served.server === "ollama" || served.server === "lmstudio";
}

// --- what the person is told

const SERVER_NAMES: Record<ServerKind, string> = {
  "ollama": "Ollama",
  "llama.cpp": "llama-server",
  "vllm": "vLLM",
  "lmstudio": "LM Studio",
};

export function serverName(server: ServerKind | null): string {
  return server === null ? "the server" : SERVER_NAMES[server];
}

/** How to give the model a larger context on this server. */
export function contextFix(server: ServerKind | null): string {
  switch (server) {
    case "ollama":
      return "start Ollama with a larger context (OLLAMA_CONTEXT_LENGTH=32768 ollama serve), or " +
        "set it for the model in a Modelfile (PARAMETER num_ctx 32768, then ollama create)";
    case "llama.cpp":
      return "start llama-server with a larger -c (--ctx-size), e.g. -c 32768; with --parallel N " +
        "each slot gets a share of it";
    case "vllm":
      return "start vLLM with a larger --max-model-len";
    case "lmstudio":
      return "load the model with a larger context length (lms load MODEL --context-length 32768, " +
        "or the load settings in the app)";
    default:
      return 'give the server a larger context, or set "contextWindow" in the config to what it serves';
  }
}

/** Why a reply's prompt count says the server cut the conversation, or null when it did not. */
export type Truncation = "at_limit" | "fell";

/**
 * Whether the server truncated the request it just answered: its `promptTokens` reached 95% of
 * the context it serves, or grew by less than half of what was added since the previous request
 * (`added`, estimated) although messages were only added — fewer tokens than before is the plain
 * case; a server that drops the oldest messages to make room for the newest also shows as a count
 * that stands still while the conversation grows. `previous` is null when anything was compacted,
 * cleared or shortened in between.
 */
export function serverTruncated(sample: {
  promptTokens: number;
  served: number | null;
  previous: number | null;
  /** The estimated tokens of the messages added since the previous request (0: not known). */
  added?: number;
}): Truncation | null {
  const { promptTokens, served, previous } = sample;
  const added = Number.isFinite(sample.added) && sample.added! > 0 ? sample.added! : 0;
  if (!Number.isFinite(promptTokens) || promptTokens <= 0) return null;
  if (served !== null && served > 0 && promptTokens >= served * 0.95) return "at_limit";
  if (previous !== null && previous > 0 && promptTokens - previous < added / 2) return "fell";
  if (previous !== null && previous > 0 && promptTokens < previous) return "fell";
  return null;
}

/** What the person is told, once a session, when the server truncated the conversation. */
export function truncationNotice(
  why: Truncation,
  promptTokens: number,
  served: ServedContext | null,
): string {
  const who = serverName(served?.server ?? null);
  const what = why === "at_limit"
    ? `the server counted ${promptTokens} prompt tokens, at or over the ${served?.tokens} it serves`
    : `the server counted ${promptTokens} prompt tokens, fewer than the request before and the ` +
      "messages added since come to";
  return `${who} cut the conversation to fit its context (${what}): the oldest messages, and ` +
    `with them the task, may be lost to the planner. To fix: ${contextFix(served?.server ?? null)}`;
}

// --- reading untrusted JSON

function unknown(): ServedContext {
  return {
    server: null,
    tokens: null,
    source: "the server did not say",
    trained: null,
    provisional: false,
    servedName: null,
    anyName: false,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function field(v: unknown, key: string): unknown {
  return isObject(v) && Object.hasOwn(v, key) ? v[key] : undefined;
}

function isModelList(v: unknown): v is { data: unknown[] } {
  return Array.isArray(field(v, "data"));
}

/** A context length as a server states it: a whole number in a believable range, else null. */
function tokensIn(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v > 0 && v <= MAX_TOKENS ? v : null;
}

/** A model name fit to show: the characters model names are made of, else nothing. */
function safeName(name: string): string | null {
  return /^[\w.:/@+-]{1,160}$/.test(name) ? name : null;
}
