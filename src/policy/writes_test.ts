import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import {
  approveWrite,
  commitWrite,
  contentsPreview,
  diffPreview,
  evaluateWrite,
  previewOf,
  type WriteApprovalFacts,
  writeFile,
} from "./writes.ts";
import { answeredWith, auditEntryOf } from "./verdict.ts";
import type { Approval, WritePreview } from "../person/person.ts";
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
      preview: contentsPreview("docs/a.md", ""),
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
      enc.encode("then"),
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
      enc.encode("now"),
      TRUSTED_PUBLIC,
    );
    assert.equal(fresh.status, "written");
    assert.equal(fx.policy.storedTrust.files.get("a.txt")?.sha256, sha256("x"));
  });
});

Deno.test("writes: a new file's preview shows at most 400 lines and says how many there are", () => {
  const text = Array.from({ length: 450 }, (_, i) => `l${i}`).join("\n");
  const preview = contentsPreview("a.txt", text);
  assert.ok(preview.kind === "contents");
  assert.equal(preview.name, "a.txt");
  assert.equal(preview.lineCount, 450);
  assert.equal(preview.lines.length, 400);
  assert.equal(preview.lines.at(-1), "l399");
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
  const preview = diffPreview("big.txt", a, b);
  assert.ok(preview.kind === "contents");
  assert.deepEqual(preview.instead, { kind: "too many changes", lines: 12000 });
  assert.equal(preview.lineCount, 12000);
});

// ---- the write approval as a pure evaluator: facts in, verdict out ----

const facts = (over: Partial<WriteApprovalFacts> = {}): WriteApprovalFacts => ({
  tool: "write_file",
  rel: "src/a.ts",
  viaRef: false,
  isNew: true,
  preview: contentsPreview("src/a.ts", "x\n"),
  label: TRUSTED_PUBLIC,
  fileAllows: false,
  canAsk: true,
  asker: "person",
  ...over,
});

Deno.test("evaluateWrite: who approves, what the line says, what the person is told", () => {
  const rows: {
    name: string;
    facts: WriteApprovalFacts;
    answer?: Approval;
    kind: "allow" | "refuse";
    by: string;
    decision: string;
    reason?: string;
    notice?: string;
  }[] = [
    {
      name: "a writes glob approves in advance, and says so",
      facts: facts({ fileAllows: true, canAsk: false, asker: "policy-file" }),
      kind: "allow",
      by: "policy-file",
      decision: "write approved",
      notice: "write_file src/a.ts: approved by the approval policy file",
    },
    {
      name: "the glob approves in a session too, without asking",
      facts: facts({ fileAllows: true }),
      kind: "allow",
      by: "policy-file",
      decision: "write approved",
      notice: "write_file src/a.ts: approved by the approval policy file",
    },
    {
      name: "the person approves; nothing more is said",
      facts: facts(),
      answer: { approved: true },
      kind: "allow",
      by: "person",
      decision: "write approved",
    },
    {
      name: "the person refuses, with their reason",
      facts: facts({ tool: "edit_file", isNew: false }),
      answer: { approved: false, reason: "not now" },
      kind: "refuse",
      by: "person",
      decision: "write refused",
      reason: "not now",
    },
    {
      name: "one-shot: the policy file's person declines, and the person is told",
      facts: facts({ canAsk: false, asker: "policy-file" }),
      answer: { approved: false, reason: "declined" },
      kind: "refuse",
      by: "policy-file",
      decision: "write refused",
      reason: "declined",
      notice: "write_file src/a.ts: declined",
    },
    {
      name: "one-shot with no file: nobody declines",
      facts: facts({ canAsk: false, asker: "nobody" }),
      answer: { approved: false },
      kind: "refuse",
      by: "nobody",
      decision: "write refused",
      notice: "write_file src/a.ts: declined",
    },
  ];
  for (const row of rows) {
    const verdict = evaluateWrite(row.facts);
    assert.equal(verdict.kind === "ask", row.answer !== undefined, row.name);
    if (verdict.kind === "ask") {
      assert.deepEqual(verdict.question, {
        tool: row.facts.tool,
        path: row.facts.rel,
        viaRef: row.facts.viaRef,
        isNew: row.facts.isNew,
        preview: row.facts.preview,
        label: row.facts.label,
      }, row.name);
    }
    const settled = answeredWith(verdict, row.answer);
    assert.equal(settled.kind, row.kind, row.name);
    assert.equal(settled.notice, row.notice, row.name);
    assert.deepEqual(auditEntryOf(settled), {
      tool: row.facts.tool,
      routing: { path: "src/a.ts", via_ref: false, new_file: row.facts.isNew },
      labels: { content: TRUSTED_PUBLIC },
      decision: row.decision,
      by: row.by,
      ...(row.reason ? { reason: row.reason } : {}),
    }, row.name);
  }
});

Deno.test("previewOf: a new file whole, a binary one replaced whole, a text file as hunks", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const rows: [string, Uint8Array | null, string, WritePreview][] = [
    ["new", null, "a\nb\n", {
      kind: "contents",
      name: "f",
      lineCount: 2,
      lines: ["a", "b"],
      instead: null,
    }],
    ["binary", new Uint8Array([0xff, 0]), "a", {
      kind: "contents",
      name: "f",
      lineCount: 1,
      lines: ["a"],
      instead: { kind: "binary", bytes: 2 },
    }],
    ["unchanged", enc("same\n"), "same\n", {
      kind: "diff",
      oldName: "a/f",
      newName: "b/f",
      hunks: [],
    }],
    ["no final newline", enc("x\n"), "x", {
      kind: "diff",
      oldName: "a/f",
      newName: "b/f",
      hunks: [{
        oldStart: 1,
        oldLines: 1,
        newStart: 1,
        newLines: 1,
        lines: ["-x", "+x", "\\ No newline at end of file"],
      }],
    }],
  ];
  for (const [name, current, after, expected] of rows) {
    assert.deepEqual(previewOf("f", current, after), expected, name);
  }
});

Deno.test("writes: a folder made a link to the state folder after the approval is not written through", async () => {
  let swapped = false;
  let root = "";
  await withPolicy({
    files: { "d/keep.txt": "k\n", ".bravebot/keep": "s\n" },
    protect: [".bravebot"],
    trust: { ".": true },
    answers: [{ write: { approved: true } }],
    // After the destination was routed, before the person was asked (a new file's first look is
    // its lstat): d moves into the state folder and a link takes its place.
    beforeCall: async (request) => {
      if (request.op !== "lstat" || !request.path.endsWith("/d/n.txt") || swapped) return;
      swapped = true;
      await Deno.rename(join(root, "d"), join(root, ".bravebot/d"));
      await Deno.symlink(".bravebot/d", join(root, "d"));
    },
  }, async (f) => {
    root = f.root;
    const wrote = await writeFile(f.policy, { path: "d/n.txt", contents: "planted\n" });
    assert.equal(swapped, true);
    assert.equal(wrote.status, "failed");
    await assert.rejects(Deno.lstat(join(f.root, ".bravebot/d/n.txt")), Deno.errors.NotFound);
    assert.equal(f.policy.storedTrust.files.has("d/n.txt"), false);
    assert.equal(f.policy.changes.standing.length, 0);
  });
});

Deno.test("writes: a folder replaced by a link to another workspace folder between the last resolve and the worker's act gets nothing written there", async () => {
  // The swap runs in the hook between the policy layer's call and the worker's first look:
  // after resolveInPlace said `d/a.txt` is itself, before the worker opens anything.
  for (
    const [path, current] of [["d/a.txt", "old\n"], ["d/new.txt", null], ["d/n/new.txt", null]]
  ) {
    let swapped = false;
    let root = "";
    await withPolicy({
      files: { "d/a.txt": "old\n", "e/a.txt": "old\n" },
      trust: { ".": true },
      beforeCall: async (request) => {
        if (request.op !== "write" || swapped) return;
        swapped = true;
        await Deno.rename(join(root, "d"), join(root, "d.gone"));
        await Deno.symlink("e", join(root, "d"));
      },
    }, async (fx) => {
      root = fx.root;
      const made = await commitWrite(
        fx.policy,
        "write_file",
        path!,
        enc.encode("planted\n"),
        current === null ? null : enc.encode(current),
        TRUSTED_PUBLIC,
      );
      assert.ok(swapped, "the hook ran");
      assert.equal(made.status, "failed", `${path}: ${made.status}`);
      assert.deepEqual([...Deno.readDirSync(join(fx.root, "e"))].map((e) => e.name), ["a.txt"]);
      assert.equal(await Deno.readTextFile(join(fx.root, "e/a.txt")), "old\n");
      assert.equal(await Deno.readTextFile(join(fx.root, "d.gone/a.txt")), "old\n");
      assert.equal(fx.policy.storedTrust.files.size, 0, "a write was recorded");
    });
  }
});
