/**
 * Every audit line is built in one place (issue 22): a decision is a verdict, and
 * `auditEntryOf` in `src/policy/verdict.ts` makes its entry. Like test/streams_test.ts for
 * writes, this reads every file of `src/` and fails where an entry is written by hand: a
 * `.record({ … })` call with an object literal, anywhere but verdict.ts.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { sourceFiles } from "./support/source_files.ts";

const SRC = new URL("../src/", import.meta.url).pathname;

/** The one file that may build an entry from its parts. */
const BUILDER = "policy/verdict.ts";

/** A call of a `record` method whose argument opens with an object literal (spaces, lines, comments between). */
const HAND_BUILT = /\.\s*record\s*\(\s*(?:\/\*[\s\S]*?\*\/\s*|\/\/[^\n]*\n\s*)*\{/;

/** The first hand-built entry in a text, as the line it starts on, or null. */
export function handBuilt(text: string): string | null {
  const m = HAND_BUILT.exec(text);
  if (!m) return null;
  const start = text.lastIndexOf("\n", m.index) + 1;
  const end = text.indexOf("\n", m.index);
  return text.slice(start, end === -1 ? undefined : end).trim();
}

Deno.test("audit entries: the pattern finds an entry written by hand, and not a recorded value", () => {
  for (
    const text of [
      'await policy.record({ tool: "x" });',
      "policy.record({\n  tool,\n})",
      "this.policy\n  .record(\n    {\n      tool: 'x',\n    },\n  );",
      "desk.record( /* why */ { tool })",
      "desk.record( // why\n { tool })",
    ]
  ) assert.ok(handBuilt(text), text);
  for (
    const text of [
      "await desk.record(entry);",
      "z.record(z.string())",
      "record({ tool })", // not a method: no Policy or Desk is called so
      "const recorded = { tool };",
      "seat.record(auditEntryOf(v)!)",
    ]
  ) assert.equal(handBuilt(text), null, text);
});

Deno.test("audit entries: no file of src/ but verdict.ts builds an audit entry by hand", async () => {
  const found: string[] = [];
  for (const path of await sourceFiles(SRC)) {
    const rel = relative(SRC, path);
    if (rel === BUILDER) continue;
    const line = handBuilt(await Deno.readTextFile(path));
    if (line !== null) found.push(`src/${rel}: ${line}`);
  }
  assert.deepEqual(found, [], "make the decision a verdict and record it through auditEntryOf");
});
