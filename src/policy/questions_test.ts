import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  type AskFacts,
  type AskOutcome,
  askRefusal,
  evaluateAsk,
  evaluateQuestion,
} from "./questions.ts";
import { auditEntryOf } from "./verdict.ts";
import type { Answer, Question } from "../person/person.ts";
import { TRUSTED_PRIVATE } from "../util/label.ts";

Deno.test("ask_user: refusal is decided by count and taint alone", () => {
  fc.assert(fc.property(fc.nat(50), fc.boolean(), (count, tainted) => {
    const r = askRefusal(count, 4, tainted);
    assert.equal(r === null, !tainted && count <= 4);
  }));
});

Deno.test("evaluateAsk: the rule refuses first, then nobody can be asked, else questions go ahead", () => {
  const rows: [string, AskFacts, AskOutcome["kind"] | "ask", string | null, string | null][] = [
    [
      "may ask",
      { headers: ["A"], limit: 4, contextTainted: false, canAsk: true },
      "ask",
      null,
      null,
    ],
    [
      "tainted",
      { headers: ["A"], limit: 4, contextTainted: true, canAsk: false },
      "refused",
      "refused",
      "rule",
    ],
    [
      "too many",
      { headers: ["A", "B", "C"], limit: 2, contextTainted: false, canAsk: true },
      "refused",
      "refused",
      "rule",
    ],
    [
      "one-shot",
      { headers: ["A"], limit: 4, contextTainted: false, canAsk: false },
      "nobody",
      "declined",
      "nobody",
    ],
  ];
  for (const [name, facts, kind, decision, by] of rows) {
    const verdict = evaluateAsk(facts);
    assert.ok(verdict.kind !== "ask", name);
    assert.equal(verdict.kind === "allow" ? "ask" : verdict.refusal.kind, kind, name);
    const entry = auditEntryOf(verdict);
    assert.deepEqual(
      entry && [entry.decision, entry.by, entry.routing],
      decision === null ? null : [
        decision,
        by,
        { questions: facts.headers },
      ],
      name,
    );
    if (verdict.kind === "refuse" && verdict.refusal.kind === "refused") {
      assert.equal(entry?.reason, verdict.refusal.reason, name);
    }
  }
});

Deno.test("evaluateQuestion: remembered answers are not asked again; only offered options count", () => {
  const q: Question = {
    header: "Approach",
    question: "Which one?",
    options: [{ label: "merge" }, { label: "rebase" }],
  };
  const remembered = evaluateQuestion(q, 'chose "merge"');
  assert.deepEqual(remembered.kind === "allow" && remembered.grants, {
    said: 'chose "merge"',
    earlier: true,
  });
  assert.equal(remembered.kind === "allow" && auditEntryOf(remembered), null);
  const asked = evaluateQuestion(q, undefined);
  assert.ok(asked.kind === "ask");
  assert.equal(asked.question, q);
  const rows: [Answer, string, string][] = [
    [{ kind: "options", chosen: ["rebase", "forged"] }, 'chose "rebase"', "answered"],
    [{ kind: "options", chosen: ["forged"] }, "chose none of the options", "answered"],
    [{ kind: "text", text: "neither" }, 'answered in their own words: "neither"', "answered"],
    [{ kind: "skipped" }, "skipped this question", "skipped"],
  ];
  for (const [answer, said, decision] of rows) {
    const settled = asked.answered(answer);
    assert.ok(settled.kind === "allow");
    assert.ok(settled.grants.said.startsWith(said), settled.grants.said);
    assert.deepEqual(settled.keep, { question: "Which one?", said: settled.grants.said });
    assert.deepEqual(auditEntryOf(settled), {
      tool: "ask_user",
      routing: { question: "Approach" },
      decision,
      by: "person",
      labels: { answer: TRUSTED_PRIVATE },
    });
  }
});
