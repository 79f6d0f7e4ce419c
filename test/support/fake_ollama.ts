/**
 * A fake Ollama on 127.0.0.1 that truncates the way the real one does: its OpenAI endpoint
 * renders the conversation and, when it is over the model's `num_ctx`, drops messages from the
 * front — keeping the system messages and the last message — until it fits, and says nothing
 * (ollama/ollama server/prompt.go, chatPrompt); what is still over `num_ctx` then is cut to fit by
 * the runner. `usage.prompt_tokens` is the count of what was kept (openai/openai.go:
 * PromptTokens is the prompt eval count); a stream carries usage only
 * when `stream_options.include_usage` asks for it (openai/openai.go, StreamOptions). Its own API
 * answers as api/types.go and server/routes.go shape it: `/api/version`, `/api/show` with the
 * Modelfile's `num_ctx` in `parameters`, and `/api/ps`, empty until the first chat loads the model.
 *
 * Its tokenizer counts one token per two characters: denser than Brave Bot's estimate, as a
 * model's own tokenizer and chat template often are, so a conversation the driver thinks fits
 * can be over the server's limit.
 */

export interface FakeReply {
  text?: string;
  tool_calls?: { name: string; arguments: unknown }[];
}

export interface FakeOllama {
  /** The OpenAI-compatible base URL (`…/v1`). */
  url: string;
  /** Per chat request: how many messages it had and how many were dropped to fit. */
  readonly chats: { messages: number; dropped: number; cut: boolean; promptTokens: number }[];
  readonly probes: string[];
  stop(): Promise<void>;
}

export const FAKE_MODEL = "qwen3";

/** Tokens the fake's "tokenizer" counts for a rendered prompt. */
function count(text: string): number {
  return Math.ceil(text.length / 2);
}

type Msg = { role: string; content?: string | null; tool_calls?: unknown };

function render(messages: Msg[], tools: unknown): string {
  const parts = messages.map((m) =>
    `<|im_start|>${m.role}\n${m.content ?? ""}${m.tool_calls ? JSON.stringify(m.tool_calls) : ""}`
  );
  return (tools ? JSON.stringify(tools) : "") + parts.join("<|im_end|>\n");
}

/** Ollama's heuristic: from the front, until it fits; system messages and the last always stay. */
function truncate(
  messages: Msg[],
  tools: unknown,
  numCtx: number,
): { kept: Msg[]; tokens: number } {
  const last = messages.length - 1;
  for (let i = 0; i <= last; i++) {
    const system = messages.slice(0, i).filter((m) => m.role === "system");
    const kept = [...system, ...messages.slice(i)];
    const tokens = count(render(kept, tools));
    if (tokens <= numCtx || i === last) return { kept, tokens };
  }
  return { kept: messages, tokens: count(render(messages, tools)) };
}

export function startFakeOllama(options: { numCtx: number; replies: FakeReply[] }): FakeOllama {
  const chats: FakeOllama["chats"] = [];
  const probes: string[] = [];
  let loaded = false;
  let next = 0;
  const showParameters = `num_ctx                        ${options.numCtx}\n` +
    `temperature                    0.6`;
  const handler = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" || path.startsWith("/api/")) probes.push(`${req.method} ${path}`);
    if (req.method === "GET" && path === "/api/version") {
      return Response.json({ version: "0.13.5" });
    }
    if (req.method === "POST" && path === "/api/show") {
      const body = await req.json().catch(() => ({}));
      if (body?.model !== FAKE_MODEL && body?.model !== `${FAKE_MODEL}:latest`) {
        return Response.json({ error: `model '${body?.model}' not found` }, { status: 404 });
      }
      return Response.json({
        parameters: showParameters,
        details: { format: "gguf", family: "qwen3" },
        model_info: { "general.architecture": "qwen3", "qwen3.context_length": 40_960 },
        capabilities: ["completion", "tools"],
      });
    }
    if (req.method === "GET" && path === "/api/ps") {
      return Response.json({
        models: loaded
          ? [{
            name: `${FAKE_MODEL}:latest`,
            model: `${FAKE_MODEL}:latest`,
            context_length: options.numCtx,
          }]
          : [],
      });
    }
    if (req.method === "GET" && path === "/v1/models") {
      return Response.json({
        object: "list",
        data: [{ id: `${FAKE_MODEL}:latest`, object: "model", created: 0, owned_by: "library" }],
      });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return new Response("404 page not found", { status: 404 });
    }
    const body = await req.json();
    loaded = true;
    const messages = body.messages as Msg[];
    const { kept, tokens: rendered } = truncate(messages, body.tools, options.numCtx);
    const tokens = Math.min(rendered, options.numCtx);
    chats.push({
      messages: messages.length,
      dropped: messages.length - kept.length,
      cut: rendered > options.numCtx,
      promptTokens: tokens,
    });
    const reply: FakeReply = body.tool_choice === "none"
      ? { text: "(summary) the person asked for a task." }
      : options.replies[next++] ?? { text: "done" };
    const toolCalls = (reply.tool_calls ?? []).map((c, i) => ({
      id: `call_${chats.length}_${i}`,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
    }));
    const message = {
      role: "assistant",
      content: reply.text ?? "",
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    };
    const finish = toolCalls.length ? "tool_calls" : "stop";
    const usage = { prompt_tokens: tokens, completion_tokens: 10, total_tokens: tokens + 10 };
    if (!body.stream) {
      return Response.json({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 0,
        model: FAKE_MODEL,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    const chunk = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
    const base = {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 0,
      model: FAKE_MODEL,
    };
    let sse = chunk({
      ...base,
      choices: [{
        index: 0,
        delta: {
          role: "assistant",
          content: message.content,
          ...(toolCalls.length
            ? { tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }
            : {}),
        },
        finish_reason: null,
      }],
    });
    sse += chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (body.stream_options?.include_usage) sse += chunk({ ...base, choices: [], usage });
    sse += "data: [DONE]\n\n";
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    chats,
    probes,
    stop: () => server.shutdown(),
  };
}
