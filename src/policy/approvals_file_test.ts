import assert from "node:assert/strict";
import { join } from "node:path";
import {
  approvalsWarnings,
  loadApprovals,
  parseApprovals,
  readOutputShapes,
  writeAllowed,
} from "./approvals_file.ts";

const CLI_MD_EXAMPLE = `{
  "trust":   ["src/", "docs/"],
  "untrust": ["src/vendor/"],
  "writes":  ["src/**", "README.md"],
  "run":     [{ "prefix": ["deno", "test"] }],
  "vouch":   [{ "argv": ["git", "status"] }],
  "readOutput": false,
  "quarantinedRead": "keep"
}`;

function refusal(text: string): string {
  const r = parseApprovals(text, "policy.json");
  assert.equal(r.ok, false, text);
  return r.ok ? "" : r.error;
}

Deno.test("approvals: the example of docs/cli.md is accepted as written", () => {
  const r = parseApprovals(CLI_MD_EXAMPLE, "policy.json");
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.deepEqual(r.value.run, [{ prefix: ["deno", "test"] }]);
  assert.deepEqual(r.value.vouch, [{ argv: ["git", "status"] }]);
  assert.equal(r.value.quarantinedRead, "keep");
  assert.ok(parseApprovals("{}", "p").ok, "an empty file approves nothing, and is valid");
});

Deno.test("approvals: an unknown field is an error that names it and the file", () => {
  assert.equal(
    refusal('{"trust": [], "writez": ["a"]}'),
    "policy.json: unknown field 'writez' (did you mean 'writes'?)",
  );
  assert.match(refusal('{"run": [{"argv": ["ls"], "cwd": "/"}]}'), /run\.0: unknown field 'cwd'/);
  assert.match(refusal('{"vouchFiles": ["a"]}'), /unknown field 'vouchFiles'/);
});

Deno.test("approvals: a wrong type is an error that names the field", () => {
  const cases: [string, RegExp][] = [
    ['{"trust": "src/"}', /^policy\.json: trust: .*expected array/],
    ['{"writes": [1]}', /writes\.0: .*expected string/],
    ['{"readOutput": "no"}', /readOutput: expected true, false or a list of shapes/],
    ['{"readOutput": ["version"]}', /readOutput: expected true, false or a list of shapes/],
    ['{"run": ["git status"]}', /run\.0: .*expected object/],
    ['{"run": [{"argv": "git status"}]}', /run\.0\.argv: .*expected array/],
    ['{"run": [{"argv": []}]}', /run\.0\.argv: .*>=1/],
    ['{"vouch": [{"argv": ["a"], "prefix": ["a"]}]}', /vouch\.0: give exactly one of "argv"/],
    ['{"vouch": [{}]}', /vouch\.0: give exactly one of "argv"/],
    ["[]", /\(top level\): .*expected object/],
    ['"x"', /\(top level\)/],
  ];
  for (const [text, want] of cases) assert.match(refusal(text), want, text);
});

Deno.test("approvals: vouching for a file is never pre-approved", () => {
  assert.match(refusal('{"quarantinedRead": "vouch"}'), /quarantinedRead: .*"keep"\|"untrusted"/);
});

Deno.test("approvals: a trust folder that could not be a rule is named, not dropped", () => {
  assert.match(refusal('{"trust": ["src/", "../elsewhere"]}'), /trust\.1: .*'\.\.' segments/);
  assert.match(refusal('{"untrust": ["/etc"]}'), /untrust\.0: .*absolute/);
});

Deno.test("approvals: not JSON, or not readable, is an error naming the file", async () => {
  assert.match(refusal("{ trust: [] }"), /^policy\.json is not valid JSON/);
  const dir = await Deno.makeTempDir({ prefix: "bb-approvals-" });
  try {
    const missing = join(dir, "nope.json");
    const r = await loadApprovals(missing);
    assert.equal(r.ok, false);
    if (!r.ok) assert.ok(r.error.includes(missing));
    await Deno.writeTextFile(join(dir, "p.json"), CLI_MD_EXAMPLE);
    assert.ok((await loadApprovals(join(dir, "p.json"))).ok);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approvals: writes are matched as globs against the real destination", () => {
  const r = parseApprovals(CLI_MD_EXAMPLE, "p");
  assert.ok(r.ok);
  assert.equal(writeAllowed(r.value, "src/a/b.ts"), true);
  assert.equal(writeAllowed(r.value, "README.md"), true);
  assert.equal(writeAllowed(r.value, "docs/README.md"), false);
  assert.equal(writeAllowed(r.value, "srcx/a.ts"), false);
  assert.equal(writeAllowed({}, "src/a.ts"), false);
});

Deno.test("approvals: readOutput takes a list of shapes, each named, in the file's order", () => {
  const r = parseApprovals(
    '{"readOutput": [{"answer": "integer"}, {"answer": "version"}, {"answer": "yes-no"}, ' +
      '{"answer": "letter"}, {"answer": "hex"}]}',
    "p",
  );
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.deepEqual(readOutputShapes(r.value), ["integer", "version", "yes-no", "letter", "hex"]);
  assert.deepEqual(readOutputShapes({ readOutput: true }), [], "true is not a shape");
  assert.deepEqual(readOutputShapes(null), []);
});

Deno.test("approvals: an unknown shape, or a pattern in its place, is named before anything runs", () => {
  assert.equal(
    refusal('{"readOutput": [{"answer": "version"}, {"answer": "semver"}]}'),
    "policy.json: readOutput.1.answer: unknown shape 'semver'; the shapes are version, yes-no, " +
      "letter, integer, hex",
  );
  assert.match(
    refusal('{"readOutput": [{"answer": "^[0-9]+$"}]}'),
    /readOutput\.0\.answer: unknown shape/,
  );
  assert.match(
    refusal('{"readOutput": [{"answer": "hex", "pattern": "[a-z]+"}]}'),
    /readOutput\.0: unknown field 'pattern'/,
  );
  assert.match(refusal('{"readOutput": [{}]}'), /readOutput\.0\.answer: give a shape/);
});

Deno.test("approvals: readOutput true is warned of once; shapes and false are not", () => {
  const warned = approvalsWarnings({ readOutput: true });
  assert.equal(warned.length, 1);
  assert.match(warned[0], /every run's output/);
  assert.match(warned[0], /shapes/);
  assert.deepEqual(approvalsWarnings({ readOutput: false }), []);
  assert.deepEqual(approvalsWarnings({ readOutput: [{ answer: "version" }] }), []);
  assert.deepEqual(approvalsWarnings({}), []);
});
