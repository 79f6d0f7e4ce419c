/**
 * Builds the planner and processor clients from settings. Constructing them sends nothing
 * (docs/contract.md §14: nothing is sent at start-up); the first request is the planner's turn.
 */
import { apiKeyFromEnv, type ClientOptions } from "./client.ts";
import { ModelProcessor } from "./processor.ts";
import type { RetryPolicy } from "./retry.ts";
import type { ModelClient } from "./types.ts";
import { ModelWorker, WorkerModelClient } from "./worker_client.ts";
import type { UsageMeter } from "./usage.ts";

/** What the clients are built from: the endpoints, the models and the request bound. */
export interface ModelSettings {
  planner: { url: string; model?: string | null };
  processor: { url: string; model?: string | null };
  requestTimeoutMs: number;
  loadTimeoutMs?: number;
}

export interface Models {
  planner: ModelClient;
  processor: ModelProcessor;
  /**
   * Starts the model worker now, so that its modules load on its own thread while the session
   * opens (one-shot, issue 24); it sends nothing until the first request.
   */
  warm(): void;
  /** Stops the model worker (docs/contract.md §13.1: its network is only the endpoints' hosts). */
  close(): void;
}

/**
 * Null with a message when no model is named anywhere (`--model` is then required,
 * docs/cli.md#options).
 */
export function modelsFrom(
  settings: ModelSettings,
  retry?: RetryPolicy,
  usage?: UsageMeter,
): { ok: true; value: Models } | { ok: false; error: string } {
  const plannerModel = settings.planner.model;
  if (!plannerModel) {
    return {
      ok: false,
      error:
        `no planner model: pass --model NAME or set "model" in the config (the endpoint is ${settings.planner.url})`,
    };
  }
  const apiKey = apiKeyFromEnv();
  // The worker starts on the first request (or at `warm`); nothing is sent before that request.
  const worker = new ModelWorker([settings.planner.url, settings.processor.url], usage);
  const options = (endpoint: string, model: string): ClientOptions => ({
    endpoint,
    model,
    timeoutMs: settings.requestTimeoutMs,
    loadMs: settings.loadTimeoutMs,
    apiKey,
    retry,
  });
  const planner = new WorkerModelClient(worker, options(settings.planner.url, plannerModel));
  const processorClient = settings.processor.url === settings.planner.url &&
      (settings.processor.model ?? plannerModel) === plannerModel
    ? planner
    : new WorkerModelClient(
      worker,
      options(settings.processor.url, settings.processor.model ?? plannerModel),
    );
  return {
    ok: true,
    value: {
      planner,
      processor: new ModelProcessor(processorClient),
      warm: () => worker.warm(),
      close: () => worker.terminate(),
    },
  };
}
