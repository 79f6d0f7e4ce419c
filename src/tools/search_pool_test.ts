/**
 * search over the worker pool: files split across workers and searched while the walk goes
 * on must give exactly the result of searching one file after another, in walk order.
 */
import assert from "node:assert/strict";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { searchTool } from "./search.ts";
import { formatLabel } from "../util/label.ts";
import { sha256 } from "../util/hash.ts";
import { labelNeedsHash, labelOfHash } from "../policy/reads.ts";

const pad = (i: number) => String(i).padStart(3, "0");

Deno.test("search (pool): many files over several workers come back in walk order, cut at 200 lines", async () => {
  const files: Record<string, string> = { "top.txt": "hit top\n" };
  for (let i = 0; i < 150; i++) files[`a/${pad(i)}.txt`] = `x\nhit a${i}\n`;
  for (let i = 0; i < 150; i++) files[`b/c/${pad(i)}.txt`] = `hit c${i}\n`;
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    const lines = out.content.split("\n");
    const expected = [
      "top.txt:1: hit top",
      ...Array.from({ length: 150 }, (_, i) => `a/${pad(i)}.txt:2: hit a${i}`),
      ...Array.from({ length: 49 }, (_, i) => `b/c/${pad(i)}.txt:1: hit c${i}`),
    ];
    assert.deepEqual(lines.slice(0, 200), expected);
    assert.deepEqual(lines.slice(200), [
      "[200 matching lines in 200 files; searched 200 files]",
      "[truncated at 200 matching lines: the result is incomplete; narrow it with directory or include]",
    ]);
    const finds = fx.workerCalls.filter((c) => c.op === "findInFiles");
    assert.ok(finds.length >= 2, "the files were split into several requests");
  });
});

Deno.test("search (pool): exactly 200 lines is truncated only when a file was left unsearched", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) files[`f/${pad(i)}.txt`] = `hit ${i}\n`;
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.match(out.content, /\[200 matching lines in 200 files; searched 200 files\]$/);
    assert.doesNotMatch(out.content, /truncated/);
  });
  // One more file, deeper, without a match: found by the walk after the cap was reached.
  await withPolicy(
    { files: { ...files, "f/g/h/late.txt": "nothing\n" }, trust: { ".": true } },
    async (fx) => {
      const out = await fx.call(searchTool, { pattern: "hit" });
      assert.match(out.content, /\[truncated at 200 matching lines/);
    },
  );
});

Deno.test("search (pool): every file is opened by an effect worker, and only matches come back", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 100; i++) files[`d${i % 7}/${pad(i)}.txt`] = i === 42 ? "hit\n" : "miss\n";
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.match(out.content, /^d0\/042\.txt:1: hit\n/);
    const searched = fx.workerCalls.flatMap((c) => c.op === "findInFiles" ? c.paths : []);
    assert.deepEqual(
      [...searched].sort(),
      Object.keys(files).map((rel) => `${fx.root}/${rel}`).sort(),
    );
    // No request hands a searched file's bytes back across the wall.
    const reads = fx.workerCalls.filter((c) => c.op === "read" || c.op === "readMany");
    for (const r of reads) {
      const paths = r.op === "read" ? [r.path] : r.op === "readMany" ? r.paths : [];
      for (const p of paths) assert.match(p, /\/\.gitignore$/);
    }
  });
});

Deno.test("search (pool): a hash-bound trust entry holds only for the exact bytes the worker searched", async () => {
  const body = "token kept\n";
  await withPolicy({
    files: { "vendor/v.txt": body },
    // vendor/ is untrusted; the person's rule spells vendor/v.txt, so its name may be shown.
    trust: { vendor: false, "vendor/v.txt/x": true },
  }, async (fx) => {
    fx.policy.storedTrust.setFile("vendor/v.txt", {
      integrity: "T",
      sha256: sha256(new TextEncoder().encode(body)),
      why: "vouch",
    });
    const vouched = await fx.call(searchTool, { pattern: "token", directory: "vendor" });
    assert.equal(
      vouched.content,
      "vendor/v.txt:1: token kept\n[1 matching line in 1 file; searched 1 file]",
    );
    assert.equal(formatLabel(vouched.label), "(T,pub)");
    await fx.write("vendor/v.txt", "token changed after the vouch\n");
    const changed = await fx.call(searchTool, { pattern: "token", directory: "vendor" });
    assert.match(changed.content, /quarantined as ref:0/);
    assert.doesNotMatch(changed.content, /changed after/);
  });
});

Deno.test("search (pool): files are hashed only where a trust entry is bound to a hash, and a missing hash never earns trust", async () => {
  await withPolicy({
    files: { "a.txt": "token\n", "b.txt": "token\n" },
    trust: { ".": false },
  }, async (fx) => {
    const bytes = new TextEncoder().encode("token\n");
    fx.policy.storedTrust.setFile("b.txt", { integrity: "T", sha256: sha256(bytes), why: "vouch" });
    await fx.call(searchTool, { pattern: "token" });
    const asked = fx.workerCalls.flatMap((c) =>
      c.op === "findInFiles" ? c.paths.filter((_, i) => c.hashWanted[i] === 1) : []
    );
    assert.deepEqual(asked, [`${fx.root}/b.txt`]);
    assert.equal(labelNeedsHash(fx.policy, "a.txt"), false);
    assert.equal(labelNeedsHash(fx.policy, "b.txt"), true);
    assert.equal(formatLabel(await labelOfHash(fx.policy, "b.txt", sha256(bytes))), "(T,pub)");
    assert.equal(formatLabel(await labelOfHash(fx.policy, "b.txt", null)), "(U,pub)");
  });
});
