/**
 * Programs that obey the repository (docs/contract.md §13.6): git reads `.git/config`, and a
 * repository can make it run commands (`core.fsmonitor`, hooks, `diff.external`, filter drivers,
 * …). When a git directory a stage can reach is not trusted by the trust map (the default for
 * `.git/`) — or any file of its configuration, or a hook in it, each by its own label — the stage
 * runs with {@link GIT_OVERRIDES} inserted after the program, and is refused before anything runs
 * when an untrusted configuration it reads (with its includes) sets a key outside the allow-list of
 * git_config.ts, or its work tree or object store lies outside the workspace. A repository its
 * arguments name (`git push ./x.git`) runs git on its side with nothing of ours, so it must be
 * trusted too ({@link otherSides}). Which stages are git: git_programs.ts.
 *
 * Everything is read as data through the effect worker, with the strict parser of
 * git_config.ts; a file that cannot be read with certainty refuses the stage (fail closed).
 * Every path git takes from its arguments or the repository is resolved as the kernel resolves
 * it ({@link land}). The planner's reasons name a key by Brave Bot's category
 * (`filter.<driver>.clean`) or not at all, never a value, a subsection or a path from the
 * repository: those are untrusted text, told to the person only.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Asking, FileLabels, WorkspaceFiles } from "./capabilities.ts";
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
import { gitProgram, wrapperOfGit } from "./git_programs.ts";
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
  policy: FileLabels & WorkspaceFiles;
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
export function gitPlaces(args: readonly string[]): GitPlaces {
  const chdirs: string[] = [];
  const configs: string[] = [];
  let gitDir: string | null = null;
  let workTree: string | null = null;
  const valued = (a: string, name: string, i: number): [string | null, number] => {
    if (a === name) return [args[i + 1] ?? null, i + 1];
    if (a.startsWith(name + "=")) return [a.slice(name.length + 1), i];
    return [null, -1];
  };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("-")) break; // the subcommand: global options end here
    if (a === "-C") {
      const to = args[++i];
      if (to !== undefined && to !== "") chdirs.push(to); // git ignores an empty -C
      continue;
    }
    if (a === "-c") {
      const setting = args[++i];
      if (setting !== undefined) configs.push(setting);
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
  return { chdirs, gitDir, workTree, configs, sub: Math.min(i, args.length) };
}

/** Where a git command line says git works, and where its subcommand starts. */
export interface GitPlaces {
  chdirs: string[];
  gitDir: string | null;
  workTree: string | null;
  /** The planner's own `-c key=value` settings, as given. */
  configs: string[];
  /** The index of the subcommand in the arguments (their length when there is none). */
  sub: number;
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

/**
 * Whether the folders a git directory is made of, and the `.git` file that named it, are trusted
 * by the trust map. Each file of its configuration that exists is judged by its own label as it is
 * read ({@link readConfig}); one that does not exist is nothing git reads (its name may be an
 * untrusted one, as after an unconfined run, which does not matter).
 */
async function gitDirTrusted(r: Reader, g: GitDir): Promise<boolean> {
  for (const abs of new Set([g.dir, g.common])) {
    const rel = relOf(r, abs);
    if (rel === null) {
      if (g.via === null || !(await trustedPlace(r, g.via))) return false;
      continue;
    }
    if (r.policy.nameLabel(rel).integrity !== "T") return false;
  }
  return g.via === null || await trustedPlace(r, g.via);
}

/** The folder a stage's git works in: each -C from where the one before it led, as git's chdir does. */
async function stageFolder(r: Reader, places: GitPlaces): Promise<string> {
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
  return cwd;
}

/** The repository of the stage's working folder `cwd`, as git finds it (within the workspace). */
async function primaryGitDir(r: Reader, places: GitPlaces, cwd: string): Promise<GitDir | null> {
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
  /**
   * Whether the person trusts it: the file that sets it is trusted, and so is every file that
   * included that one, up to a git directory the person trusts. A trusted file a stranger's
   * file includes is not the person's choice there: labels only move towards `U`.
   */
  trusted: boolean;
}

/** Whether the trust map trusts a file git reads as it was found (a hash-bound entry: those bytes). */
async function fileTrusted(r: Reader, f: Found): Promise<boolean> {
  if (f.kind !== "file") return false;
  return (await r.policy.fileLabel(f.rel, { abs: f.abs, id: f.id })).integrity === "T";
}

/**
 * The entries of one configuration file with its includes. `file` is where git finds it: its
 * real folder (`parent`), from which its relative includes are taken. `trusted`: whether what
 * included it (or the git directory it belongs to) is trusted; its own label decides the rest
 * ({@link Sourced.trusted}). An untrusted file's includes must lie inside the workspace, where
 * they can be read; a trusted file's include elsewhere is the person's, and is not read.
 */
async function readConfig(
  r: Reader,
  file: Landing,
  trusted: boolean,
  depth = 0,
): Promise<Sourced[]> {
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
  const own = trusted && await fileTrusted(r, file.found);
  const entries: Sourced[] = [];
  const outside =
    "its configuration includes a file outside the workspace, which cannot be checked";
  for (const e of parsed.value) {
    entries.push({ ...e, file: rel, trusted: own });
    if (!isInclude(e) || e.value === null || e.value === "") continue;
    // git expands `~/`, `~user/` and `%(prefix)/` in an include's path: places outside.
    const expanded = e.value.startsWith("~") || e.value.startsWith("%(prefix)/");
    const at = expanded ? null : await land(r, file.parent, e.value);
    if (at === null) {
      if (own) continue;
      refuse(outside);
    }
    entries.push(...await readConfig(r, at, own, depth + 1));
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
async function gitDirConfig(r: Reader, g: GitDir, trusted: boolean): Promise<Sourced[]> {
  const files = [join(g.common, "config"), join(g.dir, "config.worktree")];
  if (g.common !== g.dir) files.push(join(g.common, "config.worktree"));
  const entries: Sourced[] = [];
  for (const abs of files) {
    const found = await locate(r, abs);
    if (found === null || !found.ok) refuse("a git configuration file it reads cannot be checked");
    entries.push(...await readConfig(r, { found: found.value, parent: dirname(abs) }, trusted));
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

/**
 * Whether the hooks a trusted git directory would run are trusted too, each by its own label: a
 * run never makes a file in `.git/` trusted, so a hook a run wrote into a `.git/` the person
 * trusts is untrusted, and the overrides (`core.hooksPath=/dev/null`) then apply. The folder is
 * `<common>/hooks`, or the trusted `core.hooksPath` (from the work tree, else the git directory);
 * one outside the workspace is the person's and is not listed.
 */
async function hooksTrusted(r: Reader, g: GitDir, entries: Sourced[]): Promise<boolean> {
  const set = entries.filter((e) =>
    e.section === "core" && e.subsection === null && e.key === "hookspath" && e.value
  ).at(-1)?.value;
  const at = set ? await land(r, g.worktree ?? g.dir, set) : await land(r, g.common, "hooks");
  if (at === null || at.found.kind !== "directory") return true;
  const listed = await r.policy.worker.call({ op: "readDirs", paths: [at.found.abs] });
  if (!listed.ok) return false;
  const [entry] = listed.value;
  if ("error" in entry) return false;
  const folder = relOf(r, at.found.abs)!;
  for (const e of entry.entries) {
    if (e.kind === "directory") continue;
    const rel = folder === "." ? e.name : `${folder}/${e.name}`;
    if (e.kind === "file") {
      // Listed, through no link: labelled by its path.
      if ((await r.policy.fileLabel(rel)).integrity !== "T") return false;
      continue;
    }
    // A link: labelled where it leads.
    const hook = await locate(r, join(at.found.abs, e.name));
    if (hook === null || !hook.ok || !(await fileTrusted(r, hook.value))) return false;
  }
  return true;
}

/** git's own limit on alternates of alternates. */
const MAX_ALTERNATE_DEPTH = 5;

const OBJECTS_OUTSIDE =
  "its object store (objects/, or an alternate objects/info/alternates names) lies outside the " +
  "workspace, and what git would show from there is not the workspace's";

/**
 * The one rule for where git reads objects (docs/contract.md §13.6, as for the work tree): an
 * untrusted git directory's `objects/` and every store an untrusted `objects/info/alternates` names
 * must land inside the workspace; otherwise a vouched `git log` or `git show` would print another
 * repository's history as the workspace's. Each alternates file's own label decides (joined with
 * the file that led to it); alternates of alternates are followed as git follows them.
 */
async function checkObjectStores(r: Reader, g: GitDir, trusted: boolean): Promise<void> {
  const store = await land(r, g.common, "objects");
  if (store === null) {
    if (!trusted) refuse(OBJECTS_OUTSIDE);
    return;
  }
  if (store.found.kind === "directory") await checkAlternates(r, store.found.abs, true, 0);
}

async function checkAlternates(
  r: Reader,
  objects: string,
  trusted: boolean,
  depth: number,
): Promise<void> {
  const file = await land(r, objects, "info/alternates");
  if (file === null) {
    if (!trusted) refuse(OBJECTS_OUTSIDE);
    return;
  }
  if (file.found.kind === "missing") return;
  const own = trusted && await fileTrusted(r, file.found);
  const text = await readFound(r, file.found, MAX_CONFIG_BYTES);
  if (!text.ok) refuse(`its object store's alternates cannot be checked (${text.error})`);
  for (const line of (text.value ?? "").split("\n")) {
    if (line === "" || line.startsWith("#")) continue; // as git skips them
    const path = line.startsWith('"') ? unquoteC(line) : line;
    if (path === null) refuse("its object store's alternates cannot be parsed");
    // Relative to the object store's real folder, as git takes it.
    const at = await land(r, objects, path);
    if (at === null) {
      if (own) continue;
      refuse(OBJECTS_OUTSIDE);
    }
    if (at.found.kind !== "directory") continue; // git skips a store that is not there
    if (depth >= MAX_ALTERNATE_DEPTH) {
      if (own) continue;
      refuse("its object stores' alternates nest deeper than can be checked");
    }
    await checkAlternates(r, at.found.abs, own, depth + 1);
  }
}

const C_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  '"': '"',
  "\\": "\\",
};

/** A C-quoted line as git unquotes it (`"a\\tb\\101"`), or null when it is not one whole. */
function unquoteC(line: string): string | null {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 1; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      return i === line.length - 1 ? new TextDecoder().decode(new Uint8Array(bytes)) : null;
    }
    if (c !== "\\") {
      bytes.push(...encoder.encode(c));
      continue;
    }
    const next = line[++i];
    if (next === undefined) return null;
    if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next].charCodeAt(0));
      continue;
    }
    const octal = /^[0-3][0-7]{2}/.exec(line.slice(i, i + 3));
    if (!octal) return null;
    bytes.push(parseInt(octal[0], 8));
    i += 2;
  }
  return null;
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

/** One git directory the stage reaches, and what the person trusts of it. */
interface Checked {
  g: GitDir;
  /** Every entry of its configuration, each with its own label. */
  entries: Sourced[];
  /** The directory, every file of its configuration, and its hooks are trusted. */
  trusted: boolean;
}

/** Reads one git directory the way the stage's git would meet it (nothing outside is read). */
async function checkGitDir(r: Reader, g: GitDir): Promise<Checked> {
  const dirTrusted = await gitDirTrusted(r, g);
  // Outside, behind a .git file the person trusts: theirs, and out of reach.
  if (!isWithin(r.root, g.common)) return { g, entries: [], trusted: dirTrusted };
  const entries = await gitDirConfig(r, g, dirTrusted);
  await checkObjectStores(r, g, dirTrusted);
  const trusted = dirTrusted && entries.every((e) => e.trusted) &&
    await hooksTrusted(r, g, entries);
  return { g, entries, trusted };
}

/** Every git directory the stage reaches from `primary`: submodules, and theirs. */
async function reachedGitDirs(r: Reader, primary: GitDir | null): Promise<Checked[]> {
  const dirs: GitDir[] = primary ? [primary] : [];
  const seen = new Set<string>();
  const checked: Checked[] = [];
  for (let i = 0; i < dirs.length; i++) {
    const g = dirs[i];
    if (seen.has(g.dir)) continue;
    seen.add(g.dir);
    if (dirs.length > MAX_GIT_DIRS) refuse("it reaches more git directories than are checked");
    const c = await checkGitDir(r, g);
    checked.push(c);
    if (!isWithin(r.root, g.common)) continue;
    for (const m of await moduleGitDirs(r, g.common)) {
      dirs.push({ dir: m, common: m, worktree: null, via: null });
    }
    // An untrusted configuration may move the work tree: its submodules are found there.
    const worktrees = g.worktree === null ? [] : [g.worktree];
    worktrees.push(...await configuredWorkTrees(r, g, c.entries.filter((e) => !e.trusted)));
    for (const tree of new Set(worktrees)) {
      for (const sub of await gitmodulesPaths(r, tree)) {
        const nested = await gitDirAt(r, await entryIn(r, sub, ".git"), sub);
        if (nested) dirs.push(nested);
      }
    }
  }
  return checked;
}

// ---- the other side: a repository the arguments name (docs/contract.md §13.6) ----

/**
 * Subcommands that reach a repository an argument names and have git run in it — `upload-pack`
 * or `receive-pack` on the other side of a local transport, which git starts with the `-c`
 * overrides cleared (its hooks and configuration are that repository's), or the command itself
 * entering it (`upload-pack DIR`).
 */
const REACHES_REPOSITORY = new Set([
  "push",
  "fetch",
  "pull",
  "clone",
  "ls-remote",
  "remote",
  "submodule",
  "subtree",
  "archive",
  "request-pull",
  "fetch-pack",
  "send-pack",
  "upload-pack",
  "receive-pack",
  "upload-archive",
]);

/** The override that stops git reaching any repository through a path or `file://` URL. */
const NO_FILE_TRANSPORT = ["-c", "protocol.file.allow=never"] as const;

const OTHER_SIDE =
  "it names a repository in the workspace that is not trusted: git would run that " +
  "repository's hooks and configuration on the other side, where no override reaches (trust " +
  "its git folder in the trust map if that repository is yours)";

/** The places a stage's arguments may name as a repository: each argument, option value and `-c` URL. */
function namedPlaces(argv: readonly string[], places: GitPlaces): string[] {
  const named: string[] = [];
  for (const a of argv.slice(places.sub + 1)) {
    if (!a.startsWith("-")) named.push(a);
    else if (a.includes("=")) named.push(a.slice(a.indexOf("=") + 1));
  }
  for (const setting of places.configs) {
    const eq = setting.indexOf("=");
    if (eq < 0) continue;
    named.push(setting.slice(eq + 1));
    // `url.<base>.insteadOf=<prefix>`: the base is where git goes.
    const base = /^url\.(.+)\.(?:push)?insteadof$/i.exec(setting.slice(0, eq));
    if (base) named.push(base[1]);
  }
  return named.filter((p) => p !== "");
}

/** git reads no gitfile larger than this (`read_gitfile`: four times PATH_MAX). */
const MAX_GITFILE_BYTES = 16 * 1024;

/**
 * The repository a local transport (or `upload-pack DIR`) would enter at a found place, if any:
 * a folder holding `.git`, a git directory, or (where `files`) a gitfile of any name, as git's
 * `enter_repo` takes them.
 */
async function repositoryAt(r: Reader, at: Landing, files: boolean): Promise<GitDir | null> {
  if (at.found.kind === "directory") {
    const dir = at.found.abs;
    const inner = await gitDirAt(r, await entryIn(r, dir, ".git"), dir);
    if (inner) return inner;
    return await looksLikeGitDir(r, dir) ? { dir, common: dir, worktree: null, via: null } : null;
  }
  if (at.found.kind === "file" && (files || basename(at.found.abs) === ".git")) {
    // Any other file (a bundle) has no side where git runs.
    const head = await readFound(r, at.found, MAX_GITFILE_BYTES);
    return head.ok && head.value?.startsWith("gitdir:") ? await gitDirAt(r, at, null) : null;
  }
  return null;
}

/** Whether a named place is spelt as a path (so git would take it as one, not a name). */
function pathLike(p: string): boolean {
  return p.startsWith("/") || p.startsWith(".") || p.startsWith("~") || p.includes("/");
}

/**
 * The one rule for a repository the planner names as a stage's argument (`git push ./x.git`,
 * `git fetch ../y`, `file://…`, `-c remote.o.url=…`): git runs on its side with nothing of ours
 * (`upload-pack`, `receive-pack`: the overrides are cleared), so it must be trusted. A subcommand
 * that reaches a repository is refused when it names one in the workspace that is not trusted;
 * anything else naming one, or naming a path outside the workspace that the guard cannot read,
 * gets `protocol.file.allow=never`, which stops git reaching any repository through a path
 * (checked with git 2.39: push, fetch, pull, clone, ls-remote, archive --remote, submodule add).
 * Returns whether that override is needed.
 */
async function otherSides(
  r: Reader,
  cwd: string,
  argv: readonly string[],
  places: GitPlaces,
): Promise<boolean> {
  const reaches = REACHES_REPOSITORY.has(argv[places.sub] ?? "");
  let unknown = false;
  for (const named of namedPlaces(argv, places)) {
    const url = /^file:\/\/[^/]*(\/.*)$/i.exec(named);
    const path = url ? url[1] : named;
    // git tries the name with `.git` after it too (enter_repo).
    for (const p of path.endsWith("/") ? [path] : [path, `${path}.git`]) {
      const at = await land(r, cwd, p);
      if (at === null) {
        if (url || pathLike(p)) unknown = true;
        continue;
      }
      try {
        const g = await repositoryAt(r, at, reaches);
        if (g === null || (await checkGitDir(r, g)).trusted) continue;
      } catch (e) {
        // A pathspec naming a folder whose repository cannot be read: not one git reaches here.
        if (reaches || !(e instanceof Refusal)) throw e;
      }
      if (reaches) refuse(OTHER_SIDE);
      unknown = true;
    }
  }
  return unknown;
}

/**
 * What the stage must run with: the overrides to insert after the program (none for a program
 * other than git, or when every git directory it reaches is trusted), or why it is refused.
 * A refusal over a key the planner may not be told is told to the person, key and file.
 */
export async function guardGitStage(
  policy: FileLabels & Asking & WorkspaceFiles,
  stage: { resolved: string; args: readonly string[] },
): Promise<Result<string[]>> {
  const r: Reader = { policy, root: policy.workspace.root };
  try {
    const wrapped = wrapperOfGit(stage);
    if (wrapped !== null) {
      refuse(
        `it runs git through ${wrapped}, where Brave Bot can neither add its overrides nor ` +
          "check the repository git starts in; run git as a stage of its own",
      );
    }
    const program = await gitProgram(stage.resolved);
    if (program === null) return ok([]);
    if (program.kind === "git") return ok(await guardArgv(r, stage.args, gitPlaces(stage.args)));
    if (program.kind === "chooser") {
      refuse(
        `${program.name.toLowerCase()} runs git commands of its own choosing, which Brave Bot can neither ` +
          "check nor give its overrides; run git itself",
      );
    }
    // `git-<name>` takes no global options, so no -c: it may run only where none is needed. Its
    // name is not repeated: the program may be a workspace file, behind a link.
    const cannot = "a dashed git program (git-…) cannot be given Brave Bot's overrides; run it " +
      "as git <command> instead";
    let needed: string[];
    try {
      needed = await guardArgv(r, [program.name, ...stage.args], NO_PLACES);
    } catch (e) {
      if (e instanceof Refusal) refuse(cannot, e.forPerson);
      throw e;
    }
    if (needed.length > 0) refuse(cannot);
    return ok([]);
  } catch (e) {
    if (e instanceof Refusal) {
      if (e.forPerson !== null) policy.person.notice(e.forPerson);
      return err(e.reason);
    }
    throw e;
  }
}

const NO_PLACES: GitPlaces = { chdirs: [], gitDir: null, workTree: null, configs: [], sub: 0 };

/** The overrides a git command line needs, or a refusal (thrown). */
async function guardArgv(r: Reader, argv: readonly string[], places: GitPlaces): Promise<string[]> {
  const cwd = await stageFolder(r, places);
  const checked = await reachedGitDirs(r, await primaryGitDir(r, places, cwd));
  const injected: string[] = [];
  // No repository inside the workspace: git may find one above it, which is the person's and
  // not the workspace's; the overrides still apply.
  if (checked.length === 0 || !checked.every((c) => c.trusted)) {
    for (const c of checked) checkKeys(c.entries);
    injected.push(...gitOverrideArgs());
  }
  if (await otherSides(r, cwd, argv, places)) injected.push(...NO_FILE_TRANSPORT);
  return injected;
}

/**
 * Refuses when an untrusted entry sets a key the allow-list does not let an untrusted
 * configuration set ({@link untrustedKeyRefusal}); the remotes it may name are those any entry
 * gives a URL. The planner is told Brave Bot's name for the first such key, or none when it has
 * none; the person is told each key as written and the file that sets it.
 */
function checkKeys(entries: Sourced[]): void {
  const remotes = definedRemotes(entries);
  const refused = entries.flatMap((e) => {
    const why = e.trusted ? null : untrustedKeyRefusal(e, remotes);
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
      "keys known to run nothing are allowed in a configuration file that is untrusted (or " +
      "that an untrusted one includes). If those files are yours, trust their folder in the " +
      "trust map (bravebot trust add DIR).",
  );
}
