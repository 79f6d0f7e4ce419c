/**
 * Which models a server lists, and whether a name is one of them as that server means names:
 * `doctor`'s "model present" and a session's `/model NAME` ask the same way (issue 25). Ollama
 * takes `qwen3` for `qwen3:latest`; a single-model llama-server started without `--alias`
 * answers any name; vLLM, LM Studio and a llama-server router answer only the names they list.
 */
import { nearestName } from "../util/edit_distance.ts";
import {
  boundedHttp,
  ollamaName,
  probeServedContext,
  type ServedContext,
  type ServerKind,
} from "./served_context.ts";

/** How long a listing is waited for: a local server answers in milliseconds, a cold one slower. */
export const LIST_TIMEOUT_MS = 10_000;

export type Listing =
  | { ok: true; ids: string[] }
  /** `reached`: the server answered, with something other than a list. */
  | { ok: false; why: string; reached: boolean };

/** `GET URL/models`, bounded in time and size; the names it lists (`data[].id`). */
export async function listModels(url: string, apiKey: string | undefined): Promise<Listing> {
  const http = boundedHttp({ apiKey, timeoutMs: LIST_TIMEOUT_MS });
  const answer = await http.get(`${url.replace(/\/+$/, "")}/models`);
  if (answer.status === 0) {
    return { ok: false, reached: false, why: answer.failed ?? "no answer" };
  }
  if (answer.status < 200 || answer.status >= 300) {
    const hint = answer.status === 401 || answer.status === 403
      ? "; set BRAVEBOT_API_KEY if the endpoint needs a token"
      : "";
    return { ok: false, reached: true, why: `GET /models answered HTTP ${answer.status}${hint}` };
  }
  const data = answer.body as { data?: unknown } | undefined;
  if (typeof data !== "object" || data === null) {
    return { ok: false, reached: true, why: "GET /models did not answer with JSON" };
  }
  const ids = (Array.isArray(data.data) ? data.data : [])
    .map((m) => (m as { id?: unknown } | null)?.id)
    .filter((id): id is string => typeof id === "string");
  return { ok: true, ids };
}

/** The listed name that is the model, as this server means names, or null. */
export function listedAs(ids: string[], model: string, server: ServerKind | null): string | null {
  if (ids.includes(model)) return model;
  if (server === "ollama") return ids.find((id) => ollamaName(id) === ollamaName(model)) ?? null;
  return null;
}

/** How to make the model available on the server found (never `ollama pull` for all of them). */
export function missingHint(model: string, server: ServerKind | null): string {
  switch (server) {
    case "ollama":
      return `pull it (ollama pull ${model}) or pass --model with a listed name`;
    case "llama.cpp":
      return "add it to the router's --models-dir or a preset, or pass --model with a listed name";
    case "vllm":
      return `start vLLM with --served-model-name ${model}, or pass --model with the listed name`;
    case "lmstudio":
      return `download and load it (lms get ${model}; lms load ${model}), or pass --model with a listed name`;
    default:
      return "pass --model with a listed name";
  }
}

export interface ModelFound {
  /** The listed name the model is (`qwen3:latest` for `qwen3` on Ollama), or null. */
  as: string | null;
  /** The server answers whatever name it is sent (a llama-server without `--alias`). */
  anyName: boolean;
  /** A listed name the model is one slip from, when it is not served. */
  near: string | null;
  /** What the server is and serves (its own API, bounded probes). */
  served: ServedContext;
}

/** Whether `model` is served by the server at `url`, whose listing is `ids`. */
export async function findModel(
  url: string,
  model: string,
  ids: string[],
  apiKey: string | undefined,
): Promise<ModelFound> {
  const served = await probeServedContext(url, model, boundedHttp({ apiKey }));
  const as = listedAs(ids, model, served.server);
  const near = as === null && !served.anyName ? nearestName(model, ids) : null;
  return { as, anyName: served.anyName, near, served };
}
