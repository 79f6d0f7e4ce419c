/** The verdict value: one audit entry builder, and the one settle step. No worker, no person. */
import assert from "node:assert/strict";
import { TRUSTED_PRIVATE, TRUSTED_PUBLIC, UNTRUSTED_PRIVATE } from "../util/label.ts";
import {
  allowQuietly,
  type AuditDraft,
  auditEntryOf,
  type AuditLine,
  type Seat,
  settle,
  type Settled,
  type Verdict,
} from "./verdict.ts";
import { doneLine, recordDecision, recordDone, refuseQuietly } from "./verdict.ts";

interface T {
  grants: string;
  refusal: string;
  question: string;
  answer: boolean;
  keep: string;
}

const allow = (audit: AuditLine | null, more: Partial<Settled<T>> = {}): Settled<T> =>
  ({ kind: "allow", grants: "go", audit, ...more }) as Settled<T>;

Deno.test("auditEntryOf: the log's own key order, whatever order the line was written in", () => {
  const cases: [string, AuditLine, string][] = [
    [
      "a write approved: labels after the routing, no empty reason",
      {
        reason: undefined,
        by: "person",
        decision: "write approved",
        labels: { content: TRUSTED_PUBLIC },
        routing: { path: "a", via_ref: false, new_file: true },
        tool: "write_file",
      },
      '{"tool":"write_file","routing":{"path":"a","via_ref":false,"new_file":true},' +
      '"labels":{"content":{"integrity":"T","confidentiality":"pub"}},"decision":"write approved",' +
      '"by":"person"}',
    ],
    [
      "a run: inputs before labels, the reason after who decided",
      {
        tool: "run",
        reason: "vouched: v1",
        by: "rule",
        decision: "ran without asking (vouched)",
        labels: {},
        inputs: { stdin: null },
        routing: { stages: [] },
      },
      '{"tool":"run","routing":{"stages":[]},"inputs":{"stdin":null},"labels":{},' +
      '"decision":"ran without asking (vouched)","by":"rule","reason":"vouched: v1"}',
    ],
    [
      "read_output: the shape before the hash",
      {
        tool: "read_output",
        routing: { ref: "ref:1", kind: "command_output" },
        sha256: "ab",
        shape: "version",
        by: "policy-file",
        decision: "asserted by shape version",
      },
      '{"tool":"read_output","routing":{"ref":"ref:1","kind":"command_output"},' +
      '"decision":"asserted by shape version","by":"policy-file","shape":"version","sha256":"ab"}',
    ],
    [
      "read_output declined: the reason before the hash",
      {
        sha256: "cd",
        reason: "not shown",
        tool: "read_output",
        routing: { ref: "ref:1", kind: "command_output" },
        labels: {},
        by: "nobody",
        decision: "declined",
      },
      '{"tool":"read_output","routing":{"ref":"ref:1","kind":"command_output"},"labels":{},' +
      '"decision":"declined","by":"nobody","reason":"not shown","sha256":"cd"}',
    ],
    [
      "ask_user answered: the answer's label given after who decided",
      {
        tool: "ask_user",
        routing: { question: "Which" },
        decision: "answered",
        by: "person",
        gave: { answer: TRUSTED_PRIVATE },
      },
      '{"tool":"ask_user","routing":{"question":"Which"},"decision":"answered","by":"person",' +
      '"labels":{"answer":{"integrity":"T","confidentiality":"priv"}}}',
    ],
    [
      "labels weighed and labels given: one object, where the weighed ones sit",
      {
        tool: "load_skill",
        routing: { name: "x" },
        labels: { input: UNTRUSTED_PRIVATE },
        decision: "loaded",
        by: "rule",
        gave: { output: TRUSTED_PUBLIC },
      },
      '{"tool":"load_skill","routing":{"name":"x"},"labels":{"input":{"integrity":"U",' +
      '"confidentiality":"priv"},"output":{"integrity":"T","confidentiality":"pub"}},' +
      '"decision":"loaded","by":"rule"}',
    ],
  ];
  for (const [name, line, expected] of cases) {
    assert.equal(JSON.stringify(auditEntryOf(allow(line))), expected, name);
    const values: unknown[] = Object.values(auditEntryOf(allow(line))!);
    assert.ok(!values.includes(undefined), name);
  }
  assert.equal(auditEntryOf(allow(null)), null, "a quiet decision leaves no entry");
});

/** A seat that answers `answer` (or fails) and writes down everything it is asked to do. */
function seat(answer: boolean | Error, said?: string) {
  const did: string[] = [];
  const recorded: AuditDraft[] = [];
  const s: Seat<T> = {
    ask: (q) => {
      did.push(`ask ${q}`);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    keep: (k) => {
      did.push(`keep ${k}`);
      return Promise.resolve(said);
    },
    notice: (text) => void did.push(`notice ${text}`),
    record: (e) => {
      did.push(`record ${e.decision}`);
      recorded.push(e);
      return Promise.resolve();
    },
  };
  return { s, did, recorded };
}

const line = (decision: string): AuditLine => ({
  tool: "run",
  routing: {},
  decision,
  by: "person",
});

const asking: Verdict<T> = {
  kind: "ask",
  question: "run it?",
  answered: (yes) =>
    yes
      ? { kind: "allow", grants: "ran", audit: line("vouched and ran"), keep: "v1", notice: "ok" }
      : { kind: "refuse", refusal: "no", audit: line("refused") },
  unasked: () => ({ kind: "refuse", refusal: "could not ask", audit: line("refused") }),
};

Deno.test("settle: asks, tells, keeps, then records; the kept decision's words become the reason", async () => {
  const table: {
    name: string;
    verdict: Verdict<T>;
    answer: boolean | Error;
    said?: string;
    did: string[];
    kind: "allow" | "refuse";
    reason?: string;
  }[] = [
    {
      name: "an allow asks nobody and is recorded",
      verdict: allow(line("ran without asking")),
      answer: true,
      did: ["record ran without asking"],
      kind: "allow",
    },
    {
      name: "a quiet allow does nothing at all",
      verdict: allowQuietly<T>("go"),
      answer: true,
      did: [],
      kind: "allow",
    },
    {
      name: "yes: the vouch is kept before the line is written, and names the reason",
      verdict: asking,
      answer: true,
      said: "v1  exactly  /bin/echo",
      did: ["ask run it?", "notice ok", "keep v1", "record vouched and ran"],
      kind: "allow",
      reason: "v1  exactly  /bin/echo",
    },
    {
      name: "no: refused and recorded, nothing kept",
      verdict: asking,
      answer: false,
      did: ["ask run it?", "record refused"],
      kind: "refuse",
    },
    {
      name: "a question that cannot be put is what unasked says",
      verdict: asking,
      answer: new Error("the terminal went away"),
      did: ["ask run it?", "record refused"],
      kind: "refuse",
    },
  ];
  for (const row of table) {
    const { s, did, recorded } = seat(row.answer, row.said);
    const settled = await settle(row.verdict, s);
    assert.equal(settled.kind, row.kind, row.name);
    assert.deepEqual(did, row.did, row.name);
    assert.equal(recorded[0]?.reason, row.reason, row.name);
  }
});

Deno.test("settle: a question nobody can answer, with no unasked, fails loudly; so does a missing seat", async () => {
  const { s } = seat(new Error("gone"));
  await assert.rejects(settle({ ...asking, unasked: undefined } as Verdict<T>, s), /gone/);
  await assert.rejects(
    settle(asking, { notice: () => {}, record: () => Promise.resolve() }),
    /cannot ask/,
  );
  await assert.rejects(
    settle(allow(line("x"), { keep: "k" }), { notice: () => {}, record: () => Promise.resolve() }),
    /cannot keep/,
  );
});

Deno.test("recordDecision, recordDone: a decision that only needs recording goes through auditEntryOf", async () => {
  const recorded: AuditDraft[] = [];
  const recorder = {
    record: (e: AuditDraft) => {
      recorded.push(e);
      return Promise.resolve();
    },
  };
  const done: AuditLine = {
    gave: { output: TRUSTED_PUBLIC },
    sha256: "ab",
    by: "person",
    decision: "file restored",
    routing: { path: "a" },
    tool: "undo",
  };
  const table: { name: string; settled: Settled<T>; entry: string | null }[] = [
    {
      name: "a line of something done: the log's key order, given labels after who decided",
      settled: doneLine(done) as Settled<T>,
      entry: '{"tool":"undo","routing":{"path":"a"},"decision":"file restored","by":"person",' +
        '"sha256":"ab","labels":{"output":{"integrity":"T","confidentiality":"pub"}}}',
    },
    {
      name: "a refusal by rule, with its reason",
      settled: {
        kind: "refuse",
        refusal: "no",
        audit: { tool: "load_skill", routing: {}, decision: "refused", by: "rule", reason: "r" },
      },
      entry: '{"tool":"load_skill","routing":{},"decision":"refused","by":"rule","reason":"r"}',
    },
    { name: "a quiet refusal leaves no line", settled: refuseQuietly<T>("no"), entry: null },
  ];
  for (const row of table) {
    recorded.length = 0;
    const back = await recordDecision(recorder, row.settled);
    assert.equal(back, row.settled, row.name);
    assert.deepEqual(
      recorded.map((e) => JSON.stringify(e)),
      row.entry ? [row.entry] : [],
      row.name,
    );
    assert.deepEqual(recorded[0] ?? null, auditEntryOf(row.settled), row.name);
  }
  recorded.length = 0;
  await recordDone(recorder, done);
  assert.deepEqual(recorded, [auditEntryOf(doneLine(done))]);
  // One that tells the person or keeps a decision needs a whole seat: refused loudly, unrecorded.
  recorded.length = 0;
  await assert.rejects(recordDecision(recorder, allow(line("x"), { notice: "hi" })), /seat/);
  await assert.rejects(recordDecision(recorder, allow(line("x"), { keep: "v1" })), /seat/);
  assert.deepEqual(recorded, []);
});
