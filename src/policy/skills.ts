/**
 * Skill decisions (docs/contract.md §11): the workspace's skills count only while a person trusts
 * their folder and their files, load_skill's name selects only a skill listed at the start of the
 * turn (matched exactly, never a path), a listed skill is read again when it is loaded, and every
 * load is recorded. Discovery (`src/skills/`) reaches the workspace only through the skills port
 * (`ports/skills.ts`), which hands out these functions.
 */
import { relative } from "node:path";
import type { FileLabels, Recording, WorkspaceFiles } from "./capabilities.ts";
import { openedAsChecked, type ResolvedPath, resolvePath } from "./paths.ts";
import { labelOfBytes, readAtMost } from "./reads.ts";
import { type Label, TRUSTED_PUBLIC } from "../util/label.ts";
import {
  decodeSkillFile,
  MAX_SKILL_BYTES,
  parseSkillFile,
  type SkillEntry,
} from "../util/skill_file.ts";
import { err, ok, type Result } from "../util/result.ts";
import { editDistance } from "../util/edit_distance.ts";
import { recordDecision, type Settled } from "./verdict.ts";

/** A workspace folder's names, given only when a person trusted the folder. */
export type FolderListing =
  | { kind: "listed"; names: string[] }
  | { kind: "untrusted" }
  | { kind: "error"; error: string };

/** Lists a resolved workspace folder through the effect worker, if its names count. */
export async function listTrustedFolder(
  policy: FileLabels & WorkspaceFiles,
  dir: ResolvedPath,
): Promise<FolderListing> {
  if (policy.trust.ruleIntegrity(dir.rel) !== "T") return { kind: "untrusted" };
  const listing = await policy.worker.call({ op: "readDirs", paths: [dir.abs] });
  const first = listing.ok ? listing.value[0] : undefined;
  if (!first || "error" in first) {
    const why = !listing.ok ? listing.error.message : first && "error" in first ? first.error : "";
    return { kind: "error", error: why };
  }
  // The names count as the trusted folder's only if the folder listed is the one resolved.
  if (!openedAsChecked(dir, first.opened)) {
    return { kind: "error", error: "the folder changed while it was being listed" };
  }
  return { kind: "listed", names: first.entries.map((e) => e.name) };
}

/**
 * A workspace SKILL.md as text with its label: refused unless the file is trusted, and read
 * through the effect worker no further than {@link MAX_SKILL_BYTES}, from the file resolved and
 * no other; the label is of the bytes read. Discovery and load_skill both read a workspace skill
 * here.
 */
export async function readWorkspaceSkill(
  policy: FileLabels & WorkspaceFiles,
  file: ResolvedPath,
): Promise<Result<{ text: string; label: Label }>> {
  const untrusted = err("the file is not trusted (it was written from untrusted content)");
  if ((await policy.fileLabel(file.rel, file)).integrity !== "T") return untrusted;
  const read = await readAtMost(policy, file, MAX_SKILL_BYTES);
  if (!read.ok) {
    return err(
      read.tooBig ? `larger than ${MAX_SKILL_BYTES} bytes` : `cannot be read (${read.error})`,
    );
  }
  const fileLabel = await labelOfBytes(policy, file.rel, read.bytes);
  if (fileLabel.integrity !== "T") return untrusted;
  const text = decodeSkillFile(read.bytes);
  return text.ok ? ok({ text: text.value, label: fileLabel }) : text;
}

/** The start of a trusted workspace file (AGENTS.md), or that it is not trusted. */
export type TrustedHead =
  | { kind: "read"; bytes: Uint8Array; label: Label }
  | { kind: "untrusted" }
  | { kind: "error"; error: string };

/**
 * At most `length` bytes of a resolved workspace file, read only when the file is trusted, and
 * only from the file resolved (its label, hash included, is of that file).
 */
export async function readTrustedHead(
  policy: FileLabels & WorkspaceFiles,
  file: ResolvedPath,
  length: number,
): Promise<TrustedHead> {
  const fileLabel = await policy.fileLabel(file.rel, file);
  if (fileLabel.integrity !== "T") return { kind: "untrusted" };
  const read = await policy.worker.call({ op: "read", path: file.abs, length });
  if (!read.ok) return { kind: "error", error: read.error.message };
  if (!openedAsChecked(file, read.value.opened)) {
    return { kind: "error", error: "it changed while it was being read; it was not used" };
  }
  return { kind: "read", bytes: read.value.bytes, label: fileLabel };
}

/**
 * A user skill is the person's own file, in their config folder beside the config they wrote:
 * trusted, and public like the config itself (docs/contract.md §11).
 */
export function userSkillLabel(): Label {
  return TRUSTED_PUBLIC;
}

/**
 * The body of a listed skill. A user skill is the person's own file; a workspace skill is read
 * again through the effect worker and must still be trusted.
 */
export async function readSkill(
  policy: FileLabels & WorkspaceFiles,
  entry: SkillEntry,
): Promise<Result<{ body: string; label: Label }>> {
  let loaded: Result<{ text: string; label: Label }>;
  if (entry.source === "user") {
    try {
      loaded = ok({ text: await Deno.readTextFile(entry.file), label: userSkillLabel() });
    } catch (e) {
      // The error's name only: Deno's message names the file's real path.
      loaded = err(`cannot be read (${(e as Error).name ?? "error"})`);
    }
  } else {
    // Resolved again: the file read and labelled is the listed file at its real place.
    const rel = relative(policy.workspace.root, entry.file).split("\\").join("/");
    const file = await resolvePath(policy.workspace, rel);
    loaded = !file.ok || file.value.kind !== "file" || file.value.rel !== rel
      ? err("it is no longer a file at its place")
      : await readWorkspaceSkill(policy, file.value);
  }
  if (!loaded.ok) return loaded;
  const folder = entry.file.split(/[\\/]/).at(-2) ?? "";
  const parsed = await parseSkillFile(loaded.value.text, folder);
  if (!parsed.ok) return err(`it changed since it was listed: ${parsed.error}`);
  return ok({ body: parsed.value.body, label: loaded.value.label });
}

/** The listed skill a name selected, or why it selected none (worded with the list). */
export type SkillChoice = { entry: SkillEntry } | { refusal: string };

/**
 * The listed skill of exactly that name, or why there is none (with the list): a name that could
 * be a path matches nothing, and a near miss is named as close but never taken for the skill.
 */
export function selectSkill(
  skills: readonly SkillEntry[],
  name: string,
): SkillChoice {
  const list = skills.length === 0
    ? "no skills were listed this turn"
    : `the listed skills are: ${skills.map((s) => s.name).join(", ")}`;
  const shownName = JSON.stringify(name.slice(0, 80));
  if (/[\\/]|\.\./.test(name) || name.includes("\0")) {
    return {
      refusal: `${shownName} is not a skill name: a name never becomes a path and matches ` +
        `nothing; ${list}`,
    };
  }
  const entry = skills.find((s) => s.name === name);
  if (entry) return { entry };
  const near = skills.filter((s) =>
    s.name.toLowerCase() === name.trim().toLowerCase() ||
    editDistance(s.name, name.trim().toLowerCase()) <= 2
  );
  if (near.length > 0) {
    return {
      refusal: `no skill is named ${shownName}; names are matched exactly and never guessed ` +
        `(close: ${near.map((s) => s.name).join(", ")}); ${list}`,
    };
  }
  return { refusal: `no skill is named ${shownName}; ${list}` };
}

/** What load_skill is given to render: the refusal, why the skill cannot be read, or its body. */
export type SkillLoad =
  | { kind: "not_listed"; refusal: string }
  | { kind: "unreadable"; error: string }
  | { kind: "loaded"; body: string; label: Label };

/** load_skill's terms: an allow grants the loaded skill, a refusal is what is rendered instead. */
interface SkillTerms {
  grants: Extract<SkillLoad, { kind: "loaded" }>;
  refusal: Exclude<SkillLoad, { kind: "loaded" }>;
  question: never;
  answer: never;
  keep: never;
}

/**
 * What load_skill's `name` comes to, given the listed skill it `chosen` ({@link selectSkill})
 * and, when it chose one, what reading it again gave ({@link readSkill}): refused when it chose
 * none or cannot be read, loaded otherwise, each with its audit line. Pure: a table tests it.
 */
export function skillLoadVerdict(
  name: string,
  chosen: SkillChoice,
  read: Result<{ body: string; label: Label }> | null,
): Settled<SkillTerms> {
  if ("refusal" in chosen) {
    return {
      kind: "refuse",
      refusal: { kind: "not_listed", refusal: chosen.refusal },
      audit: {
        tool: "load_skill",
        routing: { name: name.slice(0, 80) },
        decision: "refused",
        by: "rule",
        reason: "not a listed name",
      },
    };
  }
  const routing = { name, source: chosen.entry.source };
  if (read === null || !read.ok) {
    const error = read === null ? "it was not read" : read.error;
    return {
      kind: "refuse",
      refusal: { kind: "unreadable", error },
      audit: { tool: "load_skill", routing, decision: "refused", by: "rule", reason: error },
    };
  }
  const { body, label } = read.value;
  return {
    kind: "allow",
    grants: { kind: "loaded", body, label },
    audit: { tool: "load_skill", routing, decision: "loaded", by: "rule", gave: { output: label } },
  };
}

/**
 * load_skill's decision: the name selects from the skills `listed` at the start of the turn
 * ({@link selectSkill}); a listed one is read again ({@link readSkill}); what that comes to
 * ({@link skillLoadVerdict}) is recorded.
 */
export async function loadSkill(
  policy: FileLabels & Recording & WorkspaceFiles,
  name: string,
  listed: readonly SkillEntry[],
): Promise<SkillLoad> {
  const chosen = selectSkill(listed, name);
  const read = "entry" in chosen ? await readSkill(policy, chosen.entry) : null;
  const settled = await recordDecision(policy, skillLoadVerdict(name, chosen, read));
  return settled.kind === "allow" ? settled.grants : settled.refusal;
}
