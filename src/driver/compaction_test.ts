import assert from "node:assert/strict";
import {
  COMPACT_INSTRUCTION,
  compactConversation,
  CUT_REQUEST,
  cutPoint,
  keptWithin,
  legacyRequests,
  requestsIn,
  type Summary,
  SUMMARY_HEADER,
  summaryMessage,
} from "./compaction.ts";
import { estimateTokens } from "./context_window.ts";
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

/** A summary as compaction makes it, of `text` with `requests` beside it. */
function summaryOf(text: string, kept: string[], leftOut = 0): Summary {
  const requests = { kept, leftOut };
  return { message: summaryMessage(text, requests), requests };
}

Deno.test("compaction: the person's requests are carried from the data beside a summary", () => {
  const first = summaryOf(
    "worked on it",
    requestsIn([
      { role: "user", content: 'do "this"\nand that' },
      call("a"),
    ], null).requests,
  );
  assert.ok(first.message.content!.startsWith(SUMMARY_HEADER));
  assert.ok(first.message.content!.includes(JSON.stringify('do "this"\nand that')));
  const again = requestsIn([first.message, { role: "user", content: "then this" }], first);
  assert.deepEqual(again, { requests: ['do "this"\nand that', "then this"], leftOut: 0 });
  assert.equal(
    cutPoint([first.message, call("x"), result("x")], () => true, first.message),
    null,
    "a summary alone stays",
  );
});

Deno.test("compaction: a summary that quotes the one before it loses no request", () => {
  const before = summaryOf("read a.ts", ["REQUEST-ONE"]);
  // The model quotes the whole summary before, requests and all, and then garbles them.
  const quoting = summaryOf(
    `As before: ${before.message.content!.replace("REQUEST-ONE", "request one")}`,
    requestsIn([before.message, { role: "user", content: "REQUEST-TWO" }], before).requests,
  );
  const next = requestsIn([quoting.message, { role: "user", content: "REQUEST-THREE" }], quoting);
  assert.deepEqual(next.requests, ["REQUEST-ONE", "REQUEST-TWO", "REQUEST-THREE"]);
  // A message of the person's that looks like a summary is theirs: its words are the request.
  const lookalike: ChatMessage = { role: "user", content: before.message.content! };
  assert.deepEqual(requestsIn([lookalike], null).requests, [before.message.content]);
});

Deno.test("compaction: the requests are kept newest first within the budget, the rest counted", () => {
  const tokens = (t: string) => estimateTokens([{ role: "user", content: t }]);
  const requests = ["r1 " + "a".repeat(300), "r2 " + "b".repeat(300), "r3 short", "r4 short"];
  const budget = tokens(requests[1]) + tokens(requests[2]) + tokens(requests[3]);
  assert.deepEqual(keptWithin(requests, 0, budget), { kept: requests.slice(1), leftOut: 1 });
  assert.deepEqual(keptWithin(requests, 5, budget), { kept: requests.slice(1), leftOut: 6 });
  assert.deepEqual(keptWithin(requests, 0, budget * 10), { kept: requests, leftOut: 0 });
  // Nothing older is kept past one that did not fit, though a shorter one would have.
  assert.deepEqual(keptWithin(["tiny", requests[0], "r3"], 0, tokens("r3") + 20), {
    kept: ["r3"],
    leftOut: 2,
  });
  // The newest alone larger than the budget: its start, cut with a note.
  const big = "start " + "word ".repeat(2_000);
  const cut = keptWithin(["older", big], 0, 200);
  assert.equal(cut.leftOut, 1);
  assert.equal(cut.kept.length, 1);
  assert.ok(cut.kept[0].startsWith("start word"));
  assert.ok(cut.kept[0].endsWith(CUT_REQUEST));
  assert.ok(tokens(cut.kept[0]) <= 200);
  const message = summaryMessage("s", cut).content!;
  assert.match(message, /the 1 oldest request left out for room/);
});

Deno.test("compaction: a summary written before the requests were data gives its own, not a quote's", () => {
  const header = "\n\nThe person's requests so far, verbatim:\n";
  const quoted = `${header}["QUOTED"] and more words`;
  const old = `${SUMMARY_HEADER}\nAs before:${quoted}${header}${JSON.stringify(["A", 'B "b"'])}`;
  assert.deepEqual(legacyRequests(old), { kept: ["A", 'B "b"'], leftOut: 0 });
  assert.deepEqual(legacyRequests(`${SUMMARY_HEADER}\nnothing kept`), { kept: [], leftOut: 0 });
  assert.deepEqual(legacyRequests(`x${header}not json`), { kept: [], leftOut: 0 });
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

function run(
  planner: ModelClient,
  once: boolean,
  kept: unknown[],
  events: DriverEvent[],
  summary: Summary | null = null,
) {
  return {
    planner,
    system: { role: "system" as const, content: "s" },
    specs: [],
    window: { tokens: 100_000, by: "config" as const, fit: 100_000 },
    once,
    turn: 3,
    summary,
    summaryLabel: () => UNTRUSTED_PRIVATE,
    keep: (summary: Summary, rest: readonly ChatMessage[], label: Label) => {
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
  const kept: { summary: Summary; rest: number; label: Label }[] = [];
  const events: DriverEvent[] = [];
  const replaced = await compactConversation(ROUNDS, run(planner, true, kept, events));
  assert.equal(replaced, 3);
  assert.equal(requests.length, 1);
  assert.equal(requests[0].toolChoice, "none");
  assert.equal(requests[0].messages.at(-1)?.content, COMPACT_INSTRUCTION);
  assert.equal(kept.length, 1);
  assert.equal(kept[0].rest, 2, "the newest round stays");
  assert.equal(kept[0].label, UNTRUSTED_PRIVATE);
  const content = kept[0].summary.message.content as string;
  assert.ok(content.startsWith(SUMMARY_HEADER));
  assert.match(content, /did a/);
  assert.ok(!content.includes("hm"), "reasoning is not kept");
  assert.deepEqual(kept[0].summary.requests, { kept: ["task one"], leftOut: 0 });
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

Deno.test("compaction: no summary request holds two user messages in a row", async () => {
  const before = summaryOf("earlier", ["task zero"]);
  // The chunk opens with the summary, then the person's words; and ends on the person's words.
  const conversation: ChatMessage[] = [
    before.message,
    { role: "user", content: "task one" },
    { role: "assistant", content: "done one" },
    { role: "user", content: "task two" },
    call("a"),
    result("a"),
  ];
  const { planner, requests } = summariser(["did it"]);
  const kept: { summary: Summary; rest: number }[] = [];
  const cut = (j: number) => j <= 4;
  assert.equal(cutPoint(conversation, cut, before.message), 4, "the cut falls after task two");
  const replaced = await compactConversation(
    conversation,
    run(planner, true, kept, [], before),
  );
  assert.equal(replaced, 4);
  const sent = requests[0].messages;
  assert.deepEqual(sent.map((m) => m.role), ["system", "user", "assistant", "user"]);
  assert.ok(sent[1].content!.startsWith(before.message.content!));
  assert.ok(sent[1].content!.endsWith("task one"));
  assert.ok(sent[3].content!.startsWith("task two"));
  assert.ok(sent[3].content!.endsWith(COMPACT_INSTRUCTION));
  assert.deepEqual(kept[0].summary.requests.kept, ["task zero", "task one", "task two"]);
});
