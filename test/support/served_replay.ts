/**
 * A server replayed on 127.0.0.1 from test/fixtures/served/ (each fixture cites the upstream source
 * its answers come from): its routes as written, `GET /v1/models` listing `listed` when the fixture
 * does not say, and a chat completion that calls the tool, writes the call as text, or answers in
 * prose. Any other path is a 404, as the servers' routers answer.
 */
interface Fixture {
  routes: Record<string, { status: number; body: unknown; text?: string }>;
}

export type Reply = "tool" | "text_call" | "prose";

export async function replayServer(fixture: string, listed: string[], reply: Reply) {
  const f = JSON.parse(
    await Deno.readTextFile(new URL(`../fixtures/served/${fixture}.json`, import.meta.url)),
  ) as Fixture;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    const key = `${req.method} ${u.pathname}${u.search}`;
    if (req.method === "POST") await req.text();
    if (key === "POST /v1/chat/completions") {
      const call = {
        id: "c1",
        type: "function",
        function: { name: "ping", arguments: '{"word":"ok"}' },
      };
      const message = reply === "tool"
        ? { role: "assistant", content: null, tool_calls: [call] }
        : reply === "text_call"
        ? {
          role: "assistant",
          content: '<tool_call>{"name": "ping", "arguments": {"word": "ok"}}</tool_call>',
        }
        : { role: "assistant", content: "ping ok" };
      return Response.json({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: reply === "tool" ? "tool_calls" : "stop" }],
      });
    }
    const r = f.routes[key];
    if (r?.text !== undefined) return new Response(r.text, { status: r.status });
    if (r) return Response.json(r.body, { status: r.status });
    if (key === "GET /v1/models") {
      return Response.json({ object: "list", data: listed.map((id) => ({ id, object: "model" })) });
    }
    return new Response("404 page not found", { status: 404 });
  });
  const root = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  return { url: `${root}/v1`, root, close: () => server.shutdown() };
}
