import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ownWordsLabel,
  personWordsLabel,
  resumeContext,
  resumedContextLabel,
  storedLineLabel,
  storedResultLabel,
  summaryLabel,
  systemPromptLabel,
  withheldResultLabel,
} from "./driver_labels.ts";
import {
  formatLabel,
  type Label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
  UNTRUSTED_PUBLIC,
} from "../util/label.ts";
import { loadTranscript, type StoredLine, TranscriptWriter } from "../state/transcript.ts";

const f = (l: Label | null) => l === null ? "null" : formatLabel(l);

Deno.test("driver labels: the person's words are (T,priv), joined with what they hand over", () => {
  const cases: [readonly Label[], string][] = [
    [[], "(T,priv)"],
    [[TRUSTED_PUBLIC], "(T,priv)"],
    [[UNTRUSTED_PUBLIC], "(U,priv)"],
    [[TRUSTED_PRIVATE, UNTRUSTED_PUBLIC], "(U,priv)"],
  ];
  for (const [alongside, want] of cases) assert.equal(f(personWordsLabel(alongside)), want);
  assert.equal(f(personWordsLabel()), "(T,priv)");
});

Deno.test("driver labels: the system prompt is (T,pub), joined with the AGENTS.md it quotes", () => {
  const cases: [Label | null, string][] = [
    [null, "(T,pub)"],
    [TRUSTED_PUBLIC, "(T,pub)"],
    [TRUSTED_PRIVATE, "(T,priv)"],
    [UNTRUSTED_PUBLIC, "(U,pub)"],
  ];
  for (const [memory, want] of cases) assert.equal(f(systemPromptLabel(memory)), want);
});

Deno.test("driver labels: the skills the prompt lists join in with the labels the port gave them", () => {
  const cases: [Label | null, Label[], string][] = [
    [null, [], "(T,pub)"],
    [null, [TRUSTED_PUBLIC, TRUSTED_PUBLIC], "(T,pub)"],
    [null, [TRUSTED_PUBLIC, TRUSTED_PRIVATE], "(T,priv)"],
    [TRUSTED_PRIVATE, [TRUSTED_PUBLIC], "(T,priv)"],
    [null, [UNTRUSTED_PUBLIC], "(U,pub)"],
  ];
  for (const [memory, skills, want] of cases) {
    assert.equal(f(systemPromptLabel(memory, skills)), want);
  }
});

Deno.test("driver labels: a summary carries the context's label; a withheld result is (T,pub)", () => {
  for (const l of [TRUSTED_PUBLIC, TRUSTED_PRIVATE, UNTRUSTED_PUBLIC, UNTRUSTED_PRIVATE]) {
    assert.equal(f(summaryLabel(l)), f(l));
  }
  assert.equal(f(withheldResultLabel()), "(T,pub)");
});

Deno.test("driver labels: a stored result without a recorded label is the worst, never public", () => {
  const cases: [Label | null, string][] = [
    [null, "(U,priv)"],
    [TRUSTED_PUBLIC, "(T,pub)"],
    [UNTRUSTED_PUBLIC, "(U,pub)"],
    [TRUSTED_PRIVATE, "(T,priv)"],
  ];
  for (const [recorded, want] of cases) assert.equal(f(storedResultLabel(recorded)), want);
});

Deno.test("driver labels: Brave Bot's own words are (T,pub), and so is a withheld result's notice", () => {
  assert.equal(f(ownWordsLabel()), "(T,pub)");
  assert.equal(f(withheldResultLabel()), f(ownWordsLabel()));
});

Deno.test("driver labels: what a restored line placed, by what its line recorded", () => {
  const cases: [StoredLine, string][] = [
    [{ kind: "message", label: TRUSTED_PRIVATE }, "(T,priv)"],
    [{ kind: "message", label: UNTRUSTED_PUBLIC }, "(U,pub)"],
    // An unreadable label is the worst, never trusted.
    [{ kind: "message", label: "unreadable" }, "(U,priv)"],
    [{ kind: "summary", label: "unreadable" }, "(U,priv)"],
    // The planner's own reply records none and places nothing.
    [{ kind: "message", label: null }, "null"],
    // A summary without a label is the worst: it speaks for what it replaced.
    [{ kind: "summary", label: null }, "(U,priv)"],
    [{ kind: "summary", label: TRUSTED_PUBLIC }, "(T,pub)"],
    // The result the loader wrote for a call that never finished: Brave Bot's own words.
    [{ kind: "interrupted", label: null }, "(T,pub)"],
  ];
  for (const [line, want] of cases) {
    assert.equal(f(storedLineLabel(line)), want, JSON.stringify(line));
  }
});

Deno.test("driver labels: a resumed context is the join of what its lines placed, (T,pub) when none did", () => {
  const m = (label: StoredLine["label"]): StoredLine => ({ kind: "message", label });
  const cases: [StoredLine[], string][] = [
    [[], "(T,pub)"],
    [[m(null), m(null)], "(T,pub)"],
    [[m(TRUSTED_PRIVATE), m(null)], "(T,priv)"],
    [[m(UNTRUSTED_PUBLIC), m(TRUSTED_PRIVATE)], "(U,priv)"],
    [[m("unreadable")], "(U,priv)"],
    [[{ kind: "summary", label: null }], "(U,priv)"],
  ];
  for (const [lines, want] of cases) assert.equal(f(resumedContextLabel(lines)), want);
});

Deno.test("driver labels: resuming, the policy layer places the context its lines left, once", () => {
  const m = (label: StoredLine["label"]): StoredLine => ({ kind: "message", label });
  const cases: [StoredLine[], string][] = [
    [[], "(T,pub)"],
    [[m(TRUSTED_PRIVATE), m(null)], "(T,priv)"],
    [[m(UNTRUSTED_PUBLIC), { kind: "summary", label: null }], "(U,priv)"],
  ];
  for (const [lines, want] of cases) {
    const placed: string[] = [];
    const answered = resumeContext({ placeInContext: (l) => void placed.push(f(l)) }, lines);
    assert.deepEqual(placed, [want]);
    assert.equal(f(answered), want);
  }
});

Deno.test("driver labels: a transcript resumes at the label its lines placed, from the last /clear on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-resume-" });
  try {
    const path = join(dir, "t.jsonl");
    const w = new TranscriptWriter(path);
    await w.message({ role: "user", content: "before" }, UNTRUSTED_PRIVATE);
    await w.clear();
    await w.message({ role: "user", content: "go" }, TRUSTED_PRIVATE);
    await w.message({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "a", type: "function", function: { name: "read_file", arguments: "{}" } }],
    });
    const loaded = await loadTranscript(path);
    assert.equal(f(resumedContextLabel(loaded.contextLines)), "(T,priv)");
    assert.deepEqual(loaded.lines.map((l) => f(storedLineLabel(l))), [
      "(T,priv)",
      "null",
      "(T,pub)",
    ]);
    await w.message({ role: "tool", tool_call_id: "a", content: "x" }, UNTRUSTED_PUBLIC);
    assert.equal(f(resumedContextLabel((await loadTranscript(path)).contextLines)), "(U,priv)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
