import assert from "node:assert/strict";
import { loggedLine } from "../../test/support/audit_lines.ts";
import { join } from "node:path";
import { fixture } from "../../test/support/person_side.ts";
import { discoverSkills } from "../skills/discover.ts";
import { skillsPort } from "../policy/ports/skills.ts";
import { formatLabel, TRUSTED_PUBLIC } from "../util/label.ts";
import { loadSkill } from "./load_skill.ts";
import { selectSkill } from "../policy/skills.ts";

const skill = (name: string) =>
  `---\nname: ${name}\ndescription: about ${name}\n---\nuse ${name}\n`;

async function withSkills(
  fn: (f: Awaited<ReturnType<typeof fixture>>, user: string) => Promise<void>,
) {
  const f = await fixture();
  const user = await Deno.makeTempDir({ prefix: "bb-ls-user-" });
  try {
    await Deno.mkdir(join(user, "commit-style"));
    await Deno.writeTextFile(join(user, "commit-style", "SKILL.md"), skill("commit-style"));
    await f.write(".bravebot/skills/release/SKILL.md", skill("release"));
    f.session.skills = (await discoverSkills(skillsPort(f.policy), user)).skills;
    await fn(f, user);
  } finally {
    await f.close();
    await Deno.remove(user, { recursive: true });
  }
}

Deno.test("load_skill: an exactly listed name gives the skill's body", async () => {
  await withSkills(async (f) => {
    const user = await loadSkill.handler({ name: "commit-style" }, f.ctx);
    assert.equal(user.isError, false);
    assert.match(user.content, /use commit-style/);
    assert.doesNotMatch(user.content, /description:/);
    const ws = await loadSkill.handler({ name: "release" }, f.ctx);
    assert.match(ws.content, /use release/);
    assert.equal(formatLabel(ws.label), "(T,pub)");
  });
});

Deno.test("load_skill: ../ is never a path, near misses and unlisted names are refused with the list", async () => {
  await withSkills(async (f) => {
    await f.write("secret/SKILL.md", skill("secret"));
    for (
      const name of [
        "../secret",
        "../../etc/passwd",
        "release/../release",
        "..",
        "/etc/passwd",
        "a\\b",
      ]
    ) {
      const out = await loadSkill.handler({ name }, f.ctx);
      assert.equal(out.isError, true, name);
      assert.match(out.content, /never becomes a path/, name);
      assert.match(out.content, /commit-style, release/, name);
    }
    for (const name of ["commit_style", "Commit-Style", "comit-style", "release "]) {
      const out = await loadSkill.handler({ name }, f.ctx);
      assert.equal(out.isError, true, name);
      assert.match(out.content, /never guessed/, name);
      assert.match(out.content, /listed skills are: commit-style, release/, name);
    }
    const unlisted = await loadSkill.handler({ name: "deploy" }, f.ctx);
    assert.match(unlisted.content, /no skill is named "deploy"; the listed skills are/);
  });
});

Deno.test("load_skill: only the set fixed at the start of the turn counts", async () => {
  await withSkills(async (f) => {
    // A skill that appears mid-turn is not listed yet, so it cannot be loaded.
    await f.write(".bravebot/skills/late/SKILL.md", skill("late"));
    const out = await loadSkill.handler({ name: "late" }, f.ctx);
    assert.equal(out.isError, true);
    assert.deepEqual(
      "refusal" in selectSkill([], "x") ? "refused" : "chosen",
      "refused",
    );
  });
});

Deno.test("load_skill: a workspace skill that stopped being trusted is refused", async () => {
  await withSkills(async (f) => {
    f.policy.storedTrust.setRule(".bravebot", false);
    const out = await loadSkill.handler({ name: "release" }, f.ctx);
    assert.equal(out.isError, true);
    assert.match(out.content, /not trusted/);
  });
});

Deno.test("load_skill: a user skill that cannot be read is refused without its real path", async () => {
  await withSkills(async (f, user) => {
    // Listed at the start of the turn, gone by the time it is loaded.
    await Deno.remove(join(user, "commit-style"), { recursive: true });
    const out = await loadSkill.handler({ name: "commit-style" }, f.ctx);
    assert.equal(out.isError, true);
    assert.match(out.content, /cannot be read \(NotFound\)/);
    assert.ok(!out.content.includes(user), out.content);
  });
});

Deno.test("load_skill: the close names in a refusal are those one edit distance puts near", () => {
  const entry = (name: string) => ({
    name,
    description: "",
    file: `/s/${name}`,
    source: "user" as const,
    label: TRUSTED_PUBLIC,
  });
  const skills = [entry("release"), entry("commit-style")];
  // Two swaps of neighbours are two steps (a swap is one, as the command line's did-you-mean
  // counts it), so the hint names the skill; the name is still not taken for it.
  const swapped = selectSkill(skills, "rleeaes");
  assert.ok("refusal" in swapped);
  assert.match(swapped.refusal, /\(close: release\)/);
  const far = selectSkill(skills, "deploy");
  assert.ok("refusal" in far);
  assert.doesNotMatch(far.refusal, /close:/);
});

Deno.test("load_skill: each outcome leaves its audit line, in the log's key order", async () => {
  await withSkills(async (f, user) => {
    await loadSkill.handler({ name: "release" }, f.ctx);
    await loadSkill.handler({ name: "no-such" }, f.ctx);
    await Deno.remove(join(user, "commit-style"), { recursive: true });
    await loadSkill.handler({ name: "commit-style" }, f.ctx);
    const lines = f.policy.audit.entries.filter((e) => e.tool === "load_skill").map(loggedLine);
    assert.deepEqual(lines, [
      '{"tool":"load_skill","routing":{"name":"release","source":"workspace"},"decision":"loaded",' +
      '"by":"rule","labels":{"context":"(T,pub)","output":"(T,pub)"}}',
      '{"tool":"load_skill","routing":{"name":"no-such"},"decision":"refused","by":"rule",' +
      '"reason":"not a listed name","labels":{"context":"(T,pub)"}}',
      '{"tool":"load_skill","routing":{"name":"commit-style","source":"user"},"decision":"refused",' +
      '"by":"rule","reason":"cannot be read (NotFound)","labels":{"context":"(T,pub)"}}',
    ]);
  });
});
