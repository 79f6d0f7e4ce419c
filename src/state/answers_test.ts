import assert from "node:assert/strict";
import { join } from "node:path";
import { AnswerStore } from "./answers.ts";

Deno.test("answers: saved question by question and loaded back for a resumed session", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-answers-" });
  try {
    const answers = new Map([["Which one?", 'chose "rebase"']]);
    const store = new AnswerStore(dir);
    await store.save(answers);
    answers.set("What name?", "skipped this question");
    await store.save(answers);
    await store.save(answers); // nothing twice
    const text = await Deno.readTextFile(join(dir, "answers.jsonl"));
    assert.equal(text.trim().split("\n").length, 2);
    await Deno.writeTextFile(join(dir, "answers.jsonl"), text + '{"question": 3}\n{"torn', {});
    const resumed = new Map<string, string>();
    const problems = await new AnswerStore(dir).load(resumed);
    assert.deepEqual([...resumed], [...answers]);
    assert.equal(problems.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
