/**
 * Every label is decided in the policy layer (issue 22): a port's result carries its label, and
 * the driver is the one place labels enter the planner context. This reads every file of `src/`
 * outside `src/policy/` and fails where one names a label constant or writes a label itself
 * (skill discovery, the session, the tools, the command line), or places a label in the planner
 * context anywhere but the driver (a resumed session asks `resumeContext`).
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { sourceFiles } from "./support/source_files.ts";

const SRC = new URL("../src/", import.meta.url).pathname;

/** Where labels are decided, and the module that defines them. */
const DECIDES = (rel: string) => rel.startsWith("policy/") || rel === "util/label.ts";

/** The one place outside the policy layer that places a label in the planner context. */
const PLACES = "driver/driver.ts";

const CHOSEN = [
  /\b(?:UN)?TRUSTED_(?:PUBLIC|PRIVATE)\b/,
  /\blabel\s*\(\s*["'][TU]["']/,
  /\bintegrity\s*:\s*["'][TU]["']\s*,\s*confidentiality\s*:/,
];
const PLACED = /\.\s*(?:placeInContext|clearContext)\s*\(/;

/** The first line of a text that chooses a label itself, or null. */
export function choosesLabel(text: string): string | null {
  for (const line of text.split("\n")) {
    if (CHOSEN.some((re) => re.test(line))) return line.trim();
  }
  return null;
}

/** The first line of a text that places a label in the planner context, or null. */
export function placesLabel(text: string): string | null {
  return text.split("\n").find((line) => PLACED.test(line))?.trim() ?? null;
}

Deno.test("labels decided: the patterns find a label chosen or placed, and not one carried", () => {
  for (
    const text of [
      'import { type Label, TRUSTED_PUBLIC } from "../util/label.ts";',
      "return { text: null, label: UNTRUSTED_PRIVATE };",
      'const l = label("T", "pub");',
      'const l: Label = { integrity: "T", confidentiality: "pub" };',
    ]
  ) assert.ok(choosesLabel(text), text);
  for (
    const text of [
      "label: loaded.value.label,",
      "label: skills.userSkillLabel(),",
      "const UNTRUSTED_NOTE = 'x';",
      'if (l.integrity === "T") return;',
    ]
  ) assert.equal(choosesLabel(text), null, text);
  assert.ok(placesLabel("session.policy.placeInContext(resumedContextLabel(lines));"));
  assert.ok(placesLabel("this.#policy.clearContext();"));
  assert.equal(placesLabel("resumeContext(session.policy, loaded.contextLines);"), null);
});

Deno.test("labels decided: outside the policy layer nothing chooses a label, and only the driver places one", async () => {
  const chosen: string[] = [];
  const placed: string[] = [];
  for (const path of await sourceFiles(SRC)) {
    const rel = relative(SRC, path);
    if (DECIDES(rel)) continue;
    const text = await Deno.readTextFile(path);
    const c = choosesLabel(text);
    if (c !== null) chosen.push(`src/${rel}: ${c}`);
    const p = placesLabel(text);
    if (p !== null && rel !== PLACES) placed.push(`src/${rel}: ${p}`);
  }
  assert.deepEqual(chosen, [], "a port's result carries its label: ask the policy layer for it");
  assert.deepEqual(placed, [], "the driver places labels; the session asks the policy layer");
});
