import assert from "node:assert/strict";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { approveWrite, commitWrite, renderDiff, renderNewFile } from "./writes.ts";
import { isGitPath } from "./git_dir.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
import { PolicyFilePerson } from "../person/policy_file.ts";
import { sha256 } from "../util/hash.ts";

const enc = new TextEncoder();

Deno.test("writes: a writes glob approves without asking anyone, and the decision line names the destination", async () => {
  const lines: string[] = [];
  const file = { writes: ["docs/*.md"] };
  await withPolicy({
    trust: {},
    person: new PolicyFilePerson(file, (l) => lines.push(l)),
    approvals: file,
  }, async (fx) => {
    const ask = {
      tool: "write_file" as const,
      viaRef: true,
      isNew: true,
      preview: "",
      label: TRUSTED_PUBLIC,
    };
    assert.equal((await approveWrite(fx.policy, { ...ask, rel: "docs/a.md" })).approved, true);
    assert.equal((await approveWrite(fx.policy, { ...ask, rel: "docs/sub/a.md" })).approved, false);
    assert.deepEqual(lines, [
      "write_file docs/a.md: approved by the approval policy file",
      "write_file docs/sub/a.md: declined",
    ]);
    assert.deepEqual(fx.policy.audit.entries.map((e) => [e.decision, e.by, e.routing.path]), [
      ["write approved", "policy-file", "docs/a.md"],
      ["write refused", "policy-file", "docs/sub/a.md"],
    ]);
  });
});

Deno.test("writes: a write whose expected hash no longer holds changes nothing and records nothing", async () => {
  await withPolicy({ files: { "a.txt": "now" }, trust: { ".": true } }, async (fx) => {
    const before = await fx.treeHash();
    const stale = await commitWrite(
      fx.policy,
      "write_file",
      "a.txt",
      enc.encode("x"),
      sha256("then"),
      TRUSTED_PUBLIC,
    );
    assert.equal(stale.status, "changed");
    const appeared = await commitWrite(
      fx.policy,
      "write_file",
      "a.txt",
      enc.encode("x"),
      null,
      TRUSTED_PUBLIC,
    );
    assert.equal(appeared.status, "changed");
    assert.equal(await fx.treeHash(), before);
    assert.equal(fx.policy.storedTrust.files.size, 0);
    const fresh = await commitWrite(
      fx.policy,
      "write_file",
      "a.txt",
      enc.encode("x"),
      sha256("now"),
      TRUSTED_PUBLIC,
    );
    assert.equal(fresh.status, "written");
    assert.equal(fx.policy.storedTrust.files.get("a.txt")?.sha256, sha256("x"));
  });
});

Deno.test("writes: a new file's preview shows at most 400 lines and says how many more", () => {
  const text = Array.from({ length: 450 }, (_, i) => `l${i}`).join("\n");
  const preview = renderNewFile("a.txt", text).split("\n");
  assert.equal(preview[0], "new file a.txt (450 lines)");
  assert.equal(preview.length, 402);
  assert.equal(preview.at(-1), "… 50 more lines");
});

Deno.test("writes: any path segment spelled .git, in any case, is inside .git", () => {
  for (const p of [".git", ".git/config", "a/.git/hooks/x", ".GIT/HEAD", "a/.Git"]) {
    assert.ok(isGitPath(p), p);
  }
  for (const p of [".gitignore", "a/.github/x", "git/x", "x.git"]) assert.ok(!isGitPath(p), p);
});

Deno.test("writes: a rewrite too large to diff quickly shows the new contents instead of stalling", () => {
  const a = Array.from({ length: 12_000 }, (_, i) => `old line ${i} ${i * 7919 % 10007}`).join(
    "\n",
  );
  const b = Array.from({ length: 12_000 }, (_, i) => `new line ${i} ${i * 104729 % 10007}`).join(
    "\n",
  );
  const preview = renderDiff("big.txt", a, b);
  assert.match(preview, /too many to show as a diff: 12000 lines become 12000/);
  assert.match(preview, /^new file big\.txt \(12000 lines\)$/m);
});
