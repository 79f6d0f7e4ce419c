import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { parseSkillFile, SKILL_NAME } from "./skill_file.ts";

const skill = (name: string, description = `what ${name} does`, body = `body of ${name}`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

Deno.test("parseSkillFile: front matter with quotes, blocks and ignored nested keys", async () => {
  const r = await parseSkillFile(
    '---\nname: "commit-style"\ndescription: >\n  How we write\n  commit messages.\n' +
      "metadata:\n  author: someone\nlicense: MIT\n---\n# Body\ntext\n",
    "commit-style",
  );
  assert.ok(r.ok);
  assert.equal(r.value.name, "commit-style");
  assert.equal(r.value.description, "How we write commit messages.");
  assert.equal(r.value.body, "# Body\ntext");
});

Deno.test("parseSkillFile: each bad layout is refused with the reason", async () => {
  const cases: [string, string, RegExp][] = [
    ["no front matter\n", "a", /does not start with front matter/],
    ["---\nname: a\ndescription: x\n", "a", /not closed/],
    ["---\ndescription: x\n---\n", "a", /no name/],
    ["---\nname: a\n---\n", "a", /no description/],
    ["---\nname: Commit\ndescription: x\n---\n", "Commit", /lowercase/],
    ["---\nname: a_b\ndescription: x\n---\n", "a_b", /lowercase/],
    [`---\nname: ${"a".repeat(65)}\ndescription: x\n---\n`, "a".repeat(65), /1–64/],
    ["---\nname: other\ndescription: x\n---\n", "mine", /does not match its folder/],
    ["---\nname: a\nname: a\ndescription: x\n---\n", "a", /twice/],
    ["---\nname: a\njust words\ndescription: x\n---\n", "a", /not valid YAML/],
    ["---\n- a\n- b\n---\n", "a", /not a list of 'key: value'/],
    ["---\nname: [a]\ndescription: x\n---\n", "a", /name: is not text/],
    [
      "---\nx: &a [1, 2]\ny: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nname: a\ndescription: x\n---\n",
      "a",
      /aliases/,
    ],
  ];
  for (const [text, folder, why] of cases) {
    const r = await parseSkillFile(text, folder);
    assert.ok(!r.ok, text);
    assert.match(r.error, why, text);
  }
});

Deno.test("parseSkillFile: a name is accepted exactly when it is 1-64 of [a-z0-9-]", async () => {
  await fc.assert(fc.asyncProperty(fc.string({ maxLength: 70 }), async (name) => {
    // Written as a YAML double-quoted string, so any characters reach the name check as they are.
    const r = await parseSkillFile(skill(JSON.stringify(name)), name);
    assert.equal(r.ok, SKILL_NAME.test(name), JSON.stringify(name));
  }));
});
