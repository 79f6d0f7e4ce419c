/**
 * The layering of `src/` is a test, not a convention (docs/architecture.md). Every file under
 * `src/` is read — not only the module graph from `main.ts`, which misses the worker entry points
 * loaded through `new Worker(new URL(…))` — and each import (static, dynamic, re-export, `import
 * type`, and a `new URL(…)` naming a module) is checked against the arrows listed once, in
 * {@link ALLOWED}. A type import is an import: a port that leaks a type leaks the layer.
 *
 * The method-call half of the rule — each port holds exactly the members listed for it, and a
 * tool's never `worker`, `record` or `placeInContext` — is `test/layering_ports_check.ts`
 * (compiled by `deno task check`) and `test/layering_ports_test.ts`; the import parser, shared
 * with `test/import_circles_test.ts`, is `test/support/imports.ts`.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { importGraph, sourceFiles, specifiers, SRC } from "./support/imports.ts";

/**
 * Which part may import which. A part is a folder of `src/`; `policy/api` is the policy layer's
 * decision API (`src/policy/api.ts` and the port slices it is made of), the only part of the
 * policy layer that the driver and the tools may use. `*` means every part.
 */
const ALLOWED: Record<string, readonly string[]> = {
  "cli": ["*"],
  "session": ["*"],
  "main": ["*"],
  "driver": ["tools", "model", "state", "util", "policy/api"],
  "tools": ["policy/api", "util"],
  "policy": ["worker", "state", "person/types", "util"],
  "policy/api": ["policy", "worker", "state", "person/types", "util"],
  "skills": ["policy/ports", "util"],
  "person": ["util", "policy/types"],
  "person/types": ["util", "policy/types"],
  "model": ["util"],
  "state": ["util"],
  "worker": ["util"],
  "util": [],
};

/** Files of the policy layer that are plain types and constants, which the person side may see. */
const POLICY_TYPES = new Set(["policy/approvals_file.ts", "policy/trust_map.ts"]);

/** The part a file of `src/` belongs to. */
function partOf(rel: string): string {
  if (!rel.includes("/")) return "main";
  if (rel === "policy/api.ts" || rel.startsWith("policy/ports/")) return "policy/api";
  if (rel === "person/person.ts") return "person/types";
  return rel.split("/")[0];
}

/** The names under which importing `rel` is listed in {@link ALLOWED}. */
function targetsOf(rel: string): string[] {
  const names = [partOf(rel)];
  if (rel.startsWith("policy/ports/")) names.push("policy/ports");
  if (POLICY_TYPES.has(rel)) names.push("policy/types");
  return names;
}

/** Whether `from` may import `to` (both relative to `src/`). */
function allowed(from: string, to: string): boolean {
  // A folder is one part: its files import each other freely (the policy layer's API and its
  // rules, the person's interface and its screens).
  if (from.includes("/") && from.split("/")[0] === to.split("/")[0]) return true;
  const part = partOf(from);
  const may = ALLOWED[part];
  assert.ok(may, `no arrows are listed for the part '${part}' (${from})`);
  return may.includes("*") || targetsOf(to).some((t) => may.includes(t));
}

Deno.test("layering: specifiers finds every form of import", () => {
  const text = [
    'import { a } from "./a.ts";',
    "import type {\n  B,\n} from '../b.ts';",
    'export * from "./c.ts";',
    'export { d } from "./d.ts";',
    'import "./e.ts";',
    'const f = await import("./f.ts");',
    'new Worker(new URL("./g.ts", import.meta.url), { type: "module" });',
  ].join("\n");
  assert.deepEqual(specifiers(text).sort(), [
    "../b.ts",
    "./a.ts",
    "./c.ts",
    "./d.ts",
    "./e.ts",
    "./f.ts",
    "./g.ts",
  ]);
});

Deno.test("layering: the arrows refuse what they should", () => {
  assert.equal(allowed("tools/read_file.ts", "policy/core.ts"), false);
  assert.equal(allowed("tools/read_file.ts", "policy/api.ts"), true);
  assert.equal(allowed("tools/read_file.ts", "worker/client.ts"), false);
  assert.equal(allowed("driver/driver.ts", "policy/egress.ts"), false);
  assert.equal(allowed("state/config.ts", "policy/approvals_file.ts"), false);
  assert.equal(allowed("util/glob.ts", "policy/label.ts"), false);
  assert.equal(allowed("policy/reads.ts", "worker/client.ts"), true);
  assert.equal(allowed("skills/discover.ts", "policy/ports/skills.ts"), true);
  assert.equal(allowed("skills/discover.ts", "policy/core.ts"), false);
  assert.equal(allowed("person/ink/person.ts", "policy/trust_map.ts"), true);
  assert.equal(allowed("person/shell_mode.ts", "policy/refs.ts"), false);
  assert.equal(allowed("cli/main.ts", "worker/client.ts"), true);
});

Deno.test("layering: every import under src/ follows the arrows", async () => {
  const broken: string[] = [];
  const graph = await importGraph();
  assert.ok(graph.size > 50, `found ${graph.size} files under src/`);
  for (const [from, imports] of graph) {
    for (const { spec, to } of imports) {
      if (to.startsWith("..")) {
        broken.push(`${from} -> ${spec} (outside src/)`);
        continue;
      }
      if (!allowed(from, to)) broken.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(broken, [], `imports against the layering:\n${broken.join("\n")}`);
});

/** What a tool may take from `util/label.ts`: the type and its notation, never a label to give. */
const TOOL_LABEL_NAMES = new Set(["Label", "formatLabel"]);

Deno.test("layering: tools choose no label: none imported from util/label.ts, none written", async () => {
  const chosen: string[] = [];
  for (const file of await sourceFiles(join(SRC, "tools"))) {
    const rel = relative(SRC, file);
    const text = await Deno.readTextFile(file);
    const fromLabel =
      /^\s*(?:import|export)\s([^;]*?)\sfrom\s*["']([^"']*\/util\/label\.ts)["']/gms;
    for (const m of text.matchAll(fromLabel)) {
      const names = /\{([^}]*)\}/.exec(m[1]);
      if (!names) {
        chosen.push(`${rel}: ${m[1].trim()} from util/label.ts`);
        continue;
      }
      for (const part of names[1].split(",")) {
        const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0];
        if (name !== "" && !TOOL_LABEL_NAMES.has(name)) chosen.push(`${rel}: ${name}`);
      }
    }
    // A label written out by hand is a choice too.
    if (/\bintegrity\s*:/.test(text)) chosen.push(`${rel}: a label written out`);
  }
  assert.deepEqual(chosen, [], `labels chosen in src/tools (the port's results carry them):`);
});
