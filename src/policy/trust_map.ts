/**
 * The trust map (docs/contract.md §5): which parts of the workspace a person vouched for.
 *
 * Rules are directory prefixes; the longest matching prefix wins; a path no rule covers is
 * untrusted. A rule written `**\/name` stands for a directory called `name` at any depth (the
 * foreign trees of the first-use choice), and counts as long as the prefix it matched. Per-file
 * entries, written after writes and file vouches, override the rules for that one file; a
 * trusting entry is bound to the file's content hash, so a later change falls back to the rules.
 *
 * Prefix entries are a run's mark on a folder its snapshot could not see beneath
 * (docs/contract.md §13.5: no blind spot): everything beneath it takes that run's label, over any
 * rule — a `U` mark makes the content untrusted, and every name beneath any mark is an untrusted
 * name. Only a per-file entry whose hash still matches the bytes (or an untrusting one) wins over a
 * mark: those bytes are the ones the person approved or vouched for. Later runs only add marks; the
 * person clears one with `trust remove` of that folder.
 */
import { join, relative } from "node:path";
import { z } from "zod";
import type { Integrity } from "../util/label.ts";
import {
  type Loaded,
  loadJsonFileStamped,
  type LockWait,
  setAside,
  type Stamp,
  updateJsonFile,
} from "../state/jsonfile.ts";
import { checkPathSyntax } from "./paths.ts";
import { isGitPath } from "./git_dir.ts";
import { err, ok, type Result } from "../util/result.ts";

export interface TrustRule {
  /** Workspace-relative directory, `/`-separated, no trailing slash; `.` is the root. */
  readonly dir: string;
  readonly trusted: boolean;
}

export interface FileEntry {
  readonly integrity: Integrity;
  /** For a trusting entry: the SHA-256 the trust is bound to. */
  readonly sha256?: string;
  /** What set it: an approved write, a file vouch, or a run that created or changed the file. */
  readonly why: "write" | "vouch" | "run";
  /**
   * The name itself was chosen by a run (docs/contract.md §13.5: a created name is an untrusted
   * name): never shown as text, whatever the directory. It stays with the path once set.
   */
  readonly nameChosen?: true;
}

/**
 * A prefix entry: a folder beneath which a run's snapshot could not see (not listable, an entry
 * not `lstat`-able, or past the snapshot's bounds), so everything beneath it may be the run's.
 */
export interface PrefixEntry {
  /**
   * The run's label: `U` makes all content beneath untrusted; `T` (a vouched run in a trusted
   * context) leaves content to the rest of the map, except the paths no run makes trusted.
   */
  readonly integrity: Integrity;
  readonly why: "run";
}

/**
 * While an unconfined run may have left processes running that nothing ended (no writable
 * cgroup): files changed at or after `since` take its integrity, and names the snapshot after it
 * did not hold are untrusted names, until the next snapshot records what changed (decisions.md,
 * policy/leftovers.ts). Held in memory, never saved.
 */
export interface LeftoverWatch {
  readonly since: number;
  readonly integrity: Integrity;
  /** The paths the snapshot after the run held. */
  readonly known: { has(rel: string): boolean };
  /** Whether `rel` changed at or after `since`; true when that cannot be told. */
  readonly changedSince: (rel: string) => Promise<boolean>;
}

/**
 * Paths a run can never make trusted, whatever its label (docs/contract.md §13.5): git's own files
 * (they tell git what to run), Brave Bot's workspace folder (skills, config), the project memory.
 */
export function neverTrustedFromRun(rel: string): boolean {
  const first = rel.split("/")[0];
  return isGitPath(rel) || first === ".bravebot" || rel === "AGENTS.md";
}

/** Whether `rel` lies strictly beneath the folder `dir` (`.`: the workspace root). */
export function isBeneath(dir: string, rel: string): boolean {
  return dir === "." ? rel !== "." : rel.startsWith(dir + "/");
}

/** The trees the first-use "trust the workspace" answer leaves untrusted, at any depth. */
export const FOREIGN_TREES = [
  "node_modules",
  "vendor",
  "third_party",
  ".venv",
  "venv",
  ".git",
  "target",
  "dist",
  "build",
  ".cache",
] as const;

export type FirstUseChoice = "workspace" | "nothing" | "custom";

const fileSchema = z.object({
  version: z.literal(1),
  /** Counts the changes written; kept second, within the bytes a stamp reads (jsonfile.ts). */
  generation: z.number().int().min(0).optional(),
  workspace: z.string(),
  firstUse: z.enum(["workspace", "nothing", "custom"]).nullable(),
  rules: z.array(z.object({ dir: z.string(), trusted: z.boolean() })),
  files: z.record(
    z.string(),
    z.object({
      integrity: z.enum(["T", "U"]),
      sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
      why: z.enum(["write", "vouch", "run"]),
      nameChosen: z.literal(true).optional(),
    }),
  ),
  prefixes: z.record(
    z.string(),
    z.object({ integrity: z.enum(["T", "U"]), why: z.literal("run") }),
  ).optional(),
});

/** Normalises a rule's directory as a person would type it: `src/`, `./src`, `.`, `**\/vendor`. */
export function normaliseRuleDir(input: string): Result<string> {
  const trimmed = input.trim();
  if (trimmed === "." || trimmed === "./" || trimmed === "") return ok(".");
  if (trimmed.startsWith("**/")) {
    const name = trimmed.slice(3).replace(/\/+$/, "");
    if (!name || name.includes("/") || name.includes("*")) {
      return err(`'${input}': a **/ rule names one directory, e.g. **/node_modules`);
    }
    return ok(`**/${name}`);
  }
  const syntax = checkPathSyntax(trimmed.replace(/^\.\//, ""));
  if (!syntax.ok) return err(`'${input}': ${syntax.error}`);
  return ok(syntax.value.length === 0 ? "." : syntax.value.join("/"));
}

/**
 * Whether the person may trust `dir` (normalised by {@link normaliseRuleDir}): only a directory
 * that exists in the workspace now, reached without leaving it. A rule for a name that does not
 * exist yet would trust whatever later appears there — a clone, a download, a planner's write —
 * unseen. A `**\/` rule names no one place and passes; untrusting or removing needs no check.
 */
export async function checkTrustableDir(workspace: string, dir: string): Promise<Result<void>> {
  if (dir === "." || dir.startsWith("**/")) return ok(undefined);
  const missing = err(`there is no directory ${dir}/ in the workspace; trust one that exists`);
  try {
    const real = await Deno.realPath(join(workspace, dir));
    const rel = relative(workspace, real);
    if (rel === "" || rel === ".." || rel.startsWith("../") || rel.startsWith("/")) return missing;
    return (await Deno.stat(real)).isDirectory ? ok(undefined) : missing;
  } catch {
    return missing;
  }
}

/** How long a prefix of `rel` the rule covers, or -1 if it does not cover `rel`. */
function coverage(rule: TrustRule, rel: string): number {
  if (rule.dir === ".") return 0;
  if (rule.dir.startsWith("**/")) {
    const name = rule.dir.slice(3);
    const segments = rel === "." ? [] : rel.split("/");
    let length = 0;
    let best = -1;
    for (let i = 0; i < segments.length; i++) {
      length += (i > 0 ? 1 : 0) + segments[i].length;
      // Deepest occurrence, so that a/node_modules/b/node_modules/c counts the longer prefix.
      if (segments[i] === name) best = length;
    }
    return best;
  }
  if (rel === rule.dir || rel.startsWith(rule.dir + "/")) return rule.dir.length;
  return -1;
}

type TrustFile = z.infer<typeof fileSchema>;

export class TrustMap {
  firstUse: FirstUseChoice | null = null;
  /** How many changes the stored file had when this map was read from it. */
  generation = 0;
  #rules: TrustRule[] = [];
  #files = new Map<string, FileEntry>();
  #prefixes = new Map<string, PrefixEntry>();
  /** The open watch on an unconfined run's leftovers, if any (the policy layer sets it). */
  leftovers: LeftoverWatch | null = null;

  constructor(readonly workspace: string) {}

  get rules(): readonly TrustRule[] {
    return this.#rules;
  }

  get files(): ReadonlyMap<string, FileEntry> {
    return this.#files;
  }

  get prefixes(): ReadonlyMap<string, PrefixEntry> {
    return this.#prefixes;
  }

  /**
   * Marks the folder `dir` (`.`: the root) with a run's label. Labels only move towards `U`: a
   * mark that one above it already implies is not added, and one that implies those beneath it
   * replaces them.
   */
  setPrefix(dir: string, entry: PrefixEntry): void {
    for (const [at, mark] of this.#prefixes) {
      const above = at === dir || isBeneath(at, dir);
      if (above && (mark.integrity === "U" || entry.integrity === "T")) return;
    }
    for (const [at, mark] of [...this.#prefixes]) {
      if (isBeneath(dir, at) && (entry.integrity === "U" || mark.integrity === "T")) {
        this.#prefixes.delete(at);
      }
    }
    this.#prefixes.set(dir, entry);
  }

  /** The person clears a run's mark (`trust remove DIR`); false when there was none. */
  removePrefix(dir: string): boolean {
    return this.#prefixes.delete(dir);
  }

  /** The marks `rel` lies beneath: its folders' entries, one look-up per level. */
  #marksOver(rel: string): PrefixEntry[] {
    if (this.#prefixes.size === 0 || rel === ".") return [];
    const marks: PrefixEntry[] = [];
    for (let i = rel.lastIndexOf("/"); i > 0; i = rel.lastIndexOf("/", i - 1)) {
      const mark = this.#prefixes.get(rel.slice(0, i));
      if (mark) marks.push(mark);
    }
    const root = this.#prefixes.get(".");
    if (root) marks.push(root);
    return marks;
  }

  /** Adds or replaces the rule for `dir` (already normalised). */
  setRule(dir: string, trusted: boolean): void {
    this.#rules = this.#rules.filter((r) => r.dir !== dir);
    this.#rules.push({ dir, trusted });
  }

  removeRule(dir: string): boolean {
    const before = this.#rules.length;
    this.#rules = this.#rules.filter((r) => r.dir !== dir);
    return this.#rules.length !== before;
  }

  /** Sets a file's entry; a name a run chose stays marked as such whatever is written later. */
  setFile(rel: string, entry: FileEntry): void {
    const chosen = entry.nameChosen ?? this.#files.get(rel)?.nameChosen;
    this.#files.set(rel, chosen ? { ...entry, nameChosen: true } : entry);
  }

  /**
   * `/undo`: the file's entry goes back to what it was before the change taken back (null: none,
   * its rules decide), as it was, with its name's mark or without: the bytes are those it had.
   */
  restoreFile(rel: string, entry: FileEntry | null): void {
    if (entry === null) this.#files.delete(rel);
    else this.#files.set(rel, entry);
  }

  /**
   * Whether a run chose (or may have chosen) this name: it is content nobody vouched for
   * (docs/contract.md §13.5). So is every name beneath a prefix entry, and, while a watch on an
   * unconfined run's leftovers is open, every name the snapshot after that run did not hold.
   */
  nameChosenByRun(rel: string): boolean {
    if (rel === ".") return false;
    if (this.#files.get(rel)?.nameChosen === true) return true;
    if (this.#marksOver(rel).length > 0) return true;
    return this.leftovers !== null && !this.leftovers.known.has(rel);
  }

  /** Applies a first-use answer: the whole workspace minus foreign trees, or nothing. */
  applyFirstUse(choice: FirstUseChoice): void {
    this.firstUse = choice;
    if (choice === "workspace") {
      this.setRule(".", true);
      for (const tree of FOREIGN_TREES) this.setRule(`**/${tree}`, false);
    }
  }

  /**
   * The integrity the directory rules give `rel` (a file or a directory), lowered by the prefix
   * entries above it: a `U` mark makes it `U`; a `T` one does for the paths no run makes trusted.
   */
  ruleIntegrity(rel: string): Integrity {
    const marks = this.#marksOver(rel);
    if (marks.some((m) => m.integrity === "U")) return "U";
    if (marks.length > 0 && neverTrustedFromRun(rel)) return "U";
    return this.#rulesOnly(rel);
  }

  #rulesOnly(rel: string): Integrity {
    let best = -1;
    let trusted = false;
    for (const rule of this.#rules) {
      // Longest prefix wins. At equal length a rule the person wrote out (`trust add
      // node_modules`) beats the `**/` rule it is more specific than; `* 2` makes room for that.
      const covered = coverage(rule, rel);
      const c = covered < 0 ? -1 : covered * 2 + (rule.dir.startsWith("**/") ? 0 : 1);
      if (c > best) {
        best = c;
        trusted = rule.trusted;
      }
    }
    return best >= 0 && trusted ? "T" : "U";
  }

  /**
   * The integrity of a file's content. `currentHash` is asked only when a hash-bound entry
   * exists, so the common case costs no read. An entry without a hash counts only when it
   * untrusts, or when no mark lies above the file; past the entry, the rules and the marks
   * decide, and an open leftover watch lowers a file changed since its run began.
   */
  async fileIntegrity(rel: string, currentHash: () => Promise<string | null>): Promise<Integrity> {
    const entry = this.#files.get(rel);
    if (entry) {
      if (entry.sha256 === undefined) {
        if (entry.integrity === "U" || this.#marksOver(rel).length === 0) return entry.integrity;
      } else if (await currentHash() === entry.sha256) return entry.integrity;
    }
    const integrity = this.ruleIntegrity(rel);
    const watch = this.leftovers;
    if (integrity === "T" && watch?.integrity === "U" && await watch.changedSince(rel)) return "U";
    return integrity;
  }

  /** A copy with extra rules on top, for one run's `--approvals` file; never saved. */
  withOverlay(rules: readonly TrustRule[]): TrustMap {
    const copy = new TrustMap(this.workspace);
    copy.firstUse = this.firstUse;
    copy.#rules = [...this.#rules];
    copy.#files = this.#files; // shared: writes during the run are real and must persist
    copy.#prefixes = this.#prefixes;
    copy.leftovers = this.leftovers;
    for (const rule of rules) copy.setRule(rule.dir, rule.trusted);
    return copy;
  }

  toJSON(): TrustFile {
    return {
      version: 1,
      generation: this.generation,
      workspace: this.workspace,
      firstUse: this.firstUse,
      rules: [...this.#rules],
      files: Object.fromEntries(this.#files),
      ...(this.#prefixes.size > 0 ? { prefixes: Object.fromEntries(this.#prefixes) } : {}),
    };
  }

  static fromJSON(data: TrustFile): TrustMap {
    const map = new TrustMap(data.workspace);
    map.firstUse = data.firstUse;
    map.generation = data.generation ?? 0;
    for (const rule of data.rules) map.setRule(rule.dir, rule.trusted);
    for (const [rel, entry] of Object.entries(data.files)) map.setFile(rel, entry);
    for (const [dir, entry] of Object.entries(data.prefixes ?? {})) map.setPrefix(dir, entry);
    return map;
  }
}

/** A map as read from its file, with the stamp of the version read (null: no file). */
export interface StoredTrust {
  map: TrustMap;
  problem?: string;
  stamp: Stamp | null;
}

/**
 * The map a loaded file gives `workspace`. Trust given to another folder is never borrowed, and
 * never silently overwritten: such a file is set aside (call this holding the file's lock).
 */
async function usableMap(
  loaded: Loaded<TrustFile>,
  path: string,
  workspace: string,
): Promise<{ map: TrustMap; problem?: string }> {
  if (loaded.status === "ok") {
    if (loaded.value.workspace === workspace) return { map: TrustMap.fromJSON(loaded.value) };
    const problem = await setAside(path, `belongs to ${loaded.value.workspace}, not ${workspace}`);
    return { map: new TrustMap(workspace), problem };
  }
  return {
    map: new TrustMap(workspace),
    problem: loaded.status === "corrupt" ? loaded.problem : undefined,
  };
}

/** Loads the map stored at `path` for `workspace`; a corrupt file is set aside and reported. */
export async function loadTrustMap(path: string, workspace: string): Promise<StoredTrust> {
  const { loaded, stamp } = await loadJsonFileStamped(path, fileSchema);
  if (loaded.status !== "ok" || loaded.value.workspace === workspace) {
    return { ...(await usableMap(loaded, path, workspace)), stamp };
  }
  // Another workspace's map: looked at again under the lock before it is set aside.
  let found: { map: TrustMap; problem?: string } = { map: new TrustMap(workspace) };
  const held = await updateJsonFile(path, fileSchema, async (current) => {
    found = await usableMap(current, path, workspace);
    return undefined;
  });
  return { ...found, stamp: held.stamp };
}

/**
 * How a trust change the person asked for waits for the lock (`bravebot trust`, first use,
 * `/trust`): it gives up at the bound with a message naming the holder's pid, which is safe since
 * nothing was done on its strength — the person is told, and asks again. Never for the record of
 * a write or of a run's changes, which must land (a file left without its entry is labelled by its
 * folder), and so keep waiting, saying so.
 */
export const PERSON_TRUST_WAIT: LockWait = { fail: true };

/**
 * Applies one change to the stored map, as the file holds it now, under its lock; the change
 * is all that is written, so another session's entries and removals are kept. Returns the map
 * as written, with its stamp, and what `change` returned. `wait`: how the lock is waited for
 * ({@link PERSON_TRUST_WAIT} for the person's own changes; by default it never gives up).
 */
export async function updateTrustMap<R>(
  path: string,
  workspace: string,
  change: (map: TrustMap) => R,
  wait: LockWait = {},
): Promise<StoredTrust & { result: R }> {
  let map = new TrustMap(workspace);
  let problem: string | undefined;
  let result!: R;
  const { stamp } = await updateJsonFile(path, fileSchema, async (current) => {
    ({ map, problem } = await usableMap(current, path, workspace));
    result = change(map);
    map.generation++;
    return map.toJSON();
  }, wait);
  return { map, problem, stamp, result };
}
