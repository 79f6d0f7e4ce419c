/**
 * Skills (design.md §11) in the Agent Skills layout: a folder holding `SKILL.md` whose front
 * matter names it (`name`, matching the folder) and says what it is for (`description`). They
 * are found at the start of each turn in the user's config directory and, when that folder is
 * trusted, in the workspace's `.bravebot/skills/` (read through the effect worker). A folder
 * that does not fit is reported and skipped, never half-listed.
 */
import { decodeText } from "../util/text.ts";
import { dirname, join, relative } from "node:path";
import type { Policy } from "../policy/core.ts";
import { type Label, TRUSTED_PUBLIC } from "../util/label.ts";
import { resolvePath } from "../policy/paths.ts";
import { readAtMost } from "../policy/reads.ts";
import type { SkillEntry } from "../state/session_state.ts";
import { escapeForScreen } from "../util/escape.ts";
import { err, messageOf, ok, type Result } from "../util/result.ts";

/** Agent Skills: 1–64 lowercase letters, digits and hyphens. */
export const SKILL_NAME = /^[a-z0-9-]{1,64}$/;
export const WORKSPACE_SKILLS_DIR = ".bravebot/skills";
const MAX_SKILL_BYTES = 256 * 1024;
const MAX_DESCRIPTION = 1024;

export interface ParsedSkill {
  name: string;
  description: string;
  body: string;
}

export interface Discovery {
  skills: SkillEntry[];
  /** Each a full sentence naming the folder and what was wrong with it. */
  problems: string[];
}

/** The user's skills folder: beside the user config file (so `--config` moves both). */
export function userSkillsDir(configPath: string): string {
  return join(dirname(configPath), "skills");
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

function decode(bytes: Uint8Array): Result<string> {
  const text = decodeText(bytes);
  return text === null ? err("SKILL.md is not UTF-8 text") : ok(text);
}

async function userSkills(dir: string, out: Discovery): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    entries = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    out.problems.push(`${dir}: cannot be read (${messageOf(e)}); no user skills listed`);
    return;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const where = join(dir, entry.name);
    let isDir = entry.isDirectory;
    if (entry.isSymlink) isDir = await Deno.stat(where).then((s) => s.isDirectory, () => false);
    if (!isDir) {
      out.problems.push(
        `${
          escapeForScreen(where)
        }: not a skill folder (a skill is a folder holding SKILL.md); skipped`,
      );
      continue;
    }
    const file = join(where, "SKILL.md");
    let bytes: Uint8Array;
    try {
      const info = await Deno.stat(file);
      if (!info.isFile) throw new Deno.errors.NotFound();
      if (info.size > MAX_SKILL_BYTES) {
        out.problems.push(`${file}: larger than ${MAX_SKILL_BYTES} bytes; skipped`);
        continue;
      }
      bytes = await Deno.readFile(file);
    } catch (e) {
      out.problems.push(
        e instanceof Deno.errors.NotFound
          ? `${escapeForScreen(where)}: holds no SKILL.md; skipped`
          : `${file}: cannot be read (${messageOf(e)}); skipped`,
      );
      continue;
    }
    const parsed = decode(bytes);
    const skill = parsed.ok ? await parseSkillFile(parsed.value, entry.name) : parsed;
    if (!skill.ok) {
      out.problems.push(`${escapeForScreen(file)}: ${skill.error}; skipped`);
      continue;
    }
    out.skills.push({
      name: skill.value.name,
      description: skill.value.description,
      file,
      source: "user",
    });
  }
}

async function workspaceSkills(policy: Policy, out: Discovery): Promise<void> {
  const root = await resolvePath(policy.workspace, WORKSPACE_SKILLS_DIR);
  if (!root.ok) {
    out.problems.push(`${WORKSPACE_SKILLS_DIR}: ${root.error}; no workspace skills listed`);
    return;
  }
  if (!root.value.exists) return;
  if (root.value.kind !== "directory") {
    out.problems.push(`${WORKSPACE_SKILLS_DIR} is not a folder; no workspace skills listed`);
    return;
  }
  // The folder's names and files count only when a person trusted the folder.
  if (policy.trust.ruleIntegrity(root.value.rel) !== "T") {
    out.problems.push(
      `${WORKSPACE_SKILLS_DIR}/ is not trusted, so its skills are not listed ` +
        `(bravebot trust add ${WORKSPACE_SKILLS_DIR} to list them)`,
    );
    return;
  }
  const listing = await policy.worker.call({ op: "readDirs", paths: [root.value.abs] });
  const first = listing.ok ? listing.value[0] : undefined;
  if (!first || "error" in first) {
    const why = !listing.ok ? listing.error.message : first && "error" in first ? first.error : "";
    out.problems.push(`${WORKSPACE_SKILLS_DIR}: cannot be listed (${why})`);
    return;
  }
  const entries = [...first.entries].sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const shownName = `${WORKSPACE_SKILLS_DIR}/${escapeForScreen(entry.name)}`;
    const folder = await resolvePath(policy.workspace, `${WORKSPACE_SKILLS_DIR}/${entry.name}`);
    if (!folder.ok) {
      out.problems.push(`${shownName}: ${folder.error}; skipped`);
      continue;
    }
    if (folder.value.kind !== "directory") {
      out.problems.push(
        `${shownName}: not a skill folder (a skill is a folder holding SKILL.md); skipped`,
      );
      continue;
    }
    const file = await resolvePath(
      policy.workspace,
      `${WORKSPACE_SKILLS_DIR}/${entry.name}/SKILL.md`,
    );
    if (!file.ok || file.value.kind !== "file") {
      out.problems.push(
        `${shownName}: ${file.ok ? "holds no SKILL.md" : file.error}; skipped`,
      );
      continue;
    }
    const loaded = await readWorkspaceSkill(policy, file.value.rel, file.value.abs);
    if (!loaded.ok) {
      out.problems.push(`${shownName}/SKILL.md: ${loaded.error}; skipped`);
      continue;
    }
    const skill = await parseSkillFile(loaded.value.text, entry.name);
    if (!skill.ok) {
      out.problems.push(`${shownName}/SKILL.md: ${skill.error}; skipped`);
      continue;
    }
    out.skills.push({
      name: skill.value.name,
      description: skill.value.description,
      file: file.value.abs,
      source: "workspace",
    });
  }
}

async function readWorkspaceSkill(
  policy: Policy,
  rel: string,
  abs: string,
): Promise<Result<{ text: string; label: Label }>> {
  const fileLabel = await policy.fileLabel(rel);
  if (fileLabel.integrity !== "T") {
    return err("the file is not trusted (it was written from untrusted content)");
  }
  const read = await readAtMost(policy, abs, MAX_SKILL_BYTES);
  if (!read.ok) {
    return err(
      read.tooBig ? `larger than ${MAX_SKILL_BYTES} bytes` : `cannot be read (${read.error})`,
    );
  }
  const text = decode(read.bytes);
  return text.ok ? ok({ text: text.value, label: fileLabel }) : text;
}

/**
 * Finds the skills to list this turn. A workspace skill with the name of a user skill is
 * skipped: the user's own wins, and the person is told.
 */
export async function discoverSkills(
  policy: Policy,
  userDir: string | null,
): Promise<Discovery> {
  const out: Discovery = { skills: [], problems: [] };
  if (userDir) await userSkills(userDir, out);
  const fromWorkspace: Discovery = { skills: [], problems: out.problems };
  await workspaceSkills(policy, fromWorkspace);
  const taken = new Set(out.skills.map((s) => s.name));
  for (const s of fromWorkspace.skills) {
    if (taken.has(s.name)) {
      out.problems.push(
        `${WORKSPACE_SKILLS_DIR}/${s.name}: a user skill has the same name; the user's is listed`,
      );
    } else out.skills.push(s);
  }
  out.skills.sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

/** Where a skill was found, as `bravebot skills` prints it. */
export function skillLocation(entry: SkillEntry, policy: Policy): string {
  return entry.source === "user"
    ? dirname(entry.file)
    : relative(policy.workspace.root, dirname(entry.file)) + "/";
}

/** The list the planner is given at the start of a turn. */
export function skillsListing(skills: readonly SkillEntry[]): string {
  if (skills.length === 0) return "";
  return [
    "Skills you may load with load_skill (name exactly as listed):",
    ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ")}`),
  ].join("\n");
}

/**
 * The body of a listed skill. A user skill is the person's own file; a workspace skill is read
 * again through the effect worker and must still be trusted.
 */
export async function readSkill(
  policy: Policy,
  entry: SkillEntry,
): Promise<Result<{ body: string; label: Label }>> {
  let loaded: Result<{ text: string; label: Label }>;
  if (entry.source === "user") {
    try {
      loaded = ok({ text: await Deno.readTextFile(entry.file), label: TRUSTED_PUBLIC });
    } catch (e) {
      loaded = err(`cannot be read (${messageOf(e)})`);
    }
  } else {
    const rel = relative(policy.workspace.root, entry.file).split("\\").join("/");
    loaded = await readWorkspaceSkill(policy, rel, entry.file);
  }
  if (!loaded.ok) return loaded;
  const folder = entry.file.split(/[\\/]/).at(-2) ?? "";
  const parsed = await parseSkillFile(loaded.value.text, folder);
  if (!parsed.ok) return err(`it changed since it was listed: ${parsed.error}`);
  return ok({ body: parsed.value.body, label: loaded.value.label });
}

export interface ProjectMemory {
  /** The text given to the planner, or null when none is given. */
  text: string | null;
  label: Label;
  /** For the person: why AGENTS.md was not given, or that it was cut. */
  note?: string;
}

const MAX_MEMORY_BYTES = 64 * 1024;

/**
 * `AGENTS.md` at the workspace root, when trusted, for the planner at the start of each turn
 * (design.md §14). Untrusted, it is not given, and the person is told why.
 */
export async function projectMemory(policy: Policy): Promise<ProjectMemory | null> {
  const file = await resolvePath(policy.workspace, "AGENTS.md");
  if (!file.ok) return { text: null, label: TRUSTED_PUBLIC, note: `AGENTS.md: ${file.error}` };
  if (!file.value.exists) return null;
  if (file.value.kind !== "file" || file.value.rel !== "AGENTS.md") {
    return { text: null, label: TRUSTED_PUBLIC, note: "AGENTS.md is not a plain file; ignored" };
  }
  const fileLabel = await policy.fileLabel(file.value.rel);
  if (fileLabel.integrity !== "T") {
    return {
      text: null,
      label: TRUSTED_PUBLIC,
      note: "AGENTS.md is not trusted, so it was not given to the planner",
    };
  }
  const read = await policy.worker.call({
    op: "read",
    path: file.value.abs,
    length: MAX_MEMORY_BYTES + 1,
  });
  if (!read.ok) {
    return { text: null, label: TRUSTED_PUBLIC, note: `AGENTS.md: ${read.error.message}` };
  }
  const cut = read.value.length > MAX_MEMORY_BYTES;
  const bytes = cut ? read.value.subarray(0, MAX_MEMORY_BYTES) : read.value;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (text.includes("\0")) {
    return { text: null, label: TRUSTED_PUBLIC, note: "AGENTS.md is not text; ignored" };
  }
  return {
    text,
    label: fileLabel,
    note: cut ? `AGENTS.md is over ${MAX_MEMORY_BYTES} bytes; only the start is given` : undefined,
  };
}
