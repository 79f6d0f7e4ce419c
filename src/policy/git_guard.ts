/**
 * Programs that obey the repository (docs/contract.md §13.6): git reads `.git/config`, and a
 * repository can make it run commands (`core.fsmonitor`, hooks, `diff.external`, filter drivers,
 * …). When a git directory a stage can reach is not trusted by the trust map (the default for
 * `.git/`), the stage runs with {@link GIT_OVERRIDES} inserted after the program, and is refused
 * before anything runs when a configuration it reads (with its includes) sets a key outside the
 * allow-list of git_config.ts, or its work tree lies outside the workspace.
 *
 * Everything is read as data through the effect worker, with the strict parser of
 * git_config.ts; a file that cannot be read with certainty refuses the stage (fail closed).
 * Every path git takes from its arguments or the repository is resolved as the kernel resolves
 * it ({@link land}). The planner's reasons name a key by Brave Bot's category
 * (`filter.<driver>.clean`) or not at all, never a value, a subsection or a path from the
 * repository: those are untrusted text, told to the person only.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Policy } from "./core.ts";
import { type ResolvedPath, resolvePath } from "./paths.ts";
import { readAtMost } from "./reads.ts";
import { isWithin } from "./workspace.ts";
import {
  type ConfigEntry,
  definedRemotes,
  entryName,
  parseGitConfig,
  untrustedKeyRefusal,
} from "./git_config.ts";
import { err, ok, type Result } from "../util/result.ts";

/**
 * The fixed overrides (docs/decisions.md, "Git overrides"), each checked against git: the value
 * given disables the command the key would run, and `-c` reaches git's child git processes
 * (submodules) through GIT_CONFIG_PARAMETERS.
 */
export const GIT_OVERRIDES: readonly (readonly [string, string])[] = [
  ["core.fsmonitor", "false"],
  // A path no file can ever be created under: no hook is found, and nothing is written there.
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
  ["core.sshCommand", "ssh"],
  // Empty: no askpass program (git treats an empty one as none).
  ["core.askPass", ""],
  // Empty: resets the list of helpers, the URL-specific ones too.
  ["credential.helper", ""],
  ["core.editor", "false"],
  ["sequence.editor", "false"],
  ["gpg.program", "gpg"],
  ["gpg.openpgp.program", "gpg"],
  ["gpg.ssh.program", "ssh-keygen"],
  ["gpg.x509.program", "gpgsm"],
  // `ext::` URLs run a command; a repository's `protocol.allow=always` would allow them.
  ["protocol.ext.allow", "never"],
];

/** The overrides as arguments, inserted right after the program. */
export function gitOverrideArgs(): string[] {
  return GIT_OVERRIDES.flatMap(([k, v]) => ["-c", `${k}=${v}`]);
}

/** Whether a resolved program is git (its file name). */
export function isGit(resolved: string): boolean {
  return /^git(\.exe)?$/i.test(basename(resolved));
}

const MAX_CONFIG_BYTES = 1024 * 1024;
const MAX_SMALL_BYTES = 64 * 1024;
/** As git's own limit on nested includes. */
const MAX_INCLUDE_DEPTH = 10;
const MAX_GIT_DIRS = 256;
const MAX_MODULE_DEPTH = 8;
/** How many refused keys the person is told by name. */
const MAX_KEYS_TOLD = 10;

const NOTHING_RAN = "; nothing was run";

interface Reader {
  policy: Policy;
  root: string;
}

type Found =
  | { kind: "missing" }
  | { kind: "file"; abs: string; rel: string; id: ResolvedPath["id"] }
  | { kind: "directory"; abs: string; rel: string };

/** The real place of an absolute path inside the workspace; null when it lies outside. */
async function locate(r: Reader, abs: string): Promise<Result<Found> | null> {
  if (!isWithin(r.root, abs)) return null;
  const rel = relative(r.root, abs).split(sep).join("/") || ".";
  const where = await resolvePath(r.policy.workspace, rel);
  if (!where.ok) return err("a path it names cannot be resolved inside the workspace");
  const w = where.value;
  if (w.kind === "missing") return ok({ kind: "missing" });
  if (w.kind === "file") return ok({ kind: "file", abs: w.abs, rel: w.rel, id: w.id });
  if (w.kind === "directory") return ok({ kind: "directory", abs: w.abs, rel: w.rel });
  return err("a path it names is neither a file nor a folder");
}

/** Where a path git takes leads: what is there, and the real folder its last name sits in. */
interface Landing {
  found: Found;
  /** Real; git resolves a relative path the file names (a gitfile, an include) from here. */
  parent: string;
}

/**
 * Where git lands for the path `p` taken from the real folder `base` — the one rule for every
 * path git is given (`-C`, `--git-dir`, `--work-tree`, a gitfile, `commondir`, `core.worktree`,
 * an include, a submodule's path). It is resolved as the kernel resolves it, name by name: a
 * link is followed before a `..` after it (`lnk/..` is the parent of where `lnk` leads, not
 * `.`), so no lexical shortening can make an outside place look inside. An absolute path counts
 * only when spelled under the workspace root. Null when it lies outside, passes outside on the
 * way, or cannot be resolved inside.
 */
async function land(r: Reader, base: string, p: string): Promise<Landing | null> {
  let dir = base;
  let rest = p;
  if (isAbsolute(p)) {
    if (p !== r.root && !p.startsWith(r.root + sep)) return null;
    dir = r.root;
    rest = p.slice(r.root.length);
  }
  if (!isWithin(r.root, dir)) return null;
  const names = rest.split("/").filter((n) => n !== "" && n !== ".");
  let last: string | null = null;
  for (const [i, name] of names.entries()) {
    if (name === "..") {
      if (dir === r.root) return null;
      dir = dirname(dir);
      continue;
    }
    if (i === names.length - 1) {
      last = name;
      break;
    }
    const step = await locate(r, join(dir, name));
    if (step === null || !step.ok) return null;
    // Through a file or nothing, the kernel finds nothing.
    if (step.value.kind !== "directory") return { found: { kind: "missing" }, parent: dir };
    dir = step.value.abs;
  }
  const found = await locate(r, last === null ? dir : join(dir, last));
  if (found === null || !found.ok) return null;
  return { found: found.value, parent: last === null ? dirname(dir) : dir };
}

/** A found file's text through the effect worker (null: no such file). */
async function readFound(r: Reader, f: Found, max: number): Promise<Result<string | null>> {
  if (f.kind === "missing") return ok(null);
  if (f.kind !== "file") return err("a file it reads is not a regular file");
  const read = await readAtMost(r.policy, f, max);
  if (!read.ok) {
    return err(
      read.tooBig ? "a file it reads is too big to check" : "a file it reads cannot be read",
    );
  }
  return ok(new TextDecoder().decode(read.bytes));
}

/** A file's text through the effect worker (null: no such file). */
async function readText(r: Reader, abs: string, max: number): Promise<Result<string | null>> {
  const where = await locate(r, abs);
  if (where === null) return err("outside");
  if (!where.ok) return where;
  return readFound(r, where.value, max);
}

/** One git directory the stage can reach. */
interface GitDir {
  /** Absolute, real. */
  dir: string;
  /** Where config, hooks and modules live (`commondir` of a linked worktree). */
  common: string;
  /** The working tree whose `.gitmodules` git reads, when known and inside the workspace. */
  worktree: string | null;
  /** The `.git` file that named it, if any (its own label counts for trust). */
  via: string | null;
}

/** git's global options that say where it works, as given (resolved by {@link primaryGitDir}). */
export function gitPlaces(
  args: readonly string[],
): { chdirs: string[]; gitDir: string | null; workTree: string | null } {
  const chdirs: string[] = [];
  let gitDir: string | null = null;
  let workTree: string | null = null;
  const valued = (a: string, name: string, i: number): [string | null, number] => {
    if (a === name) return [args[i + 1] ?? null, i + 1];
    if (a.startsWith(name + "=")) return [a.slice(name.length + 1), i];
    return [null, -1];
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("-")) break; // the subcommand: global options end here
    if (a === "-C") {
      const to = args[++i];
      if (to !== undefined && to !== "") chdirs.push(to); // git ignores an empty -C
      continue;
    }
    if (a === "-c") {
      i++;
      continue;
    }
    let [v, next] = valued(a, "--git-dir", i);
    if (next >= 0) {
      gitDir = v;
      i = next;
      continue;
    }
    [v, next] = valued(a, "--work-tree", i);
    if (next >= 0) {
      workTree = v;
      i = next;
      continue;
    }
    if (a === "--namespace" || a === "--config-env") i++;
  }
  return { chdirs, gitDir, workTree };
}

class Refusal {
  constructor(readonly reason: string, readonly forPerson: string | null = null) {}
}

function refuse(reason: string, forPerson: string | null = null): never {
  throw new Refusal(reason + NOTHING_RAN, forPerson);
}

const OUTSIDE =
  "its git directory lies outside the workspace, where its configuration cannot be checked " +
  "(trust .git in the trust map if that repository is yours)";

/**
 * The one rule for a work tree, however git is told it (`--work-tree`, `core.worktree` in any
 * configuration it reads): it must land inside the workspace. Elsewhere, the names a vouched
 * `git status` prints would be another tree's, reaching the planner as the workspace's. Its real
 * path, or null when nothing is there (git then fails before it reads anything).
 */
async function workTreeAt(r: Reader, base: string, p: string, what: string) {
  const at = await land(r, base, p);
  if (at === null) {
    refuse(
      `its work tree (${what}) lies outside the workspace, and the names git would show from ` +
        "there are not the workspace's",
    );
  }
  return at.found.kind === "directory" ? at.found.abs : null;
}

/** Whether a folder is itself a git directory (a bare repository, or `--git-dir`'s target). */
async function looksLikeGitDir(r: Reader, abs: string): Promise<boolean> {
  const [head, objects, refs] = await Promise.all(
    ["HEAD", "objects", "refs"].map((n) => locate(r, join(abs, n))),
  );
  return head?.ok === true && head.value.kind === "file" && objects?.ok === true &&
    objects.value.kind === "directory" && refs?.ok === true && refs.value.kind === "directory";
}

/** The entry `name` in the real folder `dir`, as git meets it there. */
async function entryIn(r: Reader, dir: string, name: string): Promise<Landing> {
  const found = await locate(r, join(dir, name));
  if (found === null || !found.ok) refuse(OUTSIDE);
  return { found: found.value, parent: dir };
}

/**
 * The git directory a `.git` entry (or `--git-dir`'s target) names: the folder itself, or the
 * one its `gitdir:` line names, taken from the folder the entry sits in. Null when there is none.
 */
async function gitDirAt(
  r: Reader,
  entry: Landing,
  worktree: string | null,
): Promise<GitDir | null> {
  const f = entry.found;
  if (f.kind === "missing") return null;
  let dir: string;
  let via: string | null = null;
  if (f.kind === "file") {
    const text = await readFound(r, f, MAX_SMALL_BYTES);
    if (!text.ok || text.value === null) refuse("its .git file cannot be read");
    const m = /^gitdir: ?(.+?)\r?\n?$/.exec(text.value.split("\n")[0] + "\n");
    if (!m) refuse("its .git file is not of the form git reads (gitdir: …)");
    via = f.rel;
    const target = await land(r, entry.parent, m[1]);
    if (target === null) {
      // A .git file the person trusts may point where the person keeps the repository.
      const outside = resolve(entry.parent, m[1]);
      if (await trustedPlace(r, f.rel)) return { dir: outside, common: outside, worktree, via };
      refuse(OUTSIDE);
    }
    if (target.found.kind !== "directory") {
      refuse("its .git file names no git directory inside the workspace");
    }
    dir = target.found.abs;
  } else {
    dir = f.abs;
  }
  let common = dir;
  const commondir = await readText(r, join(dir, "commondir"), MAX_SMALL_BYTES);
  if (!commondir.ok) refuse(OUTSIDE);
  if (commondir.value !== null) {
    const t = await land(r, dir, commondir.value.trim());
    if (t === null) refuse(OUTSIDE);
    if (t.found.kind !== "directory") refuse("its git directory's commondir is unusable");
    common = t.found.abs;
  }
  return { dir, common, worktree, via };
}

/** Whether the trust map trusts this workspace path, as a folder and as a file's content. */
async function trustedPlace(r: Reader, rel: string): Promise<boolean> {
  if (r.policy.nameLabel(rel).integrity !== "T") return false;
  return (await r.policy.fileLabel(rel)).integrity === "T";
}

function relOf(r: Reader, abs: string): string | null {
  if (!isWithin(r.root, abs)) return null;
  return relative(r.root, abs).split(sep).join("/") || ".";
}

/** Whether every place a git directory is made of is trusted by the trust map. */
async function gitDirTrusted(r: Reader, g: GitDir): Promise<boolean> {
  for (const abs of new Set([g.dir, g.common])) {
    const rel = relOf(r, abs);
    if (rel === null) {
      if (g.via === null || !(await trustedPlace(r, g.via))) return false;
      continue;
    }
    if (r.policy.nameLabel(rel).integrity !== "T") return false;
    for (const file of ["config", "config.worktree"]) {
      if ((await r.policy.fileLabel(`${rel === "." ? "" : rel + "/"}${file}`)).integrity !== "T") {
        return false;
      }
    }
  }
  return g.via === null || await trustedPlace(r, g.via);
}

/** The repository of the stage's working directory, as git finds it (within the workspace). */
async function primaryGitDir(
  r: Reader,
  places: ReturnType<typeof gitPlaces>,
): Promise<GitDir | null> {
  // Each -C is taken from where the one before it led, as git's chdir does.
  let cwd = r.root;
  for (const to of places.chdirs) {
    const at = await land(r, cwd, to);
    if (at === null) {
      refuse(
        "it works in a folder outside the workspace (-C), whose git configuration cannot be " +
          "checked",
      );
    }
    if (at.found.kind !== "directory") refuse("its -C names no folder inside the workspace");
    cwd = at.found.abs;
  }
  // GIT_DIR and GIT_WORK_TREE are taken from where every -C has led.
  const worktree = places.workTree === null
    ? null
    : await workTreeAt(r, cwd, places.workTree, "--work-tree");
  if (places.gitDir !== null) {
    const at = await land(r, cwd, places.gitDir);
    if (at === null) refuse(OUTSIDE);
    const g = await gitDirAt(r, at, worktree);
    if (g === null) refuse("its --git-dir names nothing inside the workspace");
    return g;
  }
  for (let dir = cwd;; dir = dirname(dir)) {
    const g = await gitDirAt(r, await entryIn(r, dir, ".git"), worktree ?? dir);
    if (g !== null) return g;
    if (await looksLikeGitDir(r, dir)) return { dir, common: dir, worktree, via: null };
    if (dir === r.root || !isWithin(r.root, dirname(dir))) return null;
  }
}

/** Every git directory below `<common>/modules/` (submodules, and theirs), by listing. */
async function moduleGitDirs(r: Reader, common: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, level: number): Promise<void> => {
    if (level > MAX_MODULE_DEPTH) refuse("its submodules nest deeper than can be checked");
    const listed = await r.policy.worker.call({ op: "readDirs", paths: [dir] });
    if (!listed.ok) refuse("its submodules' git directories cannot be listed");
    const [entry] = listed.value;
    if ("error" in entry) return; // no modules folder
    for (const e of entry.entries) {
      if (e.kind !== "directory") continue;
      const sub = join(dir, e.name);
      if (await looksLikeGitDir(r, sub)) {
        // Its own modules/ is listed when it is checked in turn.
        found.push(sub);
        if (found.length > MAX_GIT_DIRS) refuse("it reaches more git directories than are checked");
      } else {
        // A submodule named `a/b` lives in modules/a/b.
        await walk(sub, level + 1);
      }
    }
  };
  await walk(join(common, "modules"), 0);
  return found;
}

/** An entry, with the workspace file that sets it (told to the person, never the planner). */
interface Sourced extends ConfigEntry {
  file: string;
}

/**
 * The entries of one configuration file with its includes, all inside the workspace. `file` is
 * where git finds it: its real folder (`parent`), from which its relative includes are taken.
 */
async function readConfig(r: Reader, file: Landing, depth = 0): Promise<Sourced[]> {
  if (depth > MAX_INCLUDE_DEPTH) refuse("its git configuration includes files nested too deeply");
  const text = await readFound(r, file.found, MAX_CONFIG_BYTES);
  if (!text.ok) refuse(`a git configuration file it reads cannot be checked (${text.error})`);
  if (text.value === null) return []; // git ignores a missing include
  const parsed = parseGitConfig(text.value);
  if (!parsed.ok) {
    refuse(
      `a git configuration file it reads cannot be parsed (${parsed.error}), so what git would ` +
        "run cannot be checked",
    );
  }
  const rel = file.found.kind === "file" ? file.found.rel : "";
  const entries: Sourced[] = [];
  const outside =
    "its configuration includes a file outside the workspace, which cannot be checked";
  for (const e of parsed.value) {
    entries.push({ ...e, file: rel });
    if (!isInclude(e) || e.value === null || e.value === "") continue;
    // git expands `~/`, `~user/` and `%(prefix)/` in an include's path: places outside.
    if (e.value.startsWith("~") || e.value.startsWith("%(prefix)/")) refuse(outside);
    const at = await land(r, file.parent, e.value);
    if (at === null) refuse(outside);
    entries.push(...await readConfig(r, at, depth + 1));
  }
  return entries;
}

/** Whether an entry names a file to include (`include.path`, `includeIf.<condition>.path`). */
function isInclude(e: ConfigEntry): boolean {
  return e.key === "path" &&
    ((e.section === "include" && e.subsection === null) ||
      (e.section === "includeif" && e.subsection !== null));
}

/** Every configuration git reads for one git directory, with its includes. */
async function gitDirConfig(r: Reader, g: GitDir): Promise<Sourced[]> {
  const files = [join(g.common, "config"), join(g.dir, "config.worktree")];
  if (g.common !== g.dir) files.push(join(g.common, "config.worktree"));
  const entries: Sourced[] = [];
  for (const abs of files) {
    const found = await locate(r, abs);
    if (found === null || !found.ok) refuse("a git configuration file it reads cannot be checked");
    entries.push(...await readConfig(r, { found: found.value, parent: dirname(abs) }));
  }
  return entries;
}

/** The real work trees its `core.worktree` settings name: each must lie inside the workspace. */
async function configuredWorkTrees(r: Reader, g: GitDir, entries: Sourced[]): Promise<string[]> {
  const trees: string[] = [];
  for (const e of entries) {
    if (e.section !== "core" || e.subsection !== null || e.key !== "worktree") continue;
    if (e.value === null) continue; // git refuses a worktree without a value
    // Relative to the git directory, as git takes it.
    const tree = await workTreeAt(r, g.dir, e.value, "core.worktree");
    if (tree !== null) trees.push(tree);
  }
  return trees;
}

/** The submodule worktrees `.gitmodules` names, as real folders inside the workspace. */
async function gitmodulesPaths(r: Reader, worktree: string): Promise<string[]> {
  const text = await readText(r, join(worktree, ".gitmodules"), MAX_CONFIG_BYTES);
  if (!text.ok) refuse(`its .gitmodules file cannot be checked (${text.error})`);
  if (text.value === null) return [];
  const parsed = parseGitConfig(text.value);
  if (!parsed.ok) refuse(`its .gitmodules file cannot be parsed (${parsed.error})`);
  const paths: string[] = [];
  for (const e of parsed.value) {
    if (e.section !== "submodule" || e.key !== "path" || !e.value) continue;
    // git refuses a submodule path outside its work tree; there is nothing of it to check.
    const at = await land(r, worktree, e.value);
    if (at?.found.kind === "directory") paths.push(at.found.abs);
  }
  return paths;
}

/**
 * What the stage must run with: the overrides to insert after the program (none for a program
 * other than git, or when every git directory it reaches is trusted), or why it is refused.
 * A refusal over a key the planner may not be told is told to the person, key and file.
 */
export async function guardGitStage(
  policy: Policy,
  stage: { resolved: string; args: readonly string[] },
): Promise<Result<string[]>> {
  if (!isGit(stage.resolved)) return ok([]);
  const r: Reader = { policy, root: policy.workspace.root };
  try {
    const primary = await primaryGitDir(r, gitPlaces(stage.args));
    const dirs: GitDir[] = primary ? [primary] : [];
    const seen = new Set<string>();
    const configs = new Map<string, Sourced[]>();
    const trusted = new Map<string, boolean>();
    // Nested repositories: submodules named by .gitmodules and those kept in .git/modules.
    for (let i = 0; i < dirs.length; i++) {
      const g = dirs[i];
      if (seen.has(g.dir)) continue;
      seen.add(g.dir);
      if (dirs.length > MAX_GIT_DIRS) refuse("it reaches more git directories than are checked");
      trusted.set(g.dir, await gitDirTrusted(r, g));
      if (!isWithin(r.root, g.common)) continue;
      for (const m of await moduleGitDirs(r, g.common)) {
        dirs.push({ dir: m, common: m, worktree: null, via: null });
      }
      const worktrees = g.worktree === null ? [] : [g.worktree];
      if (!trusted.get(g.dir)) {
        // An untrusted configuration may move the work tree: its submodules are found there.
        const entries = await gitDirConfig(r, g);
        configs.set(g.dir, entries);
        worktrees.push(...await configuredWorkTrees(r, g, entries));
      }
      for (const tree of new Set(worktrees)) {
        for (const sub of await gitmodulesPaths(r, tree)) {
          const nested = await gitDirAt(r, await entryIn(r, sub, ".git"), sub);
          if (nested) dirs.push(nested);
        }
      }
    }
    const unique = [...new Map(dirs.map((g) => [g.dir, g])).values()];
    // No repository inside the workspace: git may find one above it, which is the person's
    // and not the workspace's; the overrides still apply.
    if (unique.length > 0 && unique.every((g) => trusted.get(g.dir))) return ok([]);
    for (const g of unique) {
      if (!isWithin(r.root, g.common)) continue; // outside, behind a .git file the person trusts
      const entries = configs.get(g.dir) ?? await gitDirConfig(r, g);
      if (!configs.has(g.dir)) await configuredWorkTrees(r, g, entries);
      checkKeys(entries);
    }
    return ok(gitOverrideArgs());
  } catch (e) {
    if (e instanceof Refusal) {
      if (e.forPerson !== null) policy.person.notice(e.forPerson);
      return err(e.reason);
    }
    throw e;
  }
}

/**
 * Refuses when a configuration sets a key the allow-list does not let an untrusted one set
 * ({@link untrustedKeyRefusal}). The planner is told Brave Bot's name for the first such key,
 * or none when it has none; the person is told each key as written and the file that sets it.
 */
function checkKeys(entries: Sourced[]): void {
  const remotes = definedRemotes(entries);
  const refused = entries.flatMap((e) => {
    const why = untrustedKeyRefusal(e, remotes);
    return why ? [{ e, why }] : [];
  });
  if (refused.length === 0) return;
  const [{ why }] = refused;
  const others = refused.length > 1 ? `, and ${refused.length - 1} more refused keys` : "";
  const named = why.category === null ? why.what : `${why.what} (${why.category})`;
  const told = refused.slice(0, MAX_KEYS_TOLD).map(({ e }) =>
    `${entryName(e)} (${e.file}, line ${e.line})`
  );
  if (refused.length > MAX_KEYS_TOLD) told.push(`${refused.length - MAX_KEYS_TOLD} more`);
  refuse(
    `the repository's git configuration sets ${named}${others}; the person was told which, ` +
      "and where",
    `a git stage was not run: its repository's configuration sets ${told.join(", ")} — only ` +
      "keys known to run nothing are allowed while that .git folder is untrusted. If the " +
      "repository is yours, trust its .git folder in the trust map (bravebot trust add DIR).",
  );
}
