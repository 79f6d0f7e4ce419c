/**
 * Programs that obey the repository (design.md §13): git reads `.git/config`, and a repository
 * can make it run commands (`core.fsmonitor`, hooks, `diff.external`, filter drivers, …). When a
 * git directory a stage can reach is not trusted by the trust map (the default for `.git/`),
 * the stage runs with {@link GIT_OVERRIDES} inserted after the program, and is refused before
 * anything runs when a configuration it reads (with its includes) or a `.gitattributes` file
 * names a command the overrides cannot neutralise.
 *
 * Everything is read as data through the effect worker, with the strict parser of
 * git_config.ts; a file that cannot be read with certainty refuses the stage (fail closed).
 * Reasons name a key by its category (`filter.<driver>.clean`), never a value, a subsection or
 * a path from the repository: those are untrusted text.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Policy } from "./core.ts";
import { type ResolvedPath, resolvePath } from "./paths.ts";
import { readAtMost } from "./reads.ts";
import { isWithin } from "./workspace.ts";
import { type ConfigEntry, parseGitConfig } from "./git_config.ts";
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

const NOTHING_RAN = "; nothing was run";

/** Keys a value of which git may take as a boolean or a harmless pager. */
const HARMLESS_PAGER = new Set([
  "true",
  "false",
  "yes",
  "no",
  "on",
  "off",
  "1",
  "0",
  "cat",
  "less",
]);

/**
 * The command-running key an entry sets that the overrides do not neutralise, as a category
 * name (our own text, never the file's), or null. The allow-list is what is not here: the keys
 * of {@link GIT_OVERRIDES} whatever their value, `pager.<command>` set to a boolean, `cat` or
 * `less`, and `submodule.<name>.update` other than a `!command`.
 */
export function commandKey(e: ConfigEntry): string | null {
  const { section: s, subsection: sub, key: k, value } = e;
  if (s === "alias") return "alias.<name>";
  if (s === "diff" && sub === null && k === "external") return "diff.external";
  if (sub !== null) {
    if (s === "filter" && (k === "clean" || k === "smudge" || k === "process")) {
      return `filter.<driver>.${k}`;
    }
    if (s === "diff" && (k === "command" || k === "textconv")) return `diff.<driver>.${k}`;
    if (s === "merge" && k === "driver") return "merge.<driver>.driver";
    if (s === "remote" && (k === "uploadpack" || k === "receivepack" || k === "vcs")) {
      return `remote.<name>.${k}`;
    }
    if (
      ["difftool", "mergetool", "man", "browser", "guitool"].includes(s) &&
      (k === "cmd" || k === "path")
    ) return `${s}.<tool>.${k}`;
    if (s === "trailer" && (k === "command" || k === "cmd")) return `trailer.<token>.${k}`;
    if (s === "submodule" && k === "update" && (value ?? "").trimStart().startsWith("!")) {
      return "submodule.<name>.update";
    }
    if (s === "gpg" && sub.toLowerCase() === "ssh" && k === "defaultkeycommand") {
      return "gpg.ssh.defaultKeyCommand";
    }
  }
  if (s === "pager" && sub === null) {
    return value === null || HARMLESS_PAGER.has(value.trim().toLowerCase())
      ? null
      : "pager.<command>";
  }
  if (s === "uploadpack" && k === "packobjectshook") return "uploadpack.packObjectsHook";
  if (s === "core" && sub === null && k === "alternaterefscommand") {
    return "core.alternateRefsCommand";
  }
  if (s === "core" && sub === null && k === "gitproxy") return "core.gitProxy";
  if (s === "interactive" && k === "difffilter") return "interactive.diffFilter";
  if (s === "sendemail" && ["tocmd", "cccmd", "headercmd"].includes(k)) return `sendemail.${k}`;
  if (s === "sendemail" && k === "smtpserver" && (value ?? "").includes("/")) {
    return "sendemail.smtpServer";
  }
  return null;
}

/** Whether an entry names a file to include (`include.path`, `includeIf.<condition>.path`). */
function isInclude(e: ConfigEntry): boolean {
  return e.key === "path" &&
    ((e.section === "include" && e.subsection === null) ||
      (e.section === "includeif" && e.subsection !== null));
}

/** The driver commands a configuration sets, keyed `kind\0name`, with the key's category. */
const DRIVER_KEYS: Record<string, string[]> = {
  filter: ["clean", "smudge", "process"],
  diff: ["command", "textconv"],
  merge: ["driver"],
};

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

/** A file's text through the effect worker (null: no such file). */
async function readText(r: Reader, abs: string, max: number): Promise<Result<string | null>> {
  const where = await locate(r, abs);
  if (where === null) return err("outside");
  if (!where.ok) return where;
  if (where.value.kind === "missing") return ok(null);
  if (where.value.kind !== "file") return err("a file it reads is not a regular file");
  const read = await readAtMost(r.policy, where.value, max);
  if (!read.ok) {
    return err(
      read.tooBig ? "a file it reads is too big to check" : "a file it reads cannot be read",
    );
  }
  return ok(new TextDecoder().decode(read.bytes));
}

/** One git directory the stage can reach. */
interface GitDir {
  /** Absolute, real. */
  dir: string;
  /** Where config, hooks and modules live (`commondir` of a linked worktree). */
  common: string;
  /** The working tree whose `.gitattributes` git reads, when known and inside the workspace. */
  worktree: string | null;
  /** The `.git` file that named it, if any (its own label counts for trust). */
  via: string | null;
}

/** The stage's working directory and explicit git places, from git's global options. */
export function gitPlaces(
  cwd: string,
  args: readonly string[],
): { cwd: string; gitDir: string | null; workTree: string | null } {
  let dir = cwd;
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
      if (to !== undefined && to !== "") dir = resolve(dir, to);
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
  // GIT_DIR and GIT_WORK_TREE are read after every -C has been applied.
  return {
    cwd: dir,
    gitDir: gitDir === null ? null : resolve(dir, gitDir),
    workTree: workTree === null ? null : resolve(dir, workTree),
  };
}

class Refusal {
  constructor(readonly reason: string) {}
}

function refuse(reason: string): never {
  throw new Refusal(reason + NOTHING_RAN);
}

const OUTSIDE =
  "its git directory lies outside the workspace, where its configuration cannot be checked " +
  "(trust .git in the trust map if that repository is yours)";

/** Whether a folder is itself a git directory (a bare repository, or `--git-dir`'s target). */
async function looksLikeGitDir(r: Reader, abs: string): Promise<boolean> {
  const [head, objects, refs] = await Promise.all(
    ["HEAD", "objects", "refs"].map((n) => locate(r, join(abs, n))),
  );
  return head?.ok === true && head.value.kind === "file" && objects?.ok === true &&
    objects.value.kind === "directory" && refs?.ok === true && refs.value.kind === "directory";
}

/**
 * The git directory a `.git` entry (or `--git-dir`'s target) names: the folder itself, or the
 * one its `gitdir:` line names. Null when there is none there.
 */
async function gitDirAt(r: Reader, abs: string, worktree: string | null): Promise<GitDir | null> {
  const found = await locate(r, abs);
  if (found === null) refuse(OUTSIDE);
  if (!found.ok) refuse(`its git directory ${found.error}`);
  const f = found.value;
  if (f.kind === "missing") return null;
  let dir: string;
  let via: string | null = null;
  if (f.kind === "file") {
    const text = await readText(r, f.abs, MAX_SMALL_BYTES);
    if (!text.ok || text.value === null) refuse("its .git file cannot be read");
    const m = /^gitdir: ?(.+?)\r?\n?$/.exec(text.value.split("\n")[0] + "\n");
    if (!m) refuse("its .git file is not of the form git reads (gitdir: …)");
    via = f.rel;
    const target = resolve(dirname(f.abs), m[1]);
    if (!isWithin(r.root, target)) {
      // A .git file the person trusts may point where the person keeps the repository.
      if (await trustedPlace(r, f.rel)) return { dir: target, common: target, worktree, via };
      refuse(OUTSIDE);
    }
    const t = await locate(r, target);
    if (t === null || !t.ok || t.value.kind !== "directory") {
      refuse("its .git file names no git directory inside the workspace");
    }
    dir = t.value.abs;
  } else {
    dir = f.abs;
  }
  let common = dir;
  const commondir = await readText(r, join(dir, "commondir"), MAX_SMALL_BYTES);
  if (!commondir.ok) refuse(OUTSIDE);
  if (commondir.value !== null) {
    const target = resolve(dir, commondir.value.trim());
    const t = await locate(r, target);
    if (t === null) refuse(OUTSIDE);
    if (!t.ok || t.value.kind !== "directory") refuse("its git directory's commondir is unusable");
    common = t.value.abs;
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
  const worktree = places.workTree;
  if (worktree !== null && !isWithin(r.root, worktree)) {
    refuse("its --work-tree lies outside the workspace, where its attributes cannot be checked");
  }
  if (places.gitDir !== null) {
    if (!isWithin(r.root, places.gitDir)) refuse(OUTSIDE);
    const g = await gitDirAt(r, places.gitDir, worktree);
    if (g === null) refuse("its --git-dir names nothing inside the workspace");
    return g;
  }
  if (!isWithin(r.root, places.cwd)) {
    refuse(
      "it works in a folder outside the workspace (-C), whose git configuration cannot be checked",
    );
  }
  for (let dir = places.cwd;; dir = dirname(dir)) {
    const g = await gitDirAt(r, join(dir, ".git"), worktree ?? dir);
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

/** The entries of one configuration file with its includes, all inside the workspace. */
async function readConfig(r: Reader, abs: string, depth = 0): Promise<ConfigEntry[]> {
  if (depth > MAX_INCLUDE_DEPTH) refuse("its git configuration includes files nested too deeply");
  const text = await readText(r, abs, MAX_CONFIG_BYTES);
  if (!text.ok) {
    refuse(
      text.error === "outside"
        ? "its configuration includes a file outside the workspace, which cannot be checked"
        : `a git configuration file it reads cannot be checked (${text.error})`,
    );
  }
  if (text.value === null) return []; // git ignores a missing include
  const parsed = parseGitConfig(text.value);
  if (!parsed.ok) {
    refuse(
      `a git configuration file it reads cannot be parsed (${parsed.error}), so what git would ` +
        "run cannot be checked",
    );
  }
  const entries: ConfigEntry[] = [];
  for (const e of parsed.value) {
    entries.push(e);
    if (!isInclude(e) || e.value === null || e.value === "") continue;
    const path = e.value;
    if (path.startsWith("~") || (isAbsolute(path) && !isWithin(r.root, path))) {
      refuse("its configuration includes a file outside the workspace, which cannot be checked");
    }
    entries.push(...await readConfig(r, resolve(dirname(abs), path), depth + 1));
  }
  return entries;
}

/** The driver names `.gitattributes` text selects, as `kind\0name`. */
export function attributeDrivers(text: string): Set<string> {
  const drivers = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("#")) continue;
    for (const token of line.split(/[ \t\r]+/)) {
      const m = /^(filter|diff|merge)=(.+)$/.exec(token);
      if (m) drivers.add(`${m[1]}\0${m[2]}`);
    }
  }
  return drivers;
}

/** The submodule worktrees `.gitmodules` names, as absolute paths inside the workspace. */
async function gitmodulesPaths(r: Reader, worktree: string): Promise<string[]> {
  const text = await readText(r, join(worktree, ".gitmodules"), MAX_CONFIG_BYTES);
  if (!text.ok) refuse(`its .gitmodules file cannot be checked (${text.error})`);
  if (text.value === null) return [];
  const parsed = parseGitConfig(text.value);
  if (!parsed.ok) refuse(`its .gitmodules file cannot be parsed (${parsed.error})`);
  return parsed.value.flatMap((e) =>
    e.section === "submodule" && e.key === "path" && e.value ? [resolve(worktree, e.value)] : []
  ).filter((p) => isWithin(r.root, p));
}

/**
 * What the stage must run with: the overrides to insert after the program (none for a program
 * other than git, or when every git directory it reaches is trusted), or why it is refused.
 */
export async function guardGitStage(
  policy: Policy,
  stage: { resolved: string; args: readonly string[] },
): Promise<Result<string[]>> {
  if (!isGit(stage.resolved)) return ok([]);
  const r: Reader = { policy, root: policy.workspace.root };
  try {
    const places = gitPlaces(r.root, stage.args);
    const primary = await primaryGitDir(r, places);
    const dirs: GitDir[] = primary ? [primary] : [];
    const seen = new Set<string>();
    // Nested repositories: submodules named by .gitmodules and those kept in .git/modules.
    for (let i = 0; i < dirs.length; i++) {
      const g = dirs[i];
      if (seen.has(g.dir)) continue;
      seen.add(g.dir);
      if (dirs.length > MAX_GIT_DIRS) refuse("it reaches more git directories than are checked");
      if (!isWithin(r.root, g.common)) continue;
      for (const m of await moduleGitDirs(r, g.common)) {
        dirs.push({ dir: m, common: m, worktree: null, via: null });
      }
      if (g.worktree !== null) {
        for (const sub of await gitmodulesPaths(r, g.worktree)) {
          const nested = await gitDirAt(r, join(sub, ".git"), sub);
          if (nested) dirs.push(nested);
        }
      }
    }
    const unique = [...new Map(dirs.map((g) => [g.dir, g])).values()];
    let allTrusted = true;
    for (const g of unique) {
      if (!(await gitDirTrusted(r, g))) allTrusted = false;
    }
    // No repository inside the workspace: git may find one above it, which is the person's
    // and not the workspace's; the overrides still apply.
    if (unique.length > 0 && allTrusted) return ok([]);
    for (const g of unique) await checkGitDir(r, g);
    return ok(gitOverrideArgs());
  } catch (e) {
    if (e instanceof Refusal) return err(e.reason);
    throw e;
  }
}

/** Refuses when one git directory's configuration or attributes name a command git would run. */
async function checkGitDir(r: Reader, g: GitDir): Promise<void> {
  if (!isWithin(r.root, g.common)) return; // outside, behind a .git file the person trusts
  const files = [join(g.common, "config"), join(g.dir, "config.worktree")];
  if (g.common !== g.dir) files.push(join(g.common, "config.worktree"));
  const entries: ConfigEntry[] = [];
  for (const f of files) entries.push(...await readConfig(r, f));
  const configured = new Map<string, string>();
  for (const e of entries) {
    if (e.subsection !== null && DRIVER_KEYS[e.section]?.includes(e.key)) {
      configured.set(`${e.section}\0${e.subsection}`, `${e.section}.<driver>.${e.key}`);
    }
  }
  let worktree = g.worktree;
  const coreWorktree = entries.findLast((e) =>
    e.section === "core" && e.subsection === null && e.key === "worktree" && e.value
  );
  if (worktree === null && coreWorktree) {
    const w = resolve(g.dir, coreWorktree.value!);
    if (isWithin(r.root, w)) worktree = w;
  }
  const attributes = [join(g.common, "info", "attributes")];
  if (worktree !== null) attributes.push(join(worktree, ".gitattributes"));
  for (const a of attributes) {
    const text = await readText(r, a, MAX_CONFIG_BYTES);
    if (!text.ok) refuse(`a .gitattributes file it reads cannot be checked (${text.error})`);
    if (text.value === null) continue;
    for (const driver of attributeDrivers(text.value)) {
      const key = configured.get(driver);
      if (key) {
        const kind = driver.split("\0")[0];
        refuse(
          `the repository's .gitattributes selects a ${kind} driver whose command its git ` +
            `configuration sets (${key}), which git would run`,
        );
      }
    }
  }
  for (const e of entries) {
    const key = commandKey(e);
    if (key) {
      refuse(`the repository's git configuration sets a command (${key}), which git would run`);
    }
  }
}
