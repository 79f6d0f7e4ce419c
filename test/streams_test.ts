/**
 * Every stream a person may read passes one wall (issue 21): stdout and stderr are written only
 * by `src/util/output.ts`, whose every write passes `guardTerminal`, and the session screen's
 * text passes the same function (person/ink/app.ts). Like test/layering_test.ts for imports,
 * this reads every file of `src/` and fails on a direct write anywhere else: `console.*`,
 * `Deno.stdout`/`Deno.stderr` (but `.isTerminal()`), `process.stdout`/`process.stderr`, and
 * the ways of reaching them under another name.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const SRC = new URL("../src/", import.meta.url).pathname;

/** The files that may touch the streams themselves, each with why. */
const ALLOWED: Record<string, string> = {
  "util/output.ts": "the writer itself",
  "person/ink/mod.ts":
    "the session screen: Ink owns stdout while it is mounted (its text passes guardTerminal in app.ts); the clear sequence and the size are its own",
  "worker/kernel_child.ts":
    "the kernel wall's child writes protocol frames to its parent, never to a person",
};

const DIRECT = [
  /\bconsole\s*\.\s*\w+/,
  /\bDeno\s*\.\s*std(?:out|err)\b(?!\.isTerminal\(\))/,
  /\bprocess\s*\.\s*std(?:out|err)\b/,
  /\bDeno\s*\.\s*write(?:Sync)?\s*\(/,
  /\{[^}]*\bstd(?:out|err)\b[^}]*\}\s*=\s*(?:Deno|process|globalThis)\b/,
  /import\s*\{[^}]*\bstd(?:out|err)\b[^}]*\}\s*from\s*["'](?:node:)?process["']/,
  /\bglobalThis\s*\.\s*(?:console|Deno\s*\.\s*std(?:out|err))\b/,
];

/** The first direct write in a text, as the line it is on, or null. */
export function directWrite(text: string): string | null {
  for (const line of text.split("\n")) {
    if (DIRECT.some((re) => re.test(line))) return line.trim();
  }
  return null;
}

async function sourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) await sourceFiles(path, out);
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

Deno.test("streams: the pattern finds every form of a direct write, and not a terminal check", () => {
  for (
    const text of [
      'console.log("x")',
      "console.error(line)",
      "globalThis.console.info(1)",
      "Deno.stdout.writeSync(bytes)",
      "const w = Deno.stderr.writable.getWriter();",
      "Deno.writeSync(1, bytes)",
      'process.stdout.write("x")',
      "const { stdout } = Deno;",
      'import { stderr } from "node:process";',
    ]
  ) assert.ok(directWrite(text), text);
  assert.equal(directWrite("if (Deno.stdout.isTerminal()) {}"), null);
  assert.equal(directWrite('printOut("console")'), null);
});

Deno.test("streams: nothing in src/ writes to stdout or stderr but the writer", async () => {
  const found: string[] = [];
  const allowedHits = new Set<string>();
  for (const file of await sourceFiles(SRC)) {
    const rel = relative(SRC, file).split("\\").join("/");
    const hit = directWrite(await Deno.readTextFile(file));
    if (hit === null) continue;
    if (rel in ALLOWED) allowedHits.add(rel);
    else found.push(`${rel}: ${hit}`);
  }
  assert.deepEqual(found, [], "write through src/util/output.ts (printOut, printErr, …)");
  // An exception nobody needs any more is taken out of the list.
  assert.deepEqual([...allowedHits].sort(), Object.keys(ALLOWED).sort());
});
