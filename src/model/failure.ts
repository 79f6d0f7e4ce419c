/**
 * A failed model call as a value (design.md §3). An endpoint's error body, a reply that is not
 * JSON and a stream's error event are untrusted text that may quote the request — the very bytes
 * a processor was given. So a failure is split in two here, and only here:
 * - `kind` and a few facts Brave Bot itself knows (an HTTP status, a count of tries, a configured
 *   limit or model name) are worded by `describeFailure` — the only text the planner is given;
 * - `detail` holds the endpoint's own words (or a local cause), for the person's screen only.
 * `describeFailure` takes no string from the endpoint, so no endpoint byte can reach its words.
 */

export type ModelFailureKind =
  | "unreachable" // connection errors, 429 or 5xx that outlasted the retries
  | "loading" // the server kept saying it is loading the model until `timeouts.loadMs`
  | "http" // a 4xx other than 429: retrying would not help
  | "timeout" // no complete reply within the request timeout
  | "not_json" // the reply (a whole body or a streamed chunk) is not JSON
  | "endpoint_error" // the endpoint reported an error in place of a reply (a body, an SSE event)
  | "malformed" // the reply is JSON, but not the shape the protocol says
  | "aborted" // the person stopped it
  | "internal"; // the call failed inside Brave Bot (the model worker stopped)

/** Facts Brave Bot knows without reading the endpoint's words; all the planner may be told. */
export interface FailureFacts {
  status?: number;
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

/**
 * The sentence for a failure, from its kind and facts only. `who` is "the planner endpoint",
 * "the model endpoint http://…", never anything the endpoint sent.
 */
export function describeFailure(kind: ModelFailureKind, facts: FailureFacts, who: string): string {
  const n = (x: number | undefined) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  switch (kind) {
    case "unreachable": {
      const tries = n(facts.attempts);
      return `${who} did not answer after ${tries} ${tries === 1 ? "try" : "tries"} over ${
        Math.round(n(facts.seconds))
      } s; is the server running and is --endpoint (or "endpoint" in the config) right?`;
    }
    case "http": {
      const status = n(facts.status);
      const hint = status === 401 || status === 403
        ? "; set BRAVEBOT_API_KEY if the server needs a token"
        : status === 404
        ? `; is the model${
          facts.model ? ` '${facts.model.slice(0, 100)}'` : ""
        } available there, and does the URL end in /v1?`
        : status === 400 || status === 413
        ? "; the conversation may be too long for the server, or the server may not support tool calls"
        : "";
      return `${who} refused the request (HTTP ${status})${hint}`;
    }
    case "loading":
      return `${who} was still loading the model after ${
        Math.round(n(facts.seconds))
      } s; the limit is ` +
        `"timeouts.loadMs" in the config (${Math.round(n(facts.limitSeconds))} s)`;
    case "timeout":
      return `no complete reply from ${who} within ${
        Math.round(n(facts.limitSeconds) * 10) / 10
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

/** Every failure of a model call. `message` is the planner-safe sentence; `detail` is not. */
export class ModelError extends Error {
  override name = "ModelError";
  readonly detail: string | null;

  constructor(
    readonly kind: ModelFailureKind,
    readonly facts: FailureFacts,
    readonly endpoint: string,
    detail: string | null = null,
  ) {
    super(describeFailure(kind, facts, "the model endpoint"));
    this.detail = detail === null || detail === "" ? null : oneLine(detail);
  }

  static from(data: FailureData): ModelError {
    return new ModelError(data.kind, data.facts, data.endpoint, data.detail);
  }

  toData(): FailureData {
    return { kind: this.kind, facts: this.facts, detail: this.detail, endpoint: this.endpoint };
  }

  /** For the planner (a tool result, an outcome it is shown): the kind of failure, no more. */
  forPlanner(role: EndpointRole): string {
    return describeFailure(this.kind, this.facts, `the ${role} endpoint`);
  }

  /**
   * For the person (screen, stderr, the one-shot `error` line): the endpoint's address and its
   * own words, marked as such. Screens escape it like any untrusted text.
   */
  forPerson(role: EndpointRole): string {
    const who = `the ${role} endpoint${this.endpoint ? ` ${this.endpoint}` : ""}`;
    const said = this.detail === null ? "" : ` [not shown to the planner: ${this.detail}]`;
    return `${describeFailure(this.kind, this.facts, who)}${said}`;
  }
}

/** Endpoint words on one line, bounded: a screen line, not a page. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 500);
}
