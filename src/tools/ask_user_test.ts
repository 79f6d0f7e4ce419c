import assert from "node:assert/strict";
import { fixture } from "../../test/support/person_side.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import { formatLabel, UNTRUSTED_PUBLIC } from "../util/label.ts";
import { askUser } from "./ask_user.ts";

const q = (n: number, extra: Record<string, unknown> = {}) => ({
  header: `Q${n}`,
  question: `question number ${n}?`,
  ...extra,
});

Deno.test("ask_user: five questions are refused whole and nobody is asked", async () => {
  const person = new ScriptedPerson(); // no answers: being asked would throw
  const f = await fixture({ person });
  try {
    const out = await askUser.handler({ questions: [1, 2, 3, 4, 5].map((n) => q(n)) }, f.ctx);
    assert.equal(out.isError, true);
    assert.match(out.content, /5 questions.*at most 4.*none was asked/);
    assert.equal(person.asked.length, 0);
    assert.equal(f.session.answers.size, 0);
    assert.equal(f.policy.audit.entries.at(-1)?.decision, "refused");
  } finally {
    await f.close();
  }
});

Deno.test("ask_user: four questions are put one at a time, in order, with every kind of answer", async () => {
  const person = new ScriptedPerson([
    { ask: { kind: "options", chosen: ["rebase"] } },
    { ask: { kind: "options", chosen: ["src", "not-an-option"] } },
    { ask: { kind: "text", text: "only the parser" } },
    { ask: { kind: "skipped" } },
  ]);
  const f = await fixture({ person });
  try {
    const out = await askUser.handler({
      questions: [
        q(1, { options: ["merge", "rebase"] }),
        q(2, { options: [{ label: "src" }, { label: "docs" }], multiple: true }),
        q(3),
        q(4),
      ],
    }, f.ctx);
    assert.equal(out.isError, false);
    assert.deepEqual(person.asked.map((a) => a.kind === "ask" && a.request.header), [
      "Q1",
      "Q2",
      "Q3",
      "Q4",
    ]);
    const asked2 = person.asked[1];
    assert.ok(asked2.kind === "ask" && asked2.request.multiple === true);
    assert.match(out.content, /Q1: chose "rebase"/);
    // A label the person's screen never offered is not passed on as a choice.
    assert.match(out.content, /Q2: chose "src"\n/);
    assert.doesNotMatch(out.content, /not-an-option/);
    assert.match(out.content, /Q3: answered in their own words: "only the parser"/);
    assert.match(out.content, /Q4: skipped/);
    assert.equal(formatLabel(out.label), "(T,priv)");
  } finally {
    await f.close();
  }
});

Deno.test("ask_user: an answered (or skipped) question is not asked again in the session", async () => {
  const person = new ScriptedPerson([
    { ask: { kind: "text", text: "yes" } },
    { ask: { kind: "skipped" } },
    { ask: { kind: "text", text: "new one" } },
  ]);
  const f = await fixture({ person });
  try {
    await askUser.handler({ questions: [q(1), q(2)] }, f.ctx);
    const again = await askUser.handler({ questions: [q(2), q(1), q(3)] }, f.ctx);
    assert.equal(person.asked.length, 3);
    assert.match(again.content, /Q2: \(answered earlier in this session\) skipped/);
    assert.match(again.content, /Q1: \(answered earlier in this session\).*"yes"/);
    assert.match(again.content, /Q3: answered in their own words: "new one"/);
  } finally {
    await f.close();
  }
});

Deno.test("ask_user: refused once the planner context is untrusted", async () => {
  const person = new ScriptedPerson();
  const f = await fixture({ person });
  try {
    f.policy.placeInContext(UNTRUSTED_PUBLIC);
    const out = await askUser.handler({ questions: [q(1)] }, f.ctx);
    assert.equal(out.isError, true);
    assert.match(out.content, /asking has stopped/);
    assert.equal(person.asked.length, 0);
    // Even a question answered before the taint is not replayed: the call is refused whole.
    f.policy.clearContext();
    person.push({ ask: { kind: "text", text: "ok" } });
    assert.equal((await askUser.handler({ questions: [q(1)] }, f.ctx)).isError, false);
  } finally {
    await f.close();
  }
});

Deno.test("ask_user: in a one-shot run every question is declined, never answered", async () => {
  const f = await fixture({ person: new PolicyFilePerson(null), oneShot: true });
  try {
    const out = await askUser.handler({ questions: [q(1, { options: ["a", "b"] }), q(2)] }, f.ctx);
    assert.equal(out.isError, false);
    assert.match(out.content, /Q1: declined/);
    assert.match(out.content, /Q2: declined/);
    assert.doesNotMatch(out.content, /chose|own words/);
    assert.equal(f.session.answers.size, 0);
    assert.equal(f.policy.audit.entries.at(-1)?.by, "nobody");
  } finally {
    await f.close();
  }
});

Deno.test("ask_user: the schema is strict and a prompt that fails is a skip", async () => {
  assert.equal(
    askUser.schema.safeParse({ questions: [{ ...q(1), path: "/etc/passwd" }] }).success,
    false,
  );
  assert.equal(askUser.schema.safeParse({ questions: [] }).success, false);
  const person = new ScriptedPerson(); // asking throws
  const f = await fixture({ person });
  try {
    const out = await askUser.handler({ questions: [q(1)] }, f.ctx);
    assert.match(out.content, /Q1: skipped/);
  } finally {
    await f.close();
  }
});
