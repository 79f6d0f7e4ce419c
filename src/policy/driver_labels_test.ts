import assert from "node:assert/strict";
import {
  personWordsLabel,
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
