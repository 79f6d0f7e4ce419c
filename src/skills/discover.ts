/**
 * Skills (docs/contract.md §11) in the Agent Skills layout (`util/skill_file.ts`). They are found
 * at the start of each turn in the user's config directory and, when that folder is trusted, in the
 * workspace's `.bravebot/skills/` (through the skills port, which decides what is trusted). A
 * folder that does not fit is reported and skipped, never half-listed.
 */
import { dirname, join, relative } from "node:path";
import type { SkillsPort } from "../policy/ports/skills.ts";
import type { Label } from "../util/label.ts";
import {
  decodeSkillFile,
  MAX_SKILL_BYTES,
  parseSkillFile,
  type SkillEntry,
} from "../util/skill_file.ts";
import { escapeForScreen } from "../util/escape.ts";
import { messageOf } from "../util/result.ts";

export const WORKSPACE_SKILLS_DIR = ".bravebot/skills";

export interface Discovery {
  skills: SkillEntry[];
  /** Each a full sentence naming the folder and what was wrong with it. */
  problems: string[];
}

/** The user's skills folder: beside the user config file (so `--config` moves both). */
export function userSkillsDir(configPath: string): string {
  return join(dirname(configPath), "skills");
}

async function userSkills(skills: SkillsPort, dir: string, out: Discovery): Promise<void> {
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
    const parsed = decodeSkillFile(bytes);
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
      label: skills.userSkillLabel(),
    });
  }
}

async function workspaceSkills(skills: SkillsPort, out: Discovery): Promise<void> {
  const root = await skills.resolve(WORKSPACE_SKILLS_DIR);
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
  const listing = await skills.listTrustedFolder(root.value);
  if (listing.kind === "untrusted") {
    out.problems.push(
      `${WORKSPACE_SKILLS_DIR}/ is not trusted, so its skills are not listed ` +
        `(bravebot trust add ${WORKSPACE_SKILLS_DIR} to list them)`,
    );
    return;
  }
  if (listing.kind === "error") {
    out.problems.push(`${WORKSPACE_SKILLS_DIR}: cannot be listed (${listing.error})`);
    return;
  }
  const names = [...listing.names].sort((a, b) => a.localeCompare(b));
  for (const name of names) {
    const shownName = `${WORKSPACE_SKILLS_DIR}/${escapeForScreen(name)}`;
    const folder = await skills.resolve(`${WORKSPACE_SKILLS_DIR}/${name}`);
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
    const file = await skills.resolve(`${WORKSPACE_SKILLS_DIR}/${name}/SKILL.md`);
    if (!file.ok || file.value.kind !== "file") {
      out.problems.push(
        `${shownName}: ${file.ok ? "holds no SKILL.md" : file.error}; skipped`,
      );
      continue;
    }
    const loaded = await skills.readWorkspaceSkill(file.value);
    if (!loaded.ok) {
      out.problems.push(`${shownName}/SKILL.md: ${loaded.error}; skipped`);
      continue;
    }
    const skill = await parseSkillFile(loaded.value.text, name);
    if (!skill.ok) {
      out.problems.push(`${shownName}/SKILL.md: ${skill.error}; skipped`);
      continue;
    }
    out.skills.push({
      name: skill.value.name,
      description: skill.value.description,
      file: file.value.abs,
      source: "workspace",
      label: loaded.value.label,
    });
  }
}

/**
 * Finds the skills to list this turn. A workspace skill with the name of a user skill is
 * skipped: the user's own wins, and the person is told.
 */
export async function discoverSkills(
  skills: SkillsPort,
  userDir: string | null,
): Promise<Discovery> {
  const out: Discovery = { skills: [], problems: [] };
  if (userDir) await userSkills(skills, userDir, out);
  const fromWorkspace: Discovery = { skills: [], problems: out.problems };
  await workspaceSkills(skills, fromWorkspace);
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
export function skillLocation(entry: SkillEntry, skills: SkillsPort): string {
  return entry.source === "user"
    ? dirname(entry.file)
    : relative(skills.workspaceRoot, dirname(entry.file)) + "/";
}

/** The list the planner is given at the start of a turn. */
export function skillsListing(skills: readonly SkillEntry[]): string {
  if (skills.length === 0) return "";
  return [
    "Skills you may load with load_skill (name exactly as listed):",
    ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ")}`),
  ].join("\n");
}

export interface ProjectMemory {
  /** The text given to the planner, or null when none is given. */
  text: string | null;
  /** The label of the text given, as the skills port read it; null when none is given. */
  label: Label | null;
  /** For the person: why AGENTS.md was not given, or that it was cut. */
  note?: string;
}

const MAX_MEMORY_BYTES = 64 * 1024;

/**
 * `AGENTS.md` at the workspace root, when trusted, for the planner at the start of each turn
 * (docs/contract.md §11). Untrusted, it is not given, and the person is told why.
 */
export async function projectMemory(skills: SkillsPort): Promise<ProjectMemory | null> {
  const file = await skills.resolve("AGENTS.md");
  if (!file.ok) return { text: null, label: null, note: `AGENTS.md: ${file.error}` };
  if (!file.value.exists) return null;
  if (file.value.kind !== "file" || file.value.rel !== "AGENTS.md") {
    return { text: null, label: null, note: "AGENTS.md is not a plain file; ignored" };
  }
  const read = await skills.readTrustedHead(file.value, MAX_MEMORY_BYTES + 1);
  if (read.kind === "untrusted") {
    return {
      text: null,
      label: null,
      note: "AGENTS.md is not trusted, so it was not given to the planner",
    };
  }
  if (read.kind === "error") {
    return { text: null, label: null, note: `AGENTS.md: ${read.error}` };
  }
  const cut = read.bytes.length > MAX_MEMORY_BYTES;
  const bytes = cut ? read.bytes.subarray(0, MAX_MEMORY_BYTES) : read.bytes;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (text.includes("\0")) {
    return { text: null, label: null, note: "AGENTS.md is not text; ignored" };
  }
  return {
    text,
    label: read.label,
    note: cut ? `AGENTS.md is over ${MAX_MEMORY_BYTES} bytes; only the start is given` : undefined,
  };
}
