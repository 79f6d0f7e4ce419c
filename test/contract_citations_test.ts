/**
 * The contract the code cites lives in the project (docs/contract.md, docs/cli.md,
 * docs/tools.md), so a reader of the code can follow every citation. Two checks:
 *
 * 1. No file of `src/`, `test/` or `scripts/`, and no doc, names the specification's files bare
 *    (`design.md §13`, `cli.md`, `tools.md`): those are not in the repository. A citation names the
 *    project's doc instead (`docs/contract.md §13.4`, `docs/cli.md#exit-status`).
 * 2. Every citation of a project doc points at something there: the file exists, a `#anchor` is
 *    one of its headings (as GitHub makes anchors of them), and a `docs/contract.md §N` (or a
 *    list, `§3.2, §13.3`) is one of its numbered headings.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/** Where code and docs live; test fixtures hold other projects' text and are left out. */
const SCANNED = ["src", "test", "scripts", "docs", "permissions", "main.ts", "README.md"];
const SKIPPED = ["test/fixtures/"];

function* files(rel: string): Generator<string> {
  const abs = join(ROOT, rel);
  if (Deno.statSync(abs).isFile) {
    yield rel;
    return;
  }
  for (const entry of [...Deno.readDirSync(abs)].sort((a, b) => a.name.localeCompare(b.name))) {
    const child = `${rel}/${entry.name}`;
    if (SKIPPED.some((s) => `${child}/`.startsWith(s))) continue;
    if (entry.isDirectory) yield* files(child);
    else if (/\.(ts|tsx|md|py|sh)$/.test(entry.name)) yield child;
  }
}

/** This file names the specification's files and wrong citations on purpose, as examples. */
const SELF = "test/contract_citations_test.ts";
const ALL = SCANNED.flatMap((r) => [...files(r)]).filter((rel) => rel !== SELF);
const text = (rel: string) => Deno.readTextFileSync(join(ROOT, rel));

/**
 * The text with comments' line breaks taken out (` * ` and `// ` continuations), so that a
 * citation wrapped across two comment lines is read as one.
 */
function joined(source: string): string {
  return source.replace(/[ \t]*\n[ \t]*(?:\*(?!\/)|\/\/)[ \t]?/g, " ");
}

/** The specification's file names, not preceded by a path (which `docs/cli.md` is). */
const BARE = /(?<![\w./-])(design|cli|tools)\.md\b/g;

/** A project doc named with its anchor or its sections, in code or in a doc (backticks allowed). */
const CITATION =
  /(?<![\w.-])docs\/([\w-]+)\.md`?(?:#([\w-]+)|((?:,?[ \t]*§[ \t]?\d+(?:\.\d+)?)+))?/g;

/** The anchor GitHub makes of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

/** A doc's headings outside code fences: their anchors, and the section numbers they carry. */
function headingsOf(doc: string): { anchors: Set<string>; sections: Set<string> } {
  const anchors = new Set<string>();
  const sections = new Set<string>();
  let fenced = false;
  for (const line of text(doc).split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    anchors.add(slug(m[1]));
    const n = /^(\d+(?:\.\d+)?)[. ]/.exec(m[1]);
    if (n) sections.add(n[1]);
  }
  return { anchors, sections };
}

const docs = new Map<string, ReturnType<typeof headingsOf>>();
function doc(name: string): ReturnType<typeof headingsOf> | null {
  const rel = `docs/${name}.md`;
  if (!docs.has(rel)) {
    try {
      docs.set(rel, headingsOf(rel));
    } catch {
      return null;
    }
  }
  return docs.get(rel)!;
}

/**
 * What of a file may cite: a doc whole, but only the comments of code (its strings are test data
 * such as `docs/a.md`, a workspace file of a test).
 */
function citing(rel: string, source: string): string {
  if (rel.endsWith(".md")) return source;
  const comment = /^\s*(?:\/\/|\/\*|\*)/;
  return source.split("\n").filter((line) => comment.test(line)).join("\n");
}

/** Every problem with one file's citations of the project's docs. */
function citationProblems(rel: string, source = text(rel)): string[] {
  const problems: string[] = [];
  const body = joined(citing(rel, source));
  for (const m of body.matchAll(CITATION)) {
    const [cited, name, anchor, sections] = m;
    const d = doc(name);
    if (d === null) {
      problems.push(`${rel}: ${cited}: there is no docs/${name}.md`);
      continue;
    }
    if (anchor !== undefined && !d.anchors.has(anchor)) {
      problems.push(`${rel}: ${cited}: docs/${name}.md has no heading #${anchor}`);
    }
    if (sections !== undefined && name === "contract") {
      for (const s of sections.matchAll(/§[ \t]?(\d+(?:\.\d+)?)/g)) {
        if (!d.sections.has(s[1])) {
          problems.push(`${rel}: ${cited}: docs/contract.md has no section ${s[1]}`);
        }
      }
    }
  }
  return problems;
}

Deno.test("contract: the scan reads the code, the tests and the docs", () => {
  for (const must of ["src/policy/runs.ts", "test/one_shot_test.ts", "docs/contract.md"]) {
    assert.ok(ALL.includes(must), must);
  }
  assert.equal(citing("a.ts", 'const p = "docs/a.md";\n// docs/cli.md'), "// docs/cli.md");
  assert.ok(!ALL.some((f) => f.startsWith("test/fixtures/")));
});

Deno.test("contract: nothing cites the specification's files bare", () => {
  const bare = ALL.filter((rel) => joined(text(rel)).match(BARE) !== null);
  const offenders = bare.map((rel) => {
    const lines = text(rel).split("\n");
    const at = lines.findIndex((l) => l.match(BARE) !== null);
    return `${rel}:${at + 1}: ${lines[at]?.trim()}`;
  });
  assert.deepEqual(offenders, [], "cite docs/contract.md §N, docs/cli.md or docs/tools.md instead");
});

Deno.test("contract: every cited doc, anchor and section exists", () => {
  const problems = ALL.flatMap((rel) => citationProblems(rel));
  assert.deepEqual(problems, []);
});

Deno.test("contract: a bare § in the contract and in the rule index is a section of the contract", () => {
  const { sections } = doc("contract")!;
  const problems: string[] = [];
  for (const rel of ["docs/contract.md", "docs/architecture.md"]) {
    // A `§` right after another doc's name is that doc's; the citation check reads those.
    const body = text(rel).replace(/docs\/(?!contract)[\w-]+\.md`?,?[ \t]*§[ \t]?\d+/g, "");
    for (const m of body.matchAll(/§[ \t]?(\d+(?:\.\d+)?)/g)) {
      if (!sections.has(m[1])) problems.push(`${rel}: §${m[1]} is no section of docs/contract.md`);
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("contract: the checks find what they look for", () => {
  assert.equal(slug("13. The second wall"), "13-the-second-wall");
  assert.equal(slug("13.4 Run confinement"), "134-run-confinement");
  assert.equal(slug("15. For the person's eyes only"), "15-for-the-persons-eyes-only");
  assert.equal(slug("read_file"), "read_file");
  assert.deepEqual("(design.md §13) cli.md tools.md".match(BARE), [
    "design.md",
    "cli.md",
    "tools.md",
  ]);
  assert.equal("docs/cli.md docs/tools.md, docs/contract.md".match(BARE), null);
  assert.equal(
    joined(" * see (docs/contract.md\n * §13.5): x"),
    " * see (docs/contract.md §13.5): x",
  );
  const wrong = [
    "docs/contract.md §99",
    "docs/contract.md §3.2, §13.9",
    "docs/cli.md#no-such-heading",
    "docs/nothing.md",
  ];
  const problems = citationProblems("x.ts", wrong.map((w) => `// ${w}\n`).join(""));
  assert.equal(problems.length, 4, problems.join("\n"));
  assert.match(problems[0], /no section 99/);
  assert.match(problems[1], /no section 13\.9/);
  assert.match(problems[2], /no heading #no-such-heading/);
  assert.match(problems[3], /there is no docs\/nothing\.md/);
  assert.deepEqual(
    citationProblems("x.ts", "// docs/contract.md §13.4, docs/cli.md#exit-status"),
    [],
  );
});
