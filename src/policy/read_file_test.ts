/** The read-file decision and the quarantined-read prompt by tables: no worker, no person. */
import assert from "node:assert/strict";
import { evaluateReadFile, type ReadFileFacts } from "./read_file.ts";
import { evaluateQuarantinedRead, type QuarantinedReadFacts } from "./reads.ts";
import { answeredWith, auditEntryOf } from "./verdict.ts";
import type { QuarantinedReadAnswer } from "../person/person.ts";
import { TRUSTED_PRIVATE, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../util/label.ts";

function readFacts(over: Partial<ReadFileFacts> = {}): ReadFileFacts {
  return {
    rel: "vendor/a.txt",
    viaRef: false,
    size: 12,
    label: UNTRUSTED_PUBLIC,
    canAsk: true,
    asker: "person",
    fileAnswer: undefined,
    ...over,
  };
}

Deno.test("evaluateReadFile: trusted bytes are shown by the rule; others go to the prompt", () => {
  const shown = evaluateReadFile(readFacts({ label: TRUSTED_PRIVATE, canAsk: false }));
  assert.equal(shown.kind, "allow");
  assert.equal(
    JSON.stringify(auditEntryOf(answeredWith(shown))),
    '{"tool":"read_file","routing":{"path":"vendor/a.txt","via_ref":false},' +
      '"labels":{"file":{"integrity":"T","confidentiality":"priv"}},' +
      '"decision":"shown (trusted)","by":"rule"}',
  );
  assert.equal(shown.kind === "allow" && shown.grants, "trusted");

  const asked = evaluateReadFile(readFacts({ viaRef: true }));
  assert.equal(asked.kind, "ask");
  if (asked.kind !== "ask") return;
  // The question names the file and its size and label; its first lines are read when it is put.
  assert.deepEqual(asked.question, { path: "vendor/a.txt", size: 12, label: UNTRUSTED_PUBLIC });
  const kept = asked.answered("keep");
  assert.equal(
    JSON.stringify(auditEntryOf(kept)),
    '{"tool":"read_file","routing":{"path":"vendor/a.txt","via_ref":true},' +
      '"labels":{"file":{"integrity":"U","confidentiality":"pub"}},' +
      '"decision":"quarantined read: keep","by":"person"}',
  );
});

Deno.test("evaluateQuarantinedRead: who answers, what each answer comes to, what the line says", () => {
  const facts = (over: Partial<QuarantinedReadFacts> = {}): QuarantinedReadFacts => ({
    tool: "read_file",
    ...readFacts(),
    ...over,
  });
  const oneShot = { canAsk: false, asker: "policy-file" as const };
  const rows: {
    name: string;
    facts: QuarantinedReadFacts;
    /** The person's answer where the verdict asks (it must ask exactly then). */
    answer?: QuarantinedReadAnswer;
    grants: QuarantinedReadAnswer;
    by: string;
  }[] = [
    {
      name: "the person keeps it quarantined",
      facts: facts(),
      answer: "keep",
      grants: "keep",
      by: "person",
    },
    {
      name: "the person shows it as untrusted",
      facts: facts(),
      answer: "untrusted",
      grants: "untrusted",
      by: "person",
    },
    {
      name: "the person vouches for it",
      facts: facts(),
      answer: "vouch",
      grants: "vouch",
      by: "person",
    },
    {
      name: "an answer that is none of the three is keep",
      facts: facts(),
      answer: "show" as QuarantinedReadAnswer,
      grants: "keep",
      by: "person",
    },
    {
      name: "nobody can be asked and no policy file answers: keep, unopened",
      facts: facts({ canAsk: false, asker: "nobody" }),
      grants: "keep",
      by: "nobody",
    },
    {
      name: "the policy file answers untrusted",
      facts: facts({ ...oneShot, fileAnswer: "untrusted" }),
      grants: "untrusted",
      by: "policy-file",
    },
    {
      name: "the policy file answers keep",
      facts: facts({ ...oneShot, fileAnswer: "keep" }),
      grants: "keep",
      by: "policy-file",
    },
    {
      name: "a vouch never comes from the policy file",
      facts: facts({ ...oneShot, fileAnswer: "vouch" }),
      grants: "keep",
      by: "policy-file",
    },
    {
      name: "another tool's prompt is that tool's line",
      facts: facts({ tool: "search", label: TRUSTED_PUBLIC }),
      answer: "untrusted",
      grants: "untrusted",
      by: "person",
    },
  ];
  for (const row of rows) {
    const verdict = evaluateQuarantinedRead(row.facts);
    assert.equal(verdict.kind === "ask", row.answer !== undefined, `${row.name}: asks`);
    const settled = answeredWith(verdict, row.answer);
    assert.equal(settled.kind, "allow", row.name);
    assert.equal(settled.kind === "allow" && settled.grants, row.grants, row.name);
    assert.equal(settled.notice, undefined, row.name);
    assert.equal(settled.keep, undefined, row.name);
    assert.deepEqual(auditEntryOf(settled), {
      tool: row.facts.tool,
      routing: { path: "vendor/a.txt", via_ref: false },
      labels: { file: row.facts.label },
      decision: `quarantined read: ${row.grants}`,
      by: row.by,
    }, row.name);
  }
});
