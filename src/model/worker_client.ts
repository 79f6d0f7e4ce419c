/**
 * A ModelClient whose HTTP runs in the model worker, whose only permission is network access
 * to the configured endpoints' `host:port`s (docs/contract.md §13.1). Same behaviour as
 * OpenAIModelClient — the worker runs one — with the callbacks carried over messages.
 */
import type { ClientOptions } from "./client.ts";
import { type CompleteRequest, type ModelClient, ModelError, type ModelReply } from "./types.ts";
import type { FromWorker, ToWorker } from "./worker_protocol.ts";
import type { ServedContext } from "./served_context.ts";
import { UsageMeter } from "./usage.ts";

/** `host:port` of an endpoint URL, as Deno's `net` permission names it. */
export function netTarget(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return `${u.hostname}:${port}`;
}

/** One worker for all the clients of a session; started on the first request or at `warm`. */
export class ModelWorker {
  #worker: Worker | null = null;
  #next = 0;
  #handlers = new Map<number, (m: FromWorker) => void>();
  #dead: string | null = null;

  /**
   * @param usage where every reply's token counts are added: one meter for a run's workers,
   * so the one-shot summary sums planner, compaction and processor requests alike.
   */
  constructor(
    private readonly endpoints: readonly string[],
    readonly usage: UsageMeter = new UsageMeter(),
  ) {}

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const net = [...new Set(this.endpoints.map(netTarget))];
    const worker = new Worker(new URL("./model_worker.ts", import.meta.url), {
      type: "module",
      name: "bravebot-model-worker",
      deno: {
        permissions: {
          net,
          read: false,
          write: false,
          run: false,
          env: false,
          ffi: false,
          sys: false,
          import: false,
        },
      },
    });
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.#handlers.get(e.data.id)?.(e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.#dead = e.message;
      for (const [id, h] of this.#handlers) {
        h({
          id,
          type: "error",
          error: {
            kind: "internal",
            facts: {},
            detail: `the model worker stopped: ${e.message}`,
            endpoint: "",
          },
        });
      }
    };
    this.#worker = worker;
    return worker;
  }

  /** Starts the worker before its first request (it loads its modules, and sends nothing). */
  warm(): void {
    if (!this.#dead) this.#start();
  }

  complete(client: ClientOptions, request: CompleteRequest): Promise<ModelReply> {
    if (this.#dead) {
      return Promise.reject(
        new ModelError(
          "internal",
          {},
          client.endpoint,
          `the model worker stopped: ${this.#dead}`,
        ),
      );
    }
    const worker = this.#start();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const onAbort = () => worker.postMessage({ op: "abort", id } satisfies ToWorker);
      request.signal?.addEventListener("abort", onAbort);
      const finish = () => {
        this.#handlers.delete(id);
        request.signal?.removeEventListener("abort", onAbort);
      };
      this.#handlers.set(id, (m) => {
        if (m.type === "text") request.onText?.(m.text);
        else if (m.type === "served") return;
        else if (m.type === "retry") request.onRetry?.(m.why, m.delayMs, m.attempt);
        else if (m.type === "answering") request.onAnswering?.();
        else if (m.type === "done") {
          finish();
          this.usage.add(m.reply.usage);
          resolve(m.reply);
        } else {
          finish();
          reject(ModelError.from({ ...m.error, endpoint: m.error.endpoint || client.endpoint }));
        }
      });
      worker.postMessage(
        {
          op: "complete",
          id,
          client,
          messages: request.messages,
          tools: request.tools,
          toolChoice: request.toolChoice,
          wantText: request.onText !== undefined,
          wantAnswering: request.onAnswering !== undefined,
        } satisfies ToWorker,
      );
      if (request.signal?.aborted) onAbort();
    });
  }

  /** What context the server serves the client's model with; null when it could not be asked. */
  served(client: ClientOptions): Promise<ServedContext | null> {
    if (this.#dead) return Promise.resolve(null);
    const worker = this.#start();
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#handlers.set(id, (m) => {
        this.#handlers.delete(id);
        resolve(m.type === "served" ? m.served : null);
      });
      worker.postMessage({ op: "served", id, client } satisfies ToWorker);
    });
  }

  terminate(): void {
    this.#worker?.terminate();
    this.#worker = null;
  }
}

export class WorkerModelClient implements ModelClient {
  readonly endpoint: string;
  readonly model: string;

  constructor(private readonly worker: ModelWorker, private readonly options: ClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.model = options.model;
  }

  complete(request: CompleteRequest): Promise<ModelReply> {
    return this.worker.complete(this.options, request);
  }

  async servedContext(): Promise<ServedContext> {
    const served = await this.worker.served(this.options);
    if (served) return served;
    throw new Error("the model worker could not ask the server");
  }
}
