/**
 * Escaping across the Person.notice seam: text composed by the policy layer from escaped parts
 * (a declined run's argv, quoted by formatArgv) is shown once, never escaped a second time — a
 * quote inside an argument reads `⟦U+0027⟧`, not `⟦U+27E6⟧U+0027⟧` — while raw text handed to a
 * notice is still escaped by the screen.
 */
import assert from "node:assert/strict";
import type { MockReply } from "../scripts/mock-model.ts";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { Screen } from "../src/person/ink/screen.ts";
import { InkPerson } from "../src/person/ink/person.ts";
import { argvText, escapeForScreen, screenText, shownOnScreen } from "../src/util/escape.ts";

Deno.test("one-shot: a declined run's notice shows a quote in an argument once", async () => {
  const replies: MockReply[] = [
    {
      tool_calls: [{
        name: "run",
        arguments: { pipeline: [{ program: "printf", args: ["it's\u202e"] }] },
      }],
    },
    { text: "done" },
  ];
  await oneShotRun({ replies }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const line = run.stderr.split("\n").find((l) => l.includes("declined a run"));
    assert.ok(line, run.stderr);
    assert.ok(line.includes("'it\u27E6U+0027\u27E7s\u27E6U+202E\u27E7'"), line);
    assert.ok(!line.includes("\u27E6U+27E6\u27E7"), line);
  });
});

Deno.test("the session screen: escaped text once, raw text escaped, a marker in raw text not one", () => {
  const screen = new Screen([], () => 0);
  const person = new InkPerson(screen, { width: () => 80, previewLines: 3 });
  const shown = () => screen.items.map((i) => i.text).join("\n");
  person.notice(screenText`declined a run: ${argvText([["printf", "it's"]])} (${"why\u202e"})`);
  assert.ok(shown().includes("printf 'it\u27E6U+0027\u27E7s' (why\u27E6U+202E\u27E7)"), shown());
  // Raw text that looks like a marker is the screen's to escape: it cannot pass for one.
  person.notice("fake \u27E6U+0027\u27E7");
  assert.ok(shown().includes("fake \u27E6U+27E6\u27E7U+0027\u27E7"), shown());
  assert.ok(!shown().includes("\u202e"));
});

Deno.test("ScreenText is made only by escaping: each raw part escaped, a ScreenText kept", () => {
  const inner = argvText([["a b", "\x1b[31m"]]);
  const t = screenText`x ${"\u27E6"} ${inner}`;
  assert.equal(t.text, "x \u27E6U+27E6\u27E7 'a b' '\u27E6U+001B\u27E7[31m'");
  assert.equal(shownOnScreen(t), t.text);
  assert.equal(shownOnScreen(`${t}`), escapeForScreen(t.text, true));
});
