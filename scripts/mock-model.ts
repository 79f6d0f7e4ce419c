/**
 * The scripted model: a real OpenAI-compatible HTTP server on 127.0.0.1 that plays a script of
 * planner and processor replies, records every request it receives, and injects faults. Tests
 * start it in-process (`startMockModel`); the demo runs it as a program:
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-write scripts/mock-model.ts \
 *     --script script.json [--record requests.jsonl] [--port 0]
 *
 * It prints `mock-model listening on http://127.0.0.1:PORT/v1` once it is ready.
 *
 * A request that carries `tools` is a planner request, one without is a processor request
 * (docs/cli.md#options). Each request takes the next unused reply of its kind, in script order; a
 * reply with no `for` serves either kind.
 */

export interface MockToolCall {
  name: string;
  /**
   * An object is sent as its JSON; a string is sent exactly as written (to send bad JSON).
   * `$FIRST_REF` and `$LAST_REF` stand for the first and last `ref:N` named in the newest tool
   * result of the request, so a script need not know how many references earlier tools made;
   * `$LAST_LINE` for that result's last line (a final newline ends it; JSON-escaped), so a scripted planner can use what
   * it was shown — an output read with read_output — as a real one would.
   */
  arguments?: unknown;
  /** Defaults to `call_<n>`; `null` sends none. */
  id?: string | null;
}

export interface MockFault {
  /** Wait this long before answering. */
  delay_ms?: number;
  /** Answer with this HTTP status and an error body instead of a reply. */
  status?: number;
  /** Seconds, sent as `Retry-After` with `status`. */
  retry_after?: number;
  /** Close the connection after this many stream events, without finishing. */
  cut_after?: number;
  /** Send a stream event that is not JSON. */
  invalid_json?: boolean;
  /** Start the reply and never finish it. */
  never_end?: boolean;
  /** A completion whose `choices` list is empty. */
  empty_choices?: boolean;
  /** This exact body, as `application/json`, in place of a reply. */
  raw_body?: string;
  /** The error message sent with `status` (default "mock fault: HTTP N"). */
  error_message?: string;
  /** Start a stream, then send an SSE `event: error` with this data and close. */
  sse_error?: string;
}

/**
 * In `raw_body`, `error_message` and `sse_error`, `$REQUEST` stands for the newest message of
 * the request (a processor's instruction and documents): an endpoint that quotes its input back
 * in an error, as real servers do.
 */
const QUOTE = "$REQUEST";

export interface MockReply {
  for?: "planner" | "processor";
  text?: string;
  tool_calls?: MockToolCall[];
  /** Stream as server-sent events (default) or answer with one JSON body. */
  stream?: boolean;
  /** Characters of text per stream event (default 16). */
  chunk?: number;
  fault?: MockFault;
  /** Serve this entry this many times (default 1), e.g. a fault that outlasts the retries. */
  times?: number;
  /**
   * A processor that copies the request's first document as the framing shows it (the text
   * between its opening tag's line and `</document>`), replaces `find` with `replace` once, and
   * answers it after the document marker, as a careful model would; `ending`, when given, stands
   * for the copy's trailing line breaks (a model that ends its reply otherwise). Overrides `text`.
   */
  rewrite?: { find: string; replace: string; ending?: string };
  /**
   * The token count the server reports with this reply: in a stream, as a last chunk with no
   * choices when the request asked for it (`stream_options.include_usage`), as servers do; in a
   * whole body, as its `usage`.
   */
  usage?: { prompt_tokens: number; completion_tokens?: number };
}

export interface MockScript {
  replies: MockReply[];
}

export interface RecordedRequest {
  time: string;
  path: string;
  kind: "planner" | "processor" | "other";
  /** The parsed body (or the raw text when it was not JSON). */
  body: unknown;
  /** The raw body, for exact substring checks. */
  raw: string;
  authorization: string | null;
  /** Every request header, lower-cased names. */
  headers: Record<string, string>;
  /** Which script entry answered (index), or null when none was left. */
  entry: number | null;
  /** For a streamed reply: how many of its events were handed to the connection so far. */
  streamed: number;
}

export interface MockModel {
  port: number;
  /** The base URL to give Brave Bot (`…/v1`). */
  url: string;
  readonly requests: RecordedRequest[];
  /**
   * The paths of other GETs (a client asking which server this is: `/props`, `/api/version`),
   * answered 404 like an endpoint that only speaks the OpenAI API, and kept apart from `requests`.
   */
  readonly probes: string[];
  /** Script entries not yet served. */
  remaining(): number;
  stop(): Promise<void>;
}

export interface MockOptions {
  script: MockScript;
  /** JSON-lines file receiving every request as it arrives. */
  recordFile?: string;
  /** What a compaction request (`tool_choice: "none"`) is answered with. */
  summary?: string;
  port?: number;
  /** The names `GET /models` lists (what `/model NAME` and `doctor` check); default `mock`. */
  models?: readonly string[];
}

const encoder = new TextEncoder();

/** Parses a script file's text: `{ "replies": [...] }` or a bare list. */
export function parseScript(text: string): MockScript {
  const data = JSON.parse(text);
  const replies = Array.isArray(data) ? data : data?.replies;
  if (!Array.isArray(replies)) {
    throw new Error('a script is a list of replies or { "replies": [...] }');
  }
  return { replies };
}

export function startMockModel(options: MockOptions): Promise<MockModel> {
  const entries = options.script.replies.map((r) => ({ reply: r, left: r.times ?? 1 }));
  const requests: RecordedRequest[] = [];
  const probes: string[] = [];
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let callCounter = 0;

  const take = (kind: "planner" | "processor"): number | null => {
    const i = entries.findIndex((e) =>
      e.left > 0 && (e.reply.for === undefined || e.reply.for === kind)
    );
    if (i < 0) return null;
    entries[i].left--;
    return i;
  };

  /** Ends a pending delay at once (stop(): a delay must not hold the server's shutdown). */
  const waking = new Set<() => void>();
  const wait = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        timers.delete(t);
        waking.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      timers.add(t);
      waking.add(done);
      signal.addEventListener("abort", done);
    });

  const handler = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path.endsWith("/models")) {
      return Response.json({
        object: "list",
        data: (options.models ?? ["mock"]).map((id) => ({ id, object: "model", owned_by: "mock" })),
      });
    }
    if (req.method === "GET") {
      probes.push(path);
      return Response.json({ error: { message: `no such route: ${path}` } }, { status: 404 });
    }
    const raw = await req.text();
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch { /* recorded raw */ }
    const isChat = req.method === "POST" && path.endsWith("/chat/completions");
    const kind = !isChat
      ? "other"
      : typeof body === "object" && body !== null && "tools" in body
      ? "planner"
      : "processor";
    // A compaction request (tool_choice "none") is answered with the summary, out of the script.
    const summarising = isChat && (body as { tool_choice?: unknown })?.tool_choice === "none";
    const entry = kind === "other" || summarising ? null : take(kind);
    const record: RecordedRequest = {
      time: new Date().toISOString(),
      path,
      kind,
      body,
      raw,
      authorization: req.headers.get("authorization"),
      headers: Object.fromEntries(req.headers.entries()),
      entry,
      streamed: 0,
    };
    requests.push(record);
    if (options.recordFile) {
      await Deno.writeTextFile(options.recordFile, JSON.stringify(record) + "\n", { append: true });
    }
    if (!isChat) {
      return Response.json({ error: { message: `no such route: ${path}` } }, { status: 404 });
    }
    const model = (body as { model?: string })?.model ?? "mock";
    if (summarising) {
      const summary = options.summary ??
        "(mock summary) the person asked for a task; work went on.";
      return (body as { stream?: boolean })?.stream === true
        ? streamed(model, { text: summary }, {}, callCounter, (t) => t, record)
        : completion(model, { text: summary }, callCounter);
    }
    if (entry === null) {
      return completion(
        model,
        { text: `(mock model: the script has no ${kind} reply left)` },
        0,
      );
    }
    const reply = rewritten(entries[entry].reply, body);
    const fault = reply.fault ?? {};
    if (fault.delay_ms) await wait(fault.delay_ms, req.signal);
    const quote = (text: string) => text.replaceAll(QUOTE, newestMessage(body));
    if (fault.status) {
      const headers: Record<string, string> = {};
      if (fault.retry_after !== undefined) headers["retry-after"] = String(fault.retry_after);
      const message = quote(fault.error_message ?? `mock fault: HTTP ${fault.status}`);
      return Response.json(
        { error: { message, type: "mock_fault" } },
        { status: fault.status, headers },
      );
    }
    if (fault.raw_body !== undefined) {
      return new Response(quote(fault.raw_body), {
        headers: { "content-type": "application/json" },
      });
    }
    if (fault.sse_error !== undefined) {
      const data = quote(fault.sse_error).split("\n").map((l) => `data: ${l}\n`).join("");
      return new Response(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "" } }] })}\n\n` +
          `event: error\n${data}\n`,
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    if (fault.empty_choices) {
      return Response.json({
        id: "mock",
        object: "chat.completion",
        created: 0,
        model,
        choices: [],
      });
    }
    const wantsStream = (body as { stream?: boolean })?.stream === true;
    const first = callCounter;
    callCounter += reply.tool_calls?.length ?? 0;
    const sub = refSubstitution(body);
    if (!wantsStream || reply.stream === false) {
      return completion(model, reply, first, sub);
    }
    const counted = (body as { stream_options?: { include_usage?: unknown } })?.stream_options
      ?.include_usage === true;
    return streamed(
      model,
      counted ? reply : { ...reply, usage: undefined },
      fault,
      first,
      sub,
      record,
    );
  };

  const completion = (
    model: string,
    reply: MockReply,
    first: number,
    sub: (s: string) => string = (s) => s,
  ): Response => {
    const calls = (reply.tool_calls ?? []).map((c, i) => ({
      ...(c.id === null ? {} : { id: c.id ?? `call_${first + i}` }),
      type: "function",
      function: { name: c.name, arguments: sub(argText(c.arguments)) },
    }));
    return Response.json({
      id: "mock",
      object: "chat.completion",
      created: 0,
      model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        finish_reason: calls.length ? "tool_calls" : "stop",
      }],
      ...(reply.usage ? { usage: reply.usage } : {}),
    });
  };

  const streamed = (
    model: string,
    reply: MockReply,
    fault: MockFault,
    first: number,
    sub: (s: string) => string,
    record: RecordedRequest,
  ): Response => {
    const events: string[] = [];
    const chunk = (delta: unknown, finish: string | null = null) =>
      JSON.stringify({
        id: "mock",
        object: "chat.completion.chunk",
        created: 0,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    events.push(chunk({ role: "assistant", content: "" }));
    const size = Math.max(1, reply.chunk ?? 16);
    const text = reply.text ?? "";
    for (let i = 0; i < text.length; i += size) {
      events.push(chunk({ content: text.slice(i, i + size) }));
    }
    (reply.tool_calls ?? []).forEach((c, i) => {
      const args = sub(argText(c.arguments));
      events.push(chunk({
        tool_calls: [{
          index: i,
          ...(c.id === null ? {} : { id: c.id ?? `call_${first + i}` }),
          type: "function",
          function: { name: c.name, arguments: "" },
        }],
      }));
      const piece = Math.max(size, Math.ceil(args.length / 64));
      for (let j = 0; j < args.length; j += piece) {
        events.push(
          chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(j, j + piece) } }] }),
        );
      }
    });
    if (fault.invalid_json) events.splice(Math.min(2, events.length), 0, "{this is not json");
    const finishing = [
      chunk({}, reply.tool_calls?.length ? "tool_calls" : "stop"),
      ...(reply.usage
        ? [JSON.stringify({
          id: "mock",
          object: "chat.completion.chunk",
          created: 0,
          model,
          choices: [],
          usage: reply.usage,
        })]
        : []),
      "[DONE]",
    ];
    let controllerRef: ReadableStreamDefaultController<Uint8Array> | null = null;
    if (fault.never_end) {
      // Handed over one event at a time as the connection takes them, so a test can wait until
      // the reply is really streaming (`streamed`); then it goes on forever, as far as the client
      // can tell.
      let next = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controllerRef = controller;
            open.add(controller);
          },
          pull(controller) {
            if (next >= events.length) return new Promise<void>(() => {});
            controller.enqueue(encoder.encode(`data: ${events[next++]}\n\n`));
            record.streamed = next;
          },
          cancel() {
            if (controllerRef) open.delete(controllerRef);
          },
        }, { highWaterMark: 0 }),
        { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
      );
    }
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller;
        open.add(controller);
        const limit = fault.cut_after ?? Infinity;
        let sent = 0;
        for (const e of events) {
          if (sent >= limit) break;
          controller.enqueue(encoder.encode(`data: ${e}\n\n`));
          sent++;
          record.streamed = sent;
        }
        if (sent < events.length || fault.cut_after !== undefined) {
          // Cut mid-way: the connection closes without the server finishing the reply.
          open.delete(controller);
          controller.close();
          return;
        }
        for (const e of finishing) controller.enqueue(encoder.encode(`data: ${e}\n\n`));
        open.delete(controller);
        controller.close();
      },
      cancel() {
        if (controllerRef) open.delete(controllerRef);
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      onListen: () => {},
    }, handler);
    const port = server.addr.port;
    resolve({
      port,
      url: `http://127.0.0.1:${port}/v1`,
      requests,
      probes,
      remaining: () => entries.reduce((n, e) => n + e.left, 0),
      stop: async () => {
        for (const t of timers) clearTimeout(t);
        // A delay whose client went away unnoticed (a request aborted while the server was still
        // reading it) would otherwise keep its handler, and so the shutdown, waiting forever.
        for (const wake of [...waking]) wake();
        for (const c of open) {
          try {
            c.close();
          } catch { /* already closed */ }
        }
        open.clear();
        await server.shutdown();
      },
    });
  });
}

/** A `rewrite` reply made into the text it answers with (other replies as they are). */
function rewritten(reply: MockReply, body: unknown): MockReply {
  if (!reply.rewrite) return reply;
  const { find, replace, ending } = reply.rewrite;
  const framed = newestMessage(body).match(/<document\b[^>]*>\n([\s\S]*?)<\/document>/);
  if (!framed) return { ...reply, text: "(mock model: the request holds no document)" };
  let copy = framed[1].replace(find, replace);
  if (ending !== undefined) copy = copy.replace(/(?:\r?\n)*$/, ending);
  return { ...reply, text: `=== document ===\n${copy}` };
}

function newestMessage(body: unknown): string {
  const messages = (body as { messages?: { content?: unknown }[] })?.messages;
  const content = Array.isArray(messages) ? messages.at(-1)?.content : undefined;
  return typeof content === "string" ? content : "";
}

/**
 * Replaces `$FIRST_REF` / `$LAST_REF` with the refs named in the request's newest tool result, and
 * `$LAST_LINE` with its last line.
 */
function refSubstitution(body: unknown): (s: string) => string {
  const messages = (body as { messages?: { role?: string; content?: unknown }[] })?.messages;
  const lastTool = Array.isArray(messages)
    ? [...messages].reverse().find((m) => m?.role === "tool")
    : undefined;
  const refs = typeof lastTool?.content === "string"
    ? [...lastTool.content.matchAll(/ref:\d+/g)].map((m) => m[0])
    : [];
  const lastLine = typeof lastTool?.content === "string"
    ? JSON.stringify(lastTool.content.replace(/\n$/, "").split("\n").at(-1)).slice(1, -1)
    : "";
  return (s) =>
    s.replaceAll("$FIRST_REF", refs[0] ?? "ref:none").replaceAll(
      "$LAST_REF",
      refs.at(-1) ?? "ref:none",
    ).replaceAll("$LAST_LINE", () => lastLine);
}

function argText(args: unknown): string {
  if (args === undefined) return "{}";
  return typeof args === "string" ? args : JSON.stringify(args);
}

if (import.meta.main) {
  const args = Deno.args;
  const get = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const scriptPath = get("--script");
  if (!scriptPath) {
    console.error("usage: mock-model.ts --script FILE [--record FILE] [--port N]");
    Deno.exit(2);
  }
  const mock = await startMockModel({
    script: parseScript(await Deno.readTextFile(scriptPath)),
    recordFile: get("--record"),
    port: get("--port") ? Number(get("--port")) : 0,
  });
  console.log(`mock-model listening on ${mock.url}`);
  const stop = async () => {
    await mock.stop();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
