import assert from "node:assert/strict";
import { frameDocument, ModelProcessor, processorMessages } from "./processor.ts";
import type { CompleteRequest, ModelClient, ModelReply } from "./types.ts";
import type { ServedContext } from "./served_context.ts";

function client(served: () => Promise<ServedContext>): ModelClient & { asked: number } {
  const c = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    asked: 0,
    complete(_: CompleteRequest): Promise<ModelReply> {
      return Promise.resolve({ text: "", toolCalls: [], finishReason: "stop", problems: [] });
    },
    servedContext(): Promise<ServedContext> {
      c.asked++;
      return served();
    },
  };
  return c;
}

const OLLAMA: ServedContext = {
  server: "ollama",
  tokens: 4_096,
  source: "/api/ps",
  trained: 40_960,
  provisional: false,
  servedName: "qwen3:latest",
  anyName: false,
};

Deno.test("processor: the served window is asked once per session", async () => {
  const c = client(() => Promise.resolve(OLLAMA));
  const p = new ModelProcessor(c);
  assert.equal(await p.servedTokens(), 4_096);
  assert.equal(await p.servedTokens(), 4_096);
  assert.equal(c.asked, 1);
});

Deno.test("processor: a server that cannot be asked leaves the config's window (null)", async () => {
  const p = new ModelProcessor(client(() => Promise.reject(new Error("refused"))));
  assert.equal(await p.servedTokens(), null);
});

Deno.test("processor: a stopped call does not wait for the server's answer", async () => {
  const stop = new AbortController();
  const p = new ModelProcessor(client(() => new Promise(() => {})));
  const asked = p.servedTokens(stop.signal);
  stop.abort();
  assert.equal(await asked, null);
});

Deno.test("processor: a provisional answer (before the model is loaded) is asked again", async () => {
  const c = client(() => Promise.resolve({ ...OLLAMA, tokens: 4_096, provisional: true }));
  const p = new ModelProcessor(c);
  assert.equal(await p.servedTokens(), 4_096);
  assert.equal(await p.servedTokens(), 4_096);
  assert.equal(c.asked, 2);
});

Deno.test("processor framing: a document's exact text, its size and its final newlines", () => {
  const [system, user] = processorMessages("fix it", [
    { name: "ref:0", text: "one\n" },
    { name: "ref:1", text: "none" },
    { name: "ref:2", text: "two\n\n" },
    { name: "ref:3", text: "crlf é\r\n" },
  ]);
  assert.equal(system.role, "system");
  assert.match(system.content!, /ends exactly where <\/document> begins/);
  assert.equal(
    user.content,
    "Instruction:\nfix it\n\nDocuments:\n" +
      '<document name="ref:0" bytes="4" final-newlines="1">\none\n</document>\n' +
      '<document name="ref:1" bytes="4" final-newlines="0">\nnone</document>\n' +
      '<document name="ref:2" bytes="5" final-newlines="2">\ntwo\n\n</document>\n' +
      '<document name="ref:3" bytes="9" final-newlines="1">\ncrlf é\r\n</document>',
  );
  // What sits between a tag's line and </document> is the document, byte for byte.
  for (const text of ["", "\n", "a", "a\n\n\n", "x</doc\n"]) {
    const framed = frameDocument({ name: "ref:9", text });
    const body = framed.slice(framed.indexOf(">\n") + 2, framed.length - "</document>".length);
    assert.equal(body, text);
  }
});
