/**
 * The conversation stays well-formed (issue 25, majors 6 and 8): whatever turns, failures, stops
 * and compactions come, no request holds two user messages in a row, a resend takes the place of
 * the message that got no reply, and the person's requests survive any number of summaries. The
 * driver runs with the real policy layer against a planner scripted in-process, which checks
 * every request it is sent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import fc from "../../test/support/fast_check.ts";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { driverPolicy, toolPolicy } from "../policy/api.ts";
import { storedLineLabel } from "../policy/driver_labels.ts";
import { loadTranscript, TranscriptWriter } from "../state/transcript.ts";
import { defineTool, shown, type ToolDef } from "../tools/tool.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
import {
  type ChatMessage,
  type CompleteRequest,
  type ModelClient,
  ModelError,
  type ModelReply,
} from "../model/types.ts";
import { Driver } from "./driver.ts";
import type { DriverEvent } from "./events.ts";
import { SUMMARY_HEADER } from "./compaction.ts";

const none = z.strictObject({});
/** A tool whose result is long enough that a small window fills in a few rounds. */
const reader = defineTool({
  name: "read_file",
  description: "reads",
  routing: z.strictObject({ path: z.string() }),
  content: none,
  handler: (args) =>
    Promise.resolve(shown(`${args.path}:\n${"a line of the file\n".repeat(60)}`, TRUSTED_PUBLIC)),
});
/** A tool during which the person presses Esc: it stops the turn it runs in. */
const stopper = (stop: () => void) =>
  defineTool({
    name: "ask_user",
    description: "the person presses Esc while it runs",
    routing: none,
    content: none,
    handler: () => {
      stop();
      return Promise.resolve(shown("stopped", TRUSTED_PUBLIC));
    },
  });

/** What one planner request is answered with. */
type Step = "answer" | "call" | "stop_call" | "error" | "esc" | "empty";
/**
 * What one summary request is answered with: a copy of the summary before it, among others. A
 * copy is whole but for the person's words, which it rewords (`MARK-n` becomes `mark n`): a
 * model's summary is no record of what the person said, only the words kept beside it are.
 */
type SummaryStep = "fresh" | "copy" | "error" | "empty";

const ENDPOINT = "http://127.0.0.1:1/v1";

/** Two user messages in a row in `messages`, as an index, or -1. */
function userPair(messages: readonly ChatMessage[], from = 0): number {
  for (let i = from + 1; i < messages.length; i++) {
    if (messages[i].role === "user" && messages[i - 1].role === "user") return i - 1;
  }
  return -1;
}

/**
 * A planner scripted request by request: each turn's requests take the next of `steps`, each
 * summary request the next of `summaries` (a copy repeats the summary it was sent, as small
 * models do). It checks every request: no two user messages in a row, ever.
 */
class ScriptedPlanner implements ModelClient {
  readonly endpoint = ENDPOINT;
  readonly model = "m";
  readonly requests: CompleteRequest[] = [];
  readonly broken: string[] = [];
  steps: Step[] = [];
  summaries: SummaryStep[] = [];
  /** Stops the turn under way (Esc). */
  esc: () => void = () => {};
  #calls = 0;

  complete(r: CompleteRequest): Promise<ModelReply> {
    this.requests.push(r);
    const at = userPair(r.messages);
    if (at >= 0) {
      this.broken.push(
        `request ${this.requests.length}${r.toolChoice ? " (summary)" : ""}: messages ${at} and ${
          at + 1
        } are both the person's: ${JSON.stringify(r.messages.map((m) => m.role))}`,
      );
    }
    if (r.toolChoice === "none") return this.#summary(r);
    const step = this.steps.shift() ?? "answer";
    if (step === "error") return Promise.reject(new ModelError("unreachable", {}, ENDPOINT));
    if (step === "esc") {
      this.esc();
      return Promise.reject(new ModelError("aborted", {}, ENDPOINT));
    }
    const id = `call_${++this.#calls}`;
    const call = (name: string, args: unknown) => ({
      text: "",
      toolCalls: [{
        id,
        type: "function" as const,
        function: { name, arguments: JSON.stringify(args) },
      }],
      finishReason: "tool_calls",
      problems: [],
    });
    if (step === "call") return Promise.resolve(call("read_file", { path: `f${this.#calls}.ts` }));
    if (step === "stop_call") return Promise.resolve(call("ask_user", {}));
    const text = step === "empty" ? "" : `answer ${this.requests.length}`;
    return Promise.resolve({ text, toolCalls: [], finishReason: "stop", problems: [] });
  }

  #summary(r: CompleteRequest): Promise<ModelReply> {
    const step = this.summaries.shift() ?? "fresh";
    if (step === "error") return Promise.reject(new ModelError("unreachable", {}, ENDPOINT));
    const first = r.messages[1];
    const text = step === "empty"
      ? ""
      : step === "copy" && first?.role === "user" && first.content.startsWith(SUMMARY_HEADER)
      ? `As summarised before: ${first.content.replaceAll("MARK-", "mark ")}`
      : `worked through ${r.messages.length} messages`;
    return Promise.resolve({ text, toolCalls: [], finishReason: "stop", problems: [] });
  }
}

interface Harness {
  planner: ScriptedPlanner;
  driver: Driver;
  events: DriverEvent[];
  /** A new driver over the transcript as `--resume` loads it. */
  resume(): Promise<Driver>;
  /** One turn of the person's, stoppable by the planner's `esc` and the stopping tool. */
  turn(text: string, steps: Step[]): Promise<string>;
}

type Fx = Parameters<Parameters<typeof withPolicy>[1]>[0];

/** A driver over `fx` with its own planner, transcript (in `dir`) and window. */
function harness(fx: Fx, dir: string, contextWindow: number): Harness {
  const planner = new ScriptedPlanner();
  const events: DriverEvent[] = [];
  const transcript = join(dir, `transcript-${crypto.randomUUID()}.jsonl`);
  let stop = new AbortController();
  const tools = [reader, stopper(() => stop.abort())] as ToolDef<unknown>[];
  const make = (history?: Awaited<ReturnType<typeof loadTranscript>>) =>
    new Driver({
      planner,
      processor: { complete: () => Promise.reject(new Error("no processor")) } as never,
      policy: driverPolicy(fx.policy),
      decide: toolPolicy(fx.policy, fx.ctx.session),
      settings: { ...fx.settings, contextWindow },
      session: fx.ctx.session,
      transcript: new TranscriptWriter(transcript),
      emit: (e) => events.push(e),
      tools,
      systemPrompt: () => ({ text: "You are a test planner.", label: TRUSTED_PUBLIC }),
      history: history?.messages,
      historyLabels: history?.lines.map(storedLineLabel),
      historySummary: history?.summary,
    });
  const h: Harness = {
    planner,
    driver: make(),
    events,
    resume: async () => (h.driver = make(await loadTranscript(transcript))),
    turn: async (text, steps) => {
      stop = new AbortController();
      planner.esc = () => stop.abort();
      planner.steps = [...steps];
      const outcome = await h.driver.runTurn(text, { signal: stop.signal, maxReplies: 8 });
      return outcome.status;
    },
  };
  return h;
}

async function withFixture(fn: (fx: Fx, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bb-conversation-" });
  try {
    await withPolicy({ files: { "a.txt": "A" }, workers: 1 }, (fx) => fn(fx, dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function withDriver(contextWindow: number, fn: (h: Harness) => Promise<void>): Promise<void> {
  return withFixture((fx, dir) => fn(harness(fx, dir, contextWindow)));
}

/** The person's messages of a request, as sent. */
function personWords(r: CompleteRequest): string[] {
  return r.messages.filter((m) => m.role === "user").map((m) => m.content as string);
}

Deno.test("conversation: a resend after a failed turn takes the place of the unanswered message", async () => {
  await withDriver(100_000, async (h) => {
    assert.equal(await h.turn("fix the bug in a.txt", ["error"]), "error");
    assert.equal(await h.turn("fix the bug in a.txt", ["answer"]), "finished");
    assert.deepEqual(h.planner.broken, []);
    const last = h.planner.requests.at(-1)!;
    assert.deepEqual(personWords(last), ["fix the bug in a.txt"], "sent once, not twice");
    assert.deepEqual(h.driver.messages.map((m) => m.role), ["user", "assistant"]);
  });
});

Deno.test("conversation: different words after Esc keep the earlier ones, in the one message", async () => {
  await withDriver(100_000, async (h) => {
    assert.equal(await h.turn("delete the old logs", ["esc"]), "aborted");
    assert.equal(await h.turn("no: only list them", ["answer"]), "finished");
    assert.deepEqual(h.planner.broken, []);
    const words = personWords(h.planner.requests.at(-1)!);
    assert.equal(words.length, 1);
    assert.ok(
      words[0].indexOf("delete the old logs") < words[0].indexOf("no: only list them"),
      words[0],
    );
    assert.ok(
      h.events.some((e) => e.type === "notice" && /no reply/.test(e.text)),
      "the person is told their earlier words go along",
    );
  });
});

Deno.test("conversation: a resumed transcript that ends on an unanswered message is resent whole", async () => {
  await withDriver(100_000, async (h) => {
    assert.equal(await h.turn("first", ["answer"]), "finished");
    assert.equal(await h.turn("rename foo to bar", ["error"]), "error");
    await h.resume();
    assert.equal(await h.turn("rename foo to bar", ["answer"]), "finished");
    assert.deepEqual(h.planner.broken, []);
    assert.deepEqual(personWords(h.planner.requests.at(-1)!), ["first", "rename foo to bar"]);
    // And once more from the transcript the resend wrote.
    await h.resume();
    assert.equal(await h.turn("and then?", ["answer"]), "finished");
    assert.deepEqual(h.planner.broken, []);
    assert.deepEqual(personWords(h.planner.requests.at(-1)!), [
      "first",
      "rename foo to bar",
      "and then?",
    ]);
  });
});

Deno.test("conversation: six compactions by a summariser that copies the summary before it keep every request", async () => {
  await withDriver(100_000, async (h) => {
    const asked: string[] = [];
    for (let i = 1; i <= 7; i++) {
      const words = `request ${i}: "${"do the thing ".repeat(i)}"\nthen stop (MARK-${i})`;
      asked.push(words);
      assert.equal(await h.turn(words, ["call", "answer"]), "finished");
      if (i === 7) break;
      h.planner.summaries = ["copy"];
      const done = await h.driver.compact();
      assert.ok(done.ok, done.error);
      // Halfway, the session is resumed from its transcript: the requests are data there too.
      if (i === 3) await h.resume();
    }
    assert.deepEqual(h.planner.broken, []);
    const summaries = h.planner.requests.filter((r) => r.toolChoice === "none");
    assert.equal(summaries.length, 6);
    const last = h.planner.requests.at(-1)!.messages;
    const summary = last[1].content!;
    assert.ok(summary.startsWith(SUMMARY_HEADER));
    // Each of the six summarised requests verbatim in the summary, the seventh after it.
    for (const words of asked.slice(0, 6)) {
      assert.ok(summary.includes(JSON.stringify(words)), words);
    }
    assert.ok(!summary.includes("MARK-7"));
    assert.ok(last.some((m) => m.role === "user" && m.content === asked[6]));
    assert.doesNotMatch(summary, /left out/);
  });
});

Deno.test("conversation: past their budget the oldest requests are left out, and the count is said", async () => {
  // A 4,000-token window keeps 500 tokens of requests: about three of these.
  await withDriver(4_000, async (h) => {
    const asked: string[] = [];
    for (let i = 1; i <= 7; i++) {
      const words = `request ${i} (MARK-${i}): ${"please do the thing carefully ".repeat(20)}`;
      asked.push(words);
      assert.equal(await h.turn(words, ["answer"]), "finished");
      if (i === 7) break;
      const done = await h.driver.compact();
      assert.ok(done.ok, done.error);
    }
    assert.deepEqual(h.planner.broken, []);
    const summary = h.planner.requests.at(-1)!.messages[1].content!;
    const kept = asked.slice(0, 6).filter((w) => summary.includes(JSON.stringify(w)));
    assert.ok(kept.length >= 2 && kept.length < 6, `${kept.length} kept`);
    assert.deepEqual(kept, asked.slice(6 - kept.length, 6), "the newest are the ones kept");
    const left = 6 - kept.length;
    assert.match(summary, new RegExp(`the ${left} oldest requests left out for room`));
    assert.ok(
      h.events.some((e) => e.type === "notice" && /oldest request.* left out/.test(e.text)),
      "the person is told",
    );
  });
});

const STEPS: Step[] = ["answer", "call", "stop_call", "error", "esc", "empty"];
const SUMMARY_STEPS: SummaryStep[] = ["fresh", "copy", "error", "empty"];
/** The person's words: the same again (with spaces), different, longer, and one long paste. */
const TEXTS = [
  "fix the bug",
  " fix the bug ",
  "add a test",
  "fix the bug and add a test",
  `here is the log:\n${"a line of a long log\n".repeat(40)}`,
];

type Command =
  | { kind: "turn"; text: string; steps: Step[]; summaries: SummaryStep[] }
  | { kind: "compact"; summaries: SummaryStep[] }
  | { kind: "resume" }
  | { kind: "clear" };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("turn" as const),
      text: fc.constantFrom(...TEXTS),
      steps: fc.array(fc.constantFrom(...STEPS), { maxLength: 5 }),
      summaries: fc.array(fc.constantFrom(...SUMMARY_STEPS), { maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("compact" as const),
      summaries: fc.array(fc.constantFrom(...SUMMARY_STEPS), { maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("clear" as const) }) },
);

/** What is wrong with the stored conversation: the person's messages must never be two in a row. */
function shapeProblem(messages: readonly ChatMessage[]): string | null {
  const summary = messages[0]?.role === "user" && messages[0].content.startsWith(SUMMARY_HEADER);
  // The summary may be followed by the person's words (a cut on them): they are sent as one.
  const at = userPair(messages, summary ? 1 : 0);
  if (at >= 0) {
    return `messages ${at} and ${at + 1}: ${JSON.stringify(messages.map((m) => m.role))}`;
  }
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") open.delete(m.tool_call_id);
    else if (open.size > 0) return `a call without its result before a ${m.role} message`;
    if (m.role === "assistant") { for (const c of m.tool_calls ?? []) open.add(c.id); }
  }
  return null;
}

Deno.test("conversation: over random turns, failures, stops, compactions and resumes, every request alternates", async () => {
  await withFixture(async (fx, dir) => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 16 }), async (commands) => {
        // A window that a few rounds fill, so that compaction comes by itself too.
        const h = harness(fx, dir, 1_600);
        /** The words of a turn that got no reply, which the next turn must still send. */
        let unanswered: string | null = null;
        for (const c of commands) {
          const sentBefore = h.planner.requests.length;
          if (c.kind === "turn") {
            h.planner.summaries = [...c.summaries];
            await h.turn(c.text, c.steps);
            const first = h.planner.requests.slice(sentBefore).find((r) => !r.toolChoice);
            if (unanswered !== null && first && unanswered !== c.text.trim()) {
              const words = personWords(first).join("\n");
              assert.ok(words.includes(unanswered), "the earlier words were sent again");
            }
            const last = h.driver.messages.at(-1);
            unanswered = last?.role === "user" ? last.content.trim() : null;
          } else if (c.kind === "compact") {
            h.planner.summaries = [...c.summaries];
            await h.driver.compact();
          } else if (c.kind === "resume") await h.resume();
          else {
            await h.driver.clear();
            unanswered = null;
          }
          assert.deepEqual(h.planner.broken, [], JSON.stringify(commands));
          const problem = shapeProblem(h.driver.messages);
          assert.equal(problem, null, `${problem} after ${JSON.stringify(commands)}`);
        }
        // And the transcript, resumed, goes on well-formed.
        await h.resume();
        assert.equal(shapeProblem(h.driver.messages), null);
        await h.turn("and now?", ["answer"]);
        assert.deepEqual(h.planner.broken, [], JSON.stringify(commands));
      }),
      { numRuns: 60 },
    );
  });
});
