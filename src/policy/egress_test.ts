/**
 * Egress as a pure evaluator (docs/contract.md §3.4): private bytes to a non-local endpoint ask,
 * once.
 */
import assert from "node:assert/strict";
import { type EgressFacts, evaluateEgress } from "./egress.ts";
import { answeredWith, auditEntryOf } from "./verdict.ts";
import type { Answer } from "../person/person.ts";
import { type Label, TRUSTED_PRIVATE, TRUSTED_PUBLIC, UNTRUSTED_PRIVATE } from "../util/label.ts";

const facts = (label: Label, over: Partial<EgressFacts> = {}): EgressFacts => ({
  endpoint: { url: "https://models.example/v1", local: false },
  role: "planner",
  tool: "read_file",
  value: { what: "The result of read_file", label, sha256: "ab" },
  before: undefined,
  asker: "person",
  ...over,
});

Deno.test("evaluateEgress: only private bytes to a non-local endpoint ask, and only once", () => {
  const send: Answer = { kind: "options", chosen: ["send"] };
  const rows: {
    name: string;
    facts: EgressFacts;
    answer?: Answer;
    allowed: boolean;
    decision?: string;
  }[] = [
    { name: "public bytes go", facts: facts(TRUSTED_PUBLIC), allowed: true },
    {
      name: "a local endpoint may receive private bytes",
      facts: facts(UNTRUSTED_PRIVATE, { endpoint: { url: "http://127.0.0.1:1/v1", local: true } }),
      allowed: true,
    },
    {
      name: "allowed before: not asked again",
      facts: facts(TRUSTED_PRIVATE, { before: true }),
      allowed: true,
    },
    {
      name: "kept back before: not asked again",
      facts: facts(TRUSTED_PRIVATE, { before: false }),
      allowed: false,
    },
    {
      name: "send",
      facts: facts(TRUSTED_PRIVATE),
      answer: send,
      allowed: true,
      decision: "private content sent to a non-local endpoint",
    },
    {
      name: "do not send",
      facts: facts(TRUSTED_PRIVATE),
      answer: { kind: "options", chosen: ["do not send"] },
      allowed: false,
      decision: "private content kept back",
    },
    {
      name: "both chosen is no choice",
      facts: facts(TRUSTED_PRIVATE),
      answer: { kind: "options", chosen: ["send", "do not send"] },
      allowed: false,
      decision: "private content kept back",
    },
    {
      name: "a skip sends nothing",
      facts: facts(TRUSTED_PRIVATE),
      answer: { kind: "skipped" },
      allowed: false,
      decision: "private content kept back",
    },
    {
      name: "own words are not a yes",
      facts: facts(TRUSTED_PRIVATE),
      answer: { kind: "text", text: "send" },
      allowed: false,
      decision: "private content kept back",
    },
  ];
  for (const row of rows) {
    const verdict = evaluateEgress(row.facts);
    assert.equal(verdict.kind === "ask", row.answer !== undefined, row.name);
    if (verdict.kind === "ask") {
      assert.match(verdict.question.question, /^The result of read_file, labelled \(T,priv\)/);
      assert.match(verdict.question.question, /to the planner at https:\/\/models\.example\/v1/);
    }
    const settled = answeredWith(verdict, row.answer);
    assert.equal(settled.kind === "allow", row.allowed, row.name);
    const entry = auditEntryOf(settled);
    if (row.decision === undefined) {
      assert.equal(entry, null, `nothing to record: ${row.name}`);
      assert.equal(settled.keep, undefined, row.name);
      continue;
    }
    assert.deepEqual(settled.keep, { sha256: "ab", allowed: row.allowed }, row.name);
    assert.deepEqual(entry, {
      tool: "read_file",
      routing: { endpoint: "https://models.example/v1", role: "planner" },
      labels: { content: TRUSTED_PRIVATE },
      decision: row.decision,
      by: "person",
      sha256: "ab",
    }, row.name);
  }
});
