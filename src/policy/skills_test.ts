/** load_skill's decision as a value: what a chosen (or unchosen) skill and its reading come to. */
import assert from "node:assert/strict";
import { TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../util/label.ts";
import { err, ok } from "../util/result.ts";
import type { SkillEntry } from "../util/skill_file.ts";
import { skillLoadVerdict } from "./skills.ts";
import { auditEntryOf } from "./verdict.ts";

const entry = (source: SkillEntry["source"]) => ({
  name: "release",
  description: "d",
  source,
  file: "/x/release/SKILL.md",
  label: TRUSTED_PUBLIC,
});

Deno.test("skillLoadVerdict: refused unchosen or unread, loaded otherwise; each with its audit line", () => {
  const long = "n".repeat(100);
  const table = [
    {
      name: "a name that chose none: refused with the list, the name cut to 80 in the log",
      verdict: skillLoadVerdict(long, { refusal: "no skill is named …" }, null),
      result: { kind: "not_listed", refusal: "no skill is named …" },
      entry: `{"tool":"load_skill","routing":{"name":"${"n".repeat(80)}"},"decision":"refused",` +
        '"by":"rule","reason":"not a listed name"}',
    },
    {
      name: "a listed skill that cannot be read: refused, the reason in the log",
      verdict: skillLoadVerdict("release", { entry: entry("user") }, err("cannot be read (x)")),
      result: { kind: "unreadable", error: "cannot be read (x)" },
      entry: '{"tool":"load_skill","routing":{"name":"release","source":"user"},' +
        '"decision":"refused","by":"rule","reason":"cannot be read (x)"}',
    },
    {
      name: "a listed skill never read is not loaded",
      verdict: skillLoadVerdict("release", { entry: entry("user") }, null),
      result: { kind: "unreadable", error: "it was not read" },
      entry: '{"tool":"load_skill","routing":{"name":"release","source":"user"},' +
        '"decision":"refused","by":"rule","reason":"it was not read"}',
    },
    {
      name: "a listed skill read: loaded with its label, given after who decided",
      verdict: skillLoadVerdict(
        "release",
        { entry: entry("workspace") },
        ok({ body: "use it", label: TRUSTED_PUBLIC }),
      ),
      result: { kind: "loaded", body: "use it", label: TRUSTED_PUBLIC },
      entry: '{"tool":"load_skill","routing":{"name":"release","source":"workspace"},' +
        '"decision":"loaded","by":"rule","labels":{"output":{"integrity":"T","confidentiality":"pub"}}}',
    },
    {
      name: "the label is the reading's, not a constant",
      verdict: skillLoadVerdict(
        "release",
        { entry: entry("workspace") },
        ok({ body: "b", label: UNTRUSTED_PUBLIC }),
      ),
      result: { kind: "loaded", body: "b", label: UNTRUSTED_PUBLIC },
      entry: '{"tool":"load_skill","routing":{"name":"release","source":"workspace"},' +
        '"decision":"loaded","by":"rule","labels":{"output":{"integrity":"U","confidentiality":"pub"}}}',
    },
  ];
  for (const row of table) {
    const v = row.verdict;
    assert.deepEqual(v.kind === "allow" ? v.grants : v.refusal, row.result, row.name);
    assert.equal(JSON.stringify(auditEntryOf(v)), row.entry, row.name);
  }
});
