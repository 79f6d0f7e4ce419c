/**
 * A failed model call as a value (docs/contract.md §3.5). An endpoint's error body, a reply that is
 * not JSON and a stream's error event are untrusted text that may quote the request — the very
 * bytes a processor was given. So a failure is split in two here, and only here:
 * - `kind` and a few facts Brave Bot itself knows (an HTTP status, a count of tries, a configured
 *   limit or model name) are worded by `describeFailure` — the only text the planner is given;
 * - `detail` holds the endpoint's own words (or a local cause), for the person's screen only.
 * `describeFailure` takes no string from the endpoint, so no endpoint byte can reach its words.
 *
 * The person is also told what to do about it: `serverHint` reads the endpoint's words and picks
 * one of Brave Bot's own sentences ("start llama-server with --jinja"). Chosen by untrusted
 * bytes, it is shown to the person only, never to the planner.
 */

export type ModelFailureKind =
  | "unreachable" // connection errors, 429 or 5xx that outlasted the retries
  | "loading" // the server kept saying it is loading the model until `timeouts.loadMs`
  | "http" // a 4xx other than 429, or a 5xx whose body names a cause retrying cannot fix
  | "timeout" // no complete reply within the request timeout
  | "not_json" // the reply (a whole body or a streamed chunk) is not JSON
  | "endpoint_error" // the endpoint reported an error in place of a reply (a body, an SSE event)
  | "malformed" // the reply is JSON, but not the shape the protocol says
  | "aborted" // the person stopped it
  | "internal"; // the call failed inside Brave Bot (the model worker stopped)

/** Facts Brave Bot knows without reading the endpoint's words; all the planner may be told. */
export interface FailureFacts {
  /** The HTTP status of the answer (for `unreachable`: of the last try, when it was answered). */
  status?: number;
  /** Nothing was listening: the last try's connection was refused (a server not started). */
  refused?: boolean;
  attempts?: number;
  seconds?: number;
  limitSeconds?: number;
  /** The configured model name (the person's own setting). */
  model?: string;
}

/** What travels between the model worker and the main thread: plain data. */
export interface FailureData {
  kind: ModelFailureKind;
  facts: FailureFacts;
  detail: string | null;
  endpoint: string;
}

/** Which endpoint failed, as the sentence names it. */
export type EndpointRole = "planner" | "processor" | "model";

/** What to check when nothing listens at the endpoint: the usual servers, by the command. */
const NOT_RUNNING = "is the server running (ollama serve, or llama-server -m MODEL.gguf --jinja) " +
  'and is --endpoint (or "endpoint" in the config) right?';

/** A count or a time Brave Bot measured, never anything else. */
function num(x: number | undefined): number {
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
}

/** "5 tries over 12 s". */
function triesOver(facts: FailureFacts): string {
  const tries = num(facts.attempts);
  return `${tries} ${tries === 1 ? "try" : "tries"} over ${Math.round(num(facts.seconds))} s`;
}

/** What an HTTP status alone suggests to check (empty when it suggests nothing). */
function statusGuess(facts: FailureFacts): string {
  const status = num(facts.status);
  if (status === 401 || status === 403) return "; set BRAVEBOT_API_KEY if the server needs a token";
  if (status === 404) {
    const model = facts.model ? ` '${facts.model.slice(0, 100)}'` : "";
    return `; is the model${model} available there, and does the URL end in /v1?`;
  }
  if (status === 413) return "; the conversation may be too long for the server";
  return "";
}

/**
 * The sentence for a failure, from its kind and facts only. `who` is "the planner endpoint",
 * "the model endpoint http://…", never anything the endpoint sent. `guess`: add the likely cause
 * the facts alone suggest (left out when the endpoint's words named the real one). "Is the server
 * running?" is asked only when nothing was listening: a server that answered is running.
 */
export function describeFailure(
  kind: ModelFailureKind,
  facts: FailureFacts,
  who: string,
  guess = true,
): string {
  switch (kind) {
    case "unreachable":
      if (facts.refused) {
        return `nothing is listening at ${who} (${triesOver(facts)})${
          guess ? `; ${NOT_RUNNING}` : ""
        }`;
      }
      if (facts.status !== undefined) {
        return `${who} answered HTTP ${num(facts.status)} to each of ${triesOver(facts)}`;
      }
      return `${who} did not answer after ${triesOver(facts)}${
        guess ? '; is --endpoint (or "endpoint" in the config) right?' : ""
      }`;
    case "http":
      return `${who} refused the request (HTTP ${num(facts.status)})${
        guess ? statusGuess(facts) : ""
      }`;
    case "loading":
      return `${who} was still loading the model after ${
        Math.round(num(facts.seconds))
      } s; the limit is "timeouts.loadMs" in the config (${Math.round(num(facts.limitSeconds))} s)`;
    case "timeout":
      return `no complete reply from ${who} within ${
        Math.round(num(facts.limitSeconds) * 10) / 10
      } s; the limit is "timeouts.requestMs" in the config`;
    case "not_json":
      return `${who} sent a reply that is not JSON`;
    case "endpoint_error":
      return `${who} reported an error in place of a reply`;
    case "malformed":
      return `${who} sent a reply Brave Bot cannot read`;
    case "aborted":
      return "the model call was stopped";
    case "internal":
      return `the call to ${who} failed inside Brave Bot`;
  }
}

/** What the endpoint's words say went wrong, when Brave Bot knows a fix for it. */
export type ServerHintKind =
  | "needs_jinja" // llama-server without --jinja refuses `tools` and `tool_choice` (HTTP 500)
  | "needs_tool_parser" // vLLM without --enable-auto-tool-choice --tool-call-parser (HTTP 400)
  | "model_no_tools" // Ollama: the model's template has no tools (HTTP 400)
  | "context_exceeded" // the prompt is longer than the context the server was started with
  | "model_not_pulled" // Ollama: no such model here (HTTP 404)
  | "router_unknown_model" // llama-server's router: no model or alias of that name (HTTP 400)
  | "router_not_loaded" // llama-server's router with autoload off: the model is not running
  | "vllm_unknown_model" // vLLM serves only its --served-model-name (HTTP 404)
  | "lmstudio_unknown_model" // LM Studio: "Invalid model identifier" (HTTP 400)
  | "lmstudio_none_loaded" // LM Studio: "No models loaded" (HTTP 400 or 404)
  | "unknown_model"; // another server's words that it has no model of that name

/**
 * Reads the endpoint's words (a bounded line) for a cause Brave Bot knows. The patterns are the
 * servers' own messages (test/fixtures/servers/ cites the source of each); the first match wins,
 * so the specific ones come first.
 */
export function serverHint(detail: string | null, facts: FailureFacts): ServerHintKind | null {
  if (!detail) return null;
  const d = detail;
  // Without --jinja llama-server also refuses `tool_choice` (a compaction sends "none").
  if (/--jinja\b|unsupported param: tool_choice/i.test(d)) return "needs_jinja";
  if (/--enable-auto-tool-choice|--tool-call-parser/i.test(d)) return "needs_tool_parser";
  if (/does not support tools/i.test(d)) return "model_no_tools";
  if (
    /exceeds? the available context size|larger than the max context size|maximum context length is|context_length_exceeded|exceed_context_size/i
      .test(d)
  ) return "context_exceeded";
  if (/no models loaded/i.test(d)) return "lmstudio_none_loaded";
  if (/invalid model identifier/i.test(d)) return "lmstudio_unknown_model";
  if (/\bmodel is not loaded\b/i.test(d)) return "router_not_loaded";
  if (/the model `[^`]*` does not exist/i.test(d)) return "vllm_unknown_model";
  if (/\bmodel ["'][^"']*["'] not found/i.test(d)) {
    // Ollama answers 404 (`model 'x' not found[, try pulling it first]`); the router 400.
    return facts.status === 404 || /try pulling it first/i.test(d)
      ? "model_not_pulled"
      : "router_unknown_model";
  }
  // The router before it named the model answered exactly this, with 400.
  if (facts.status === 400 && /^model not found$/i.test(d.trim())) return "router_unknown_model";
  if (
    /\b(?:model|models)\b[^.;]{0,160}\b(?:not found|does not exist|not available|unknown)\b|\bunknown model\b|\bno such model\b/i
      .test(d)
  ) return "unknown_model";
  return null;
}

/** Brave Bot's own sentence for a hint; the configured model name is the person's setting. */
export function hintText(hint: ServerHintKind, facts: FailureFacts): string {
  const m = facts.model ? `'${facts.model.slice(0, 100)}'` : "the model";
  switch (hint) {
    case "needs_jinja":
      return "llama-server takes tool calls only with its chat templates: start it again with --jinja";
    case "needs_tool_parser":
      return "vLLM takes tool calls only when started with --enable-auto-tool-choice " +
        "--tool-call-parser NAME (the parser of the model's family: hermes, llama3_json, mistral, " +
        "qwen3_coder…)";
    case "model_no_tools":
      return `${m} does not take tool calls on this server: choose a model that does (Ollama ` +
        `marks them "tools")`;
    case "context_exceeded":
      return "the conversation is longer than the context the server was started with: start it " +
        "with a larger one (llama-server -c, vLLM --max-model-len, Ollama OLLAMA_CONTEXT_LENGTH " +
        "or a Modelfile num_ctx, LM Studio's context length when loading) or /compact";
    case "model_not_pulled":
      return `Ollama does not have ${m}: ollama pull ${m}`;
    case "router_unknown_model":
      return `llama-server's router has no model or alias ${m}: use a name it lists at ` +
        "/v1/models, or give the model that name with --alias";
    case "router_not_loaded":
      return `llama-server's router has not loaded ${m} and does not load models by itself: ` +
        "load it (POST /models/load) or start the router with autoload";
    case "vllm_unknown_model":
      return `vLLM serves only the name it was started with: use that name, or start it with ` +
        `--served-model-name ${m}`;
    case "lmstudio_unknown_model":
      return `LM Studio has no model ${m}: lms load ${m} (and use the identifier lms ps shows)`;
    case "lmstudio_none_loaded":
      return `LM Studio has no model loaded: lms load ${m}`;
    case "unknown_model":
      return `the server does not know ${m}: use a name it lists at /v1/models (bravebot doctor ` +
        "shows them), or pass --model with one";
  }
}

/** Every failure of a model call. `message` is the planner-safe sentence; `detail` is not. */
export class ModelError extends Error {
  override name = "ModelError";
  /** The endpoint's own words (or a local cause), one bounded line; for the person only. */
  readonly detail: string | null;
  /** Which known cause the endpoint's words name, if any; for the person only. */
  readonly hintKind: ServerHintKind | null;

  constructor(
    readonly kind: ModelFailureKind,
    readonly facts: FailureFacts,
    readonly endpoint: string,
    detail: string | null = null,
  ) {
    super(describeFailure(kind, facts, "the model endpoint"));
    this.detail = detail === null || detail === "" ? null : oneLine(detail);
    this.hintKind = kind === "aborted" || kind === "internal"
      ? null
      : serverHint(this.detail, facts);
  }

  static from(data: FailureData): ModelError {
    return new ModelError(data.kind, data.facts, data.endpoint, data.detail);
  }

  toData(): FailureData {
    return { kind: this.kind, facts: this.facts, detail: this.detail, endpoint: this.endpoint };
  }

  /** What the person can do about it, chosen from the endpoint's words; never the planner's. */
  get hint(): string | null {
    return this.hintKind === null ? null : hintText(this.hintKind, this.facts);
  }

  /** For the planner (a tool result, an outcome it is shown): the kind of failure, no more. */
  forPlanner(role: EndpointRole): string {
    return describeFailure(this.kind, this.facts, `the ${role} endpoint`);
  }

  /**
   * For the person (screen, stderr, the one-shot `error` line): the endpoint's address, then —
   * when it answered — its status and its own words, marked as not shown to the planner, then
   * what to do: the hint its words call for, else the guess the facts allow. Screens and JSON
   * escape it like any untrusted text (it holds the endpoint's bytes).
   */
  forPerson(role: EndpointRole): string {
    const who = `the ${role} endpoint${this.endpoint ? ` ${this.endpoint}` : ""}`;
    const facts = this.facts;
    const hint = this.hint;
    const fix = (guess: string) => (hint === null ? guess : `; ${hint}`);
    const said = this.detail === null
      ? ""
      : `: \u201c${this.detail}\u201d (its words, shown to you, not to the planner)`;
    switch (this.kind) {
      case "http":
        return `${who} answered HTTP ${num(facts.status)}${said}${fix(statusGuess(facts))}`;
      case "unreachable":
        if (facts.status !== undefined) {
          return `${who} answered HTTP ${num(facts.status)}${said}; the same to each of ${
            triesOver(facts)
          }${fix("")}`;
        }
        // Nothing answered: the detail is Brave Bot's account of the connection, not the
        // endpoint's words (and for a refused one, the sentence says it all).
        return `${describeFailure("unreachable", facts, who)}${
          this.detail === null || facts.refused ? "" : ` (last: ${this.detail})`
        }`;
      case "loading":
        return `${describeFailure("loading", facts, who)}; it answered HTTP ${
          num(facts.status)
        }${said}`;
      case "not_json":
      case "endpoint_error":
        return `${describeFailure(this.kind, facts, who)}${said}${fix("")}`;
      case "malformed":
      case "internal":
        return `${describeFailure(this.kind, facts, who)}${
          this.detail === null ? "" : `: ${this.detail}`
        }`;
      case "timeout":
      case "aborted":
        return describeFailure(this.kind, facts, who);
    }
  }
}

/** Endpoint words on one line, bounded: a screen line, not a page. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 500);
}
