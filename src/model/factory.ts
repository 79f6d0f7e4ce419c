/**
 * Builds the planner and processor clients from settings. Constructing them sends nothing
 * (design.md §14: nothing is sent at start-up); the first request is the planner's first turn.
 */
import type { Settings } from "../state/settings.ts";
import { apiKeyFromEnv, OpenAIModelClient } from "./client.ts";
import { ModelProcessor } from "./processor.ts";
import type { RetryPolicy } from "./retry.ts";
import type { ModelClient } from "./types.ts";

export interface Models {
  planner: ModelClient;
  processor: ModelProcessor;
}

/** Null with a message when no model is named anywhere (cli.md: `--model` required if none). */
export function modelsFrom(
  settings: Settings,
  retry?: RetryPolicy,
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
  const planner = new OpenAIModelClient({
    endpoint: settings.planner.url,
    model: plannerModel,
    timeoutMs: settings.requestTimeoutMs,
    apiKey,
    retry,
  });
  const processorClient = settings.processor.url === settings.planner.url &&
      (settings.processor.model ?? plannerModel) === plannerModel
    ? planner
    : new OpenAIModelClient({
      endpoint: settings.processor.url,
      model: settings.processor.model ?? plannerModel,
      timeoutMs: settings.requestTimeoutMs,
      apiKey,
      retry,
    });
  return { ok: true, value: { planner, processor: new ModelProcessor(processorClient) } };
}
