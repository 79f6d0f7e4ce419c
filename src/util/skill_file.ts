/**
 * The Agent Skills file format (docs/contract.md §11): a folder holding `SKILL.md` whose YAML front
 * matter names it (`name`, matching the folder) and says what it is for (`description`). A
 * policy-free value type: discovery (`src/skills/`) lists skills with it, and the policy layer
 * reads a listed skill's body again with it when load_skill asks.
 */
import { decodeText } from "./text.ts";
import { escapeForScreen } from "./escape.ts";
import { err, ok, type Result } from "./result.ts";
import type { Label } from "./label.ts";

/** Agent Skills: 1–64 lowercase letters, digits and hyphens. */
export const SKILL_NAME = /^[a-z0-9-]{1,64}$/;
/** A SKILL.md over this is skipped, never read whole. */
export const MAX_SKILL_BYTES = 256 * 1024;
const MAX_DESCRIPTION = 1024;

/** A skill listed at the start of a turn: what load_skill may select by name. */
export interface SkillEntry {
  name: string;
  description: string;
  /** Absolute path of the skill's SKILL.md; never shown to the planner. */
  file: string;
  source: "user" | "workspace";
  /**
   * The label of its name and description, which the planner is listed: the policy layer's, as
   * the skills port gave it (discovery never chooses one).
   */
  label: Label;
}

export interface ParsedSkill {
  name: string;
  description: string;
  body: string;
}

/** Loaded on the first SKILL.md, so a run that finds no skill never pays for the parser. */
let yaml: Promise<typeof import("yaml")> | null = null;

/**
 * Reads the YAML front matter of a SKILL.md (between two `---` lines) with the `yaml` package:
 * keys must be unique, aliases are bounded, and only `name` and `description` are used (nested
 * keys such as `metadata` are allowed and passed over).
 */
export async function parseSkillFile(text: string, folder: string): Promise<Result<ParsedSkill>> {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    return err(
      "SKILL.md does not start with front matter (a line '---', then name: and description:)",
    );
  }
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end < 0) return err("SKILL.md's front matter is not closed by a line '---'");
  const { parseDocument } = await (yaml ??= import("yaml"));
  const doc = parseDocument(lines.slice(1, end).join("\n"), { uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    if (first.code === "DUPLICATE_KEY") return err("front matter names a key twice");
    return err(`front matter is not valid YAML (${first.message.split("\n")[0]})`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 20 });
  } catch {
    return err("front matter uses too many YAML aliases");
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return err("front matter is not a list of 'key: value' lines");
  }
  const fields = data as Record<string, unknown>;
  const text_ = (v: unknown) =>
    typeof v === "string" ? v.trim() : v === undefined ? undefined : null;
  const name = text_(fields.name);
  const description = text_(fields.description);
  if (name === null) return err("front matter's name: is not text");
  if (description === null) return err("front matter's description: is not text");
  if (name === undefined || name === "") return err("front matter has no name:");
  if (!SKILL_NAME.test(name)) {
    return err(
      `name '${escapeForScreen(name)}' is not 1–64 lowercase letters, digits and hyphens`,
    );
  }
  if (name !== folder) {
    return err(`name '${name}' does not match its folder '${escapeForScreen(folder)}'`);
  }
  if (description === undefined || description.trim() === "") {
    return err("front matter has no description:");
  }
  if (description.length > MAX_DESCRIPTION) {
    return err(`description is longer than ${MAX_DESCRIPTION} characters`);
  }
  return ok({ name, description, body: lines.slice(end + 1).join("\n").trim() });
}

/** The text of a SKILL.md's bytes, or why they are not text. */
export function decodeSkillFile(bytes: Uint8Array): Result<string> {
  const text = decodeText(bytes);
  return text === null ? err("SKILL.md is not UTF-8 text") : ok(text);
}
