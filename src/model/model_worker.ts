/**
 * The model client's own worker (docs/contract.md §13.1): it runs with network access limited to
 * the configured endpoints' hosts and nothing else — no files, no programs, no environment — so a
 * bug anywhere in the HTTP stack cannot reach another host or the disk. The main thread sends
 * requests; text pieces, retries and the result come back as messages.
 */
/// <reference lib="deno.worker" />
import { OpenAIModelClient } from "./client.ts";
import { boundedHttp, probeServedContext } from "./served_context.ts";
import { ModelError } from "./types.ts";
import type { ToWorker } from "./worker_protocol.ts";

const clients = new Map<string, OpenAIModelClient>();
const running = new Map<number, AbortController>();

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const msg = event.data;
  if (msg.op === "abort") {
    running.get(msg.id)?.abort();
    return;
  }
  if (msg.op === "served") {
    // Bounded and never throwing: the answer is always a value.
    const served = await probeServedContext(
      msg.client.endpoint,
      msg.client.model,
      boundedHttp({ apiKey: msg.client.apiKey }),
    );
    self.postMessage({ id: msg.id, type: "served", served });
    return;
  }
  const key = JSON.stringify(msg.client);
  let client = clients.get(key);
  if (!client) clients.set(key, client = new OpenAIModelClient(msg.client));
  const controller = new AbortController();
  running.set(msg.id, controller);
  try {
    const reply = await client.complete({
      messages: msg.messages,
      tools: msg.tools,
      toolChoice: msg.toolChoice,
      signal: controller.signal,
      onText: msg.wantText
        ? (text) => self.postMessage({ id: msg.id, type: "text", text })
        : undefined,
      onRetry: (why, delayMs, attempt) =>
        self.postMessage({ id: msg.id, type: "retry", why, delayMs, attempt }),
      onAnswering: msg.wantAnswering
        ? () => self.postMessage({ id: msg.id, type: "answering" })
        : undefined,
    });
    self.postMessage({ id: msg.id, type: "done", reply });
  } catch (e) {
    const error = e instanceof ModelError
      ? e.toData()
      : new ModelError("internal", {}, msg.client.endpoint, String(e)).toData();
    self.postMessage({ id: msg.id, type: "error", error });
  } finally {
    running.delete(msg.id);
  }
};
