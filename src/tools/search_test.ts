import assert from "node:assert/strict";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { searchTool } from "./search.ts";
import { formatLabel } from "../util/label.ts";
import { looksLikeRegex } from "../util/listing_text.ts";

Deno.test("search: finds a literal substring and returns matching lines with file and line number", async () => {
  await withPolicy({
    files: { "src/a.ts": "one\nneedle here\nthree needle\n", "src/b.ts": "nothing\n" },
    trust: { ".": true },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "needle" });
    assert.equal(
      out.content,
      "src/a.ts:2: needle here\nsrc/a.ts:3: three needle\n[2 matching lines in 1 file; searched 2 files]",
    );
    assert.equal(formatLabel(out.label), "(T,pub)");
  });
});

Deno.test("search: the pattern is literal text, not a regular expression", async () => {
  await withPolicy({
    files: { "a.txt": "a.c\nabc\n(x)+\n" },
    trust: { ".": true },
  }, async (fx) => {
    assert.match(
      (await fx.call(searchTool, { pattern: "a.c" })).content,
      /^a\.txt:1: a\.c\n\[1 matching line/,
    );
    assert.match((await fx.call(searchTool, { pattern: "(x)+" })).content, /^a\.txt:3: \(x\)\+/);
  });
});

Deno.test("search: a pattern that looks like a regular expression and matched nothing says so", async () => {
  await withPolicy(
    { files: { "a.txt": "function foo() {}\n" }, trust: { ".": true } },
    async (fx) => {
      const regex = await fx.call(searchTool, { pattern: "function\\s+\\w+" });
      assert.match(regex.content, /0 matching lines/);
      assert.match(regex.content, /looks like a regular expression/);
      const plain = await fx.call(searchTool, { pattern: "absent words" });
      assert.doesNotMatch(plain.content, /regular expression/);
    },
  );
  for (const p of ["foo.*bar", "^import", "a|b", "[abc]", "\\d+", "x(?:y)"]) {
    assert.ok(looksLikeRegex(p), p);
  }
  for (const p of ["foo bar", "a.b", "x = y;", "$HOME", "C++"]) assert.ok(!looksLikeRegex(p), p);
});

Deno.test("search: directory narrows the search, and include limits which files are searched", async () => {
  await withPolicy({
    files: { "src/a.ts": "hit\n", "src/a.md": "hit\n", "docs/c.ts": "hit\n" },
    trust: { ".": true },
  }, async (fx) => {
    const dir = await fx.call(searchTool, { pattern: "hit", directory: "src" });
    assert.match(dir.content, /^src\/a\.md:1: hit\nsrc\/a\.ts:1: hit\n/);
    const inc = await fx.call(searchTool, { pattern: "hit", include: "*.ts" });
    assert.match(
      inc.content,
      /^(src\/a\.ts|docs\/c\.ts):1: hit\n(src\/a\.ts|docs\/c\.ts):1: hit\n\[2 matching lines in 2 files; searched 2 files\]$/,
    );
  });
});

Deno.test("search: an include glob with braces that matched no file says braces are literal", async () => {
  await withPolicy({ files: { "a.ts": "x\n" }, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "x", include: "*.{ts,js}" });
    assert.match(out.content, /braces are literal here/);
  });
});

Deno.test("search: at most 200 matching lines, each cut at 500 characters, and truncation is said", async () => {
  const body = Array.from({ length: 300 }, (_, i) => `hit ${i} ${"z".repeat(600)}`).join("\n");
  await withPolicy({ files: { "a.txt": body }, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    const lines = out.content.split("\n");
    assert.equal(lines.filter((l) => l.startsWith("a.txt:")).length, 200);
    assert.match(lines[0], /^a\.txt:1: hit 0 z+ … \[line cut: 606 characters\]$/);
    assert.equal(lines[0].indexOf(" …") - "a.txt:1: ".length, 500);
    assert.match(out.content, /\[truncated at 200 matching lines: the result is incomplete/);
  });
});

Deno.test("search: exactly 200 matches in the last file is not called truncated", async () => {
  const body = Array.from({ length: 200 }, () => "hit").join("\n");
  await withPolicy({ files: { "a.txt": body }, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.doesNotMatch(out.content, /truncated/);
  });
});

Deno.test("search: binary files and files over 10 MiB are skipped and counted", async () => {
  await withPolicy({
    files: {
      "bin.dat": new Uint8Array([0x68, 0x69, 0x00, 0x68, 0x69]),
      "bad-utf8.txt": new Uint8Array([0x68, 0x69, 0xff, 0x0a]),
      "big.txt": "hi ".repeat(4 * 1024 * 1024),
      "ok.txt": "hi\n",
    },
    trust: { ".": true },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hi" });
    assert.equal(
      out.content,
      "ok.txt:1: hi\n[1 matching line in 1 file; searched 3 files; skipped 2 binary; skipped 1 over 10 MiB]",
    );
  });
});

Deno.test("search: the same ignore rules as list_files (.git never, .gitignore applied)", async () => {
  await withPolicy({
    files: {
      ".gitignore": "dist/\n",
      ".git/config": "hit\n",
      "dist/out.js": "hit\n",
      "src/a.ts": "hit\n",
    },
    trust: { ".": true },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.equal(out.content, "src/a.ts:1: hit\n[1 matching line in 1 file; searched 2 files]");
    const git = await fx.call(searchTool, { pattern: "hit", directory: ".git" });
    assert.equal(git.isError, true);
  });
});

Deno.test("search: a result touching an untrusted file is one reference, and the planner sees only counts", async () => {
  await withPolicy({
    files: { "src/a.ts": "token here\n", "vendor/v.js": "token SECRET-LINE\n" },
    trust: { ".": true, vendor: false },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "token" });
    assert.equal(
      out.content,
      "the result touches files nobody vouched for, so it is quarantined as ref:0; pass it to spawn_processor to work with it\n" +
        "[2 matching lines in 2 files; searched 2 files]",
    );
    assert.doesNotMatch(out.content, /SECRET|vendor|src\/a/);
    assert.equal(formatLabel(out.label), "(T,pub)");
    assert.equal(fx.policy.refs.size, 1);
    const ref = fx.policy.refs.all()[0];
    assert.equal(ref.kind, "file_content");
    assert.equal(formatLabel(ref.label), "(U,pub)");
    const stored = new TextDecoder().decode(await fx.policy.refs.bytes(ref));
    assert.match(stored, /vendor\/v\.js:1: token SECRET-LINE/);
  });
});

Deno.test("search: untrusted files that do not match leave a trusted result trusted", async () => {
  await withPolicy({
    files: { "src/a.ts": "token\n", "vendor/v.js": "other\n" },
    trust: { ".": true, vendor: false },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "token" });
    assert.match(out.content, /^src\/a\.ts:1: token/);
  });
});

Deno.test("search: a trusted file whose name lies in an untrusted directory makes the result a reference", async () => {
  await withPolicy({
    files: { "outer/NAME/in.txt": "token\n" },
    trust: { outer: false },
  }, async (fx) => {
    fx.policy.storedTrust.setFile("outer/NAME/in.txt", { integrity: "T", why: "write" });
    const out = await fx.call(searchTool, { pattern: "token" });
    assert.doesNotMatch(out.content, /NAME/);
    assert.match(out.content, /quarantined as ref:0/);
  });
});

Deno.test("search: names from an untrusted directory are content, but names the person wrote in a rule are not", async () => {
  await withPolicy({
    files: { "lib/a.ts": "token\n", "src/b.ts": "token\n" },
    trust: { src: true },
  }, async (fx) => {
    fx.policy.storedTrust.setFile("lib/a.ts", { integrity: "T", why: "write" });
    const root = await fx.call(searchTool, { pattern: "token" });
    assert.match(root.content, /quarantined as ref:0/, "'lib' is a name in the untrusted root");
    const lib = await fx.call(searchTool, { pattern: "token", directory: "lib" });
    assert.match(lib.content, /quarantined as ref:1/, "'a.ts' is a name in untrusted lib");
    const src = await fx.call(searchTool, { pattern: "token", include: "src/*" });
    assert.match(src.content, /^src\/b\.ts:1: token/, "the person named src in a rule");
  });
});

Deno.test("search: a private file's matches are labeled (T,priv)", async () => {
  await withPolicy({ files: { ".env": "KEY=token\n" }, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "token" });
    assert.equal(formatLabel(out.label), "(T,priv)");
  });
});

Deno.test("search: reads files in batches through the worker, never one round trip per file", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`f/${i}.txt`] = i === 299 ? "hit\n" : "miss\n";
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.match(out.content, /searched 300 files/);
    const reads = fx.workerCalls.filter((c) => c.op === "readMany" || c.op === "read");
    assert.ok(reads.length <= 8, `${reads.length} read calls`);
  });
});

Deno.test("search: bad input is a clear error (empty pattern, a file as directory, wrong types, unknown fields)", async () => {
  await withPolicy({ files: { "a.txt": "" }, trust: { ".": true } }, async (fx) => {
    const cases: [unknown, RegExp][] = [
      [{ pattern: "" }, /pattern is empty/],
      [{}, /pattern is required/],
      [{ pattern: 5 }, /pattern must be a string/],
      [{ pattern: "x", directory: "a.txt" }, /a\.txt is a file; search takes a directory/],
      [{ pattern: "x", directory: "../x" }, /'\.\.' segments/],
      [{ pattern: "x", regex: true }, /regex/],
    ];
    for (const [args, expected] of cases) {
      const out = await fx.call(searchTool, args);
      assert.equal(out.isError, true, JSON.stringify(args));
      assert.match(out.content, expected, JSON.stringify(args));
    }
  });
});

Deno.test("search: line numbers are right across many lines and matches on the last line without a newline", async () => {
  const body = "a\n".repeat(999) + "end hit";
  await withPolicy({
    files: { "a.txt": body, "b.txt": "hit\r\nx\nhit hit\n" },
    trust: { ".": true },
  }, async (fx) => {
    const out = await fx.call(searchTool, { pattern: "hit" });
    assert.equal(
      out.content,
      "a.txt:1000: end hit\nb.txt:1: hit\nb.txt:3: hit hit\n[3 matching lines in 2 files; searched 2 files]",
    );
  });
});

Deno.test("search: the decision (shown or quarantined) is appended to the audit log", async () => {
  await withPolicy({
    files: { "src/a.ts": "t\n", "vendor/b.js": "t\n" },
    trust: { ".": true, vendor: false },
  }, async (fx) => {
    await fx.call(searchTool, { pattern: "t", directory: "src" });
    await fx.call(searchTool, { pattern: "t" });
    assert.deepEqual(fx.policy.audit.entries.map((e) => [e.tool, e.decision, e.labels.result]), [
      ["search", "shown (trusted)", "(T,pub)"],
      ["search", "quarantined as ref:0", "(U,pub)"],
    ]);
  });
});
