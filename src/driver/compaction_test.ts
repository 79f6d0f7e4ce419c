import assert from "node:assert/strict";
import {
  COMPACT_INSTRUCTION,
  compactConversation,
  cutPoint,
  isSummary,
  requestsIn,
  summaryMessage,
} from "./compaction.ts";
import type { ChatMessage } from "../util/chat.ts";
import { type ModelClient, ModelError } from "../model/types.ts";
import type { DriverEvent } from "./events.ts";
import { type Label, UNTRUSTED_PRIVATE } from "../util/label.ts";

const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: "{}" } }],
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: "x" });

Deno.test("compaction: a cut never parts a call from its result, and spares the newest round", () => {
  const m: ChatMessage[] = [
    { role: "user", content: "task one" },
    call("a"),
    result("a"),
    call("b"),
    result("b"),
    call("c"),
    result("c"),
  ];
  assert.equal(cutPoint(m, () => true), 5, "up to the newest call, never into it");
  assert.equal(cutPoint(m, (j) => j <= 3), 3);
  assert.equal(cutPoint(m, () => false), null);
  for (let j = 1; j <= 6; j++) {
    const at = cutPoint(m, (k) => k <= j);
    if (at !== null) assert.notEqual(m[at].role, "tool", `cut ${at} would orphan a result`);
  }
});

Deno.test("compaction: the person's requests are kept verbatim across summaries", () => {
  const first = summaryMessage(
    "worked on it",
    requestsIn([
      { role: "user", content: 'do "this"\nand that' },
      call("a"),
    ]),
  );
  assert.ok(isSummary(first));
  const again = requestsIn([first, { role: "user", content: "then this" }]);
  assert.deepEqual(again, ['do "this"\nand that', "then this"]);
  assert.equal(
    cutPoint([first, call("x"), result("x")], () => true),
    null,
    "a summary alone stays",
  );
});

/** A planner that answers each request with the next of `texts`, or fails with `error`. */
function summariser(texts: string[], error?: Error) {
  const requests: { toolChoice?: string; messages: ChatMessage[] }[] = [];
  const planner = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    complete: (r: { toolChoice?: "none"; messages: ChatMessage[] }) => {
      requests.push(r);
      if (error) return Promise.reject(error);
      return Promise.resolve({
        text: texts.shift() ?? "",
        toolCalls: [],
        finishReason: "stop",
        problems: [],
      });
    },
  } as unknown as ModelClient;
  return { planner, requests };
}

function run(planner: ModelClient, once: boolean, kept: unknown[], events: DriverEvent[]) {
  return {
    planner,
    system: { role: "system" as const, content: "s" },
    specs: [],
    window: { tokens: 100_000, by: "config" as const, fit: 100_000 },
    once,
    turn: 3,
    summaryLabel: () => UNTRUSTED_PRIVATE,
    keep: (summary: ChatMessage, rest: readonly ChatMessage[], label: Label) => {
      kept.push({ summary, rest: rest.length, label });
      return Promise.resolve();
    },
    emit: (e: DriverEvent) => events.push(e),
  };
}

const ROUNDS: ChatMessage[] = [
  { role: "user", content: "task one" },
  call("a"),
  result("a"),
  call("b"),
  result("b"),
];

Deno.test("compaction: /compact asks once for a summary, in text, and keeps it at the label given", async () => {
  const { planner, requests } = summariser(["<think>hm</think> did a"]);
  const kept: { summary: ChatMessage; rest: number; label: Label }[] = [];
  const events: DriverEvent[] = [];
  const replaced = await compactConversation(ROUNDS, run(planner, true, kept, events));
  assert.equal(replaced, 3);
  assert.equal(requests.length, 1);
  assert.equal(requests[0].toolChoice, "none");
  assert.equal(requests[0].messages.at(-1)?.content, COMPACT_INSTRUCTION);
  assert.equal(kept.length, 1);
  assert.equal(kept[0].rest, 2, "the newest round stays");
  assert.equal(kept[0].label, UNTRUSTED_PRIVATE);
  assert.ok(isSummary(kept[0].summary));
  assert.match(kept[0].summary.content as string, /did a/);
  assert.ok(!(kept[0].summary.content as string).includes("hm"), "reasoning is not kept");
  assert.deepEqual(requestsIn([kept[0].summary]), ["task one"]);
  assert.deepEqual(events.map((e) => e.type), ["model_request", "notice"]);
});

Deno.test("compaction: a conversation that fits is left alone; a failed request ends the turn", async () => {
  const fits = summariser(["never"]);
  assert.equal(await compactConversation(ROUNDS, run(fits.planner, false, [], [])), 0);
  assert.equal(fits.requests.length, 0);
  const aborted = new ModelError("aborted", {}, "http://127.0.0.1:1/v1");
  const fails = summariser([], aborted);
  const done = await compactConversation(ROUNDS, run(fails.planner, true, [], []));
  assert.equal(typeof done, "object");
  if (typeof done === "object") assert.equal(done.status, "aborted");
  const empty = summariser(["   "]);
  const kept: unknown[] = [];
  assert.equal(await compactConversation(ROUNDS, run(empty.planner, true, kept, [])), 0);
  assert.equal(kept.length, 0, "an empty summary replaces nothing");
});
