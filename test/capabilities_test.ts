/**
 * No rule takes the whole session (issue 22): every function of the policy layer takes the
 * capabilities it uses (`src/policy/capabilities.ts`), and the aggregate that implements them
 * all, `Policy`, is named only where it is defined and where it is made. The list is exact, as the
 * port lists are: a file that names `Policy` and is not listed fails, and so does a listed file
 * that no longer names it (remove it from the list).
 *
 * `core.ts` itself checks that `Policy` holds nothing beyond its capabilities (it fails to compile
 * otherwise).
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/** The files that may name the type `Policy`, relative to the repository. */
const MAY_NAME_POLICY = new Set([
  "src/policy/core.ts", // where it is defined
  "src/session/compose.ts", // the composition root, where it is made
]);

/** Every `.ts` file under `dir`, tests included, relative to the repository. */
async function tsFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) await tsFiles(path, out);
    else if (e.name.endsWith(".ts") || e.name.endsWith(".tsx")) out.push(path);
  }
  return out;
}

/**
 * `text` with its comments and string literals blanked, so that a doc comment or a test's name
 * saying "Policy" is not a use of the type. Template literals are blanked whole, interpolations
 * included: no code of the kind this test looks for sits inside one.
 */
export function codeOnly(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const two = text.slice(i, i + 2);
    let end = -1;
    if (two === "//") end = (text.indexOf("\n", i) + 1 || text.length + 1) - 1;
    else if (two === "/*") end = (text.indexOf("*/", i + 2) + 1 || text.length - 1) + 1;
    else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      end = j + 1;
    }
    if (end === -1) {
      out += c;
      i++;
    } else {
      out += text.slice(i, end).replace(/[^\n]/g, " ");
      i = end;
    }
  }
  return out;
}

/** The identifier, built from a string so that this file does not name it in code. */
const POLICY_NAME = new RegExp("(?<![\\w$#])Policy(?![\\w$])");

/** Whether `text`'s code names the identifier `Policy` (not `DriverPolicy`, not a comment). */
export function namesPolicy(text: string): boolean {
  return POLICY_NAME.test(codeOnly(text));
}

Deno.test("capabilities: namesPolicy sees code, not comments or strings", () => {
  assert.ok(namesPolicy('import type { Policy } from "./core.ts";'));
  assert.ok(namesPolicy("function f(policy: Policy) {}"));
  assert.ok(namesPolicy("const x = await Policy.open(o);"));
  assert.ok(namesPolicy("type P = Pick<Policy, 'refs'>;"));
  assert.ok(!namesPolicy("function f(policy: FileLabels & Recording) {}"));
  assert.ok(!namesPolicy("// the Policy is gone\n/** `Policy.record` */ const a = 1;"));
  assert.ok(!namesPolicy('Deno.test("Policy.record writes", () => {});'));
  assert.ok(!namesPolicy("const s = `a ${'Policy'} b`; let p: DriverPolicy; q.#Policy;"));
  assert.ok(namesPolicy('const s = "a\\"b"; let p: Policy;'), "an escaped quote ends no string");
});

Deno.test("capabilities: only the listed files name the type Policy", async () => {
  const files = [...await tsFiles("src"), ...await tsFiles("test"), ...await tsFiles("scripts")];
  assert.ok(files.length > 100, `found ${files.length} files`);
  const naming = new Set<string>();
  for (const file of files) {
    if (namesPolicy(await Deno.readTextFile(join(ROOT, file)))) naming.add(file);
  }
  const unlisted = [...naming].filter((f) => !MAY_NAME_POLICY.has(f)).sort();
  assert.deepEqual(
    unlisted,
    [],
    "these files name Policy: take the capabilities the code uses (src/policy/capabilities.ts)",
  );
  const stale = [...MAY_NAME_POLICY].filter((f) => !naming.has(f)).sort();
  assert.deepEqual(stale, [], "listed but no longer naming Policy: remove them from the list");
});
