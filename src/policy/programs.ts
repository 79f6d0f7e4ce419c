/**
 * What program a run stage names (docs/contract.md §8.3, a program is who it resolves to): a bare
 * name is looked up on PATH, skipping every PATH entry and every candidate inside the workspace, so
 * it never names a file the repository ships; anything with a `/` is a workspace program, a path
 * relative to the workspace that must stay inside it. The answer is an absolute path the person
 * is shown and a vouch is keyed by; a workspace program (where the planner can write) also
 * carries its content hash.
 *
 * Errors name the program as the planner typed it, never the real path behind a link: that
 * name may lie in an untrusted directory, and a name is content (docs/contract.md §3.2).
 *
 * Also the environment a spawned program gets: a short explicit list, never the API key.
 */
import { join } from "node:path";
import type { EffectWorker } from "../worker/client.ts";
import { resolvePath } from "./paths.ts";
import { isWithin, type Workspace } from "./workspace.ts";
import { escapeForScreen, isControl, isInvisible } from "../util/escape.ts";
import { err, ok, type Result } from "../util/result.ts";

export interface ResolvedProgram {
  /** As the planner wrote it. */
  typed: string;
  /** The absolute path that will be executed and that a vouch is keyed by. */
  resolved: string;
  /** Workspace-relative path of the real file when it lies inside the workspace, else null. */
  workspaceRel: string | null;
  /** SHA-256 of a workspace program's bytes (what a vouch binds to); null outside it. */
  sha256: string | null;
}

const MAX_PROGRAM_CHARS = 4096;

/** A variable's value; unset, empty and unreadable under this build's permissions alike. */
export function envVar(name: string): string | undefined {
  try {
    const v = Deno.env.get(name);
    return v === "" ? undefined : v;
  } catch {
    return undefined; // not readable under this build's permissions: as if unset
  }
}

/**
 * The PATH directories searched: absolute entries only. An empty or relative entry would mean
 * "the current directory", which would let a file the planner wrote shadow a system program.
 */
export function searchPath(pathVar = envVar("PATH")): string[] {
  if (!pathVar) return [];
  const sepChar = Deno.build.os === "windows" ? ";" : ":";
  return pathVar.split(sepChar).filter((d) =>
    d.startsWith("/") || (Deno.build.os === "windows" && /^[A-Za-z]:[\\/]/.test(d))
  );
}

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

function executable(info: Deno.FileInfo): boolean {
  if (Deno.build.os === "windows" || info.mode === null) return true;
  return (info.mode & 0o111) !== 0;
}

async function realOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.realPath(path);
  } catch {
    return null;
  }
}

/**
 * The first executable file called `name` on PATH, or why there is none. With `workspace`, a
 * PATH entry that is (or resolves to) a folder inside it is skipped, and so is a candidate whose
 * real file lies inside it (a link from `/usr/local/bin` into the repository): a bare name is a
 * program of the machine, never one the repository ships.
 */
export async function lookupOnPath(
  name: string,
  dirs: readonly string[] = searchPath(),
  workspace: string | null = null,
): Promise<Result<string>> {
  let notExecutable: string | null = null;
  const inside = async (path: string) => {
    if (workspace === null) return false;
    if (isWithin(workspace, path)) return true;
    const real = await realOrNull(path);
    return real !== null && isWithin(workspace, real);
  };
  for (const dir of dirs) {
    if (await inside(dir)) continue;
    const candidate = join(dir, name);
    const info = await statOrNull(candidate);
    if (!info || !info.isFile) continue;
    if (await inside(candidate)) continue;
    if (executable(info)) return ok(candidate);
    notExecutable ??= candidate;
  }
  if (notExecutable) return err(`'${name}' was found at ${notExecutable} but it is not executable`);
  return err(
    `'${name}' was not found on PATH (${dirs.length} directories searched); give a program ` +
      `on PATH, or a workspace path such as ./scripts/build.sh`,
  );
}

function checkProgramText(program: string): Result<void> {
  if (program === "") return err("the program is empty; name a program such as git");
  if (program.length > MAX_PROGRAM_CHARS) {
    return err(`the program name is longer than ${MAX_PROGRAM_CHARS} characters`);
  }
  for (const ch of program) {
    if (ch === "\0") return err("the program name contains a NUL byte");
    if (isControl(ch) || isInvisible(ch)) {
      return err(
        `the program name contains a control or invisible character (${
          escapeForScreen(ch)
        }); name the program exactly`,
      );
    }
  }
  if (program === "." || program === "..") {
    return err(`'${program}' is a directory, not a program`);
  }
  return ok(undefined);
}

/**
 * What resolving a program needs: the workspace it is resolved against and the worker that hashes
 * a workspace program. Not `Policy`: opening `Policy` binds the approval policy file's commands to
 * their programs (command_rules.ts) through this rule.
 */
export interface ProgramPlaces {
  readonly workspace: Workspace;
  readonly worker: Pick<EffectWorker, "call">;
}

/**
 * Resolves one stage's program (docs/tools.md#run: a name on PATH, a path relative to the
 * workspace).
 */
export async function resolveProgram(
  policy: ProgramPlaces,
  program: string,
): Promise<Result<ResolvedProgram>> {
  const text = checkProgramText(program);
  if (!text.ok) return text;
  const shown = `'${escapeForScreen(program)}'`;
  if (!program.includes("/")) {
    const onPath = await lookupOnPath(program, searchPath(), policy.workspace.root);
    if (!onPath.ok) return onPath;
    return ok({ typed: program, resolved: onPath.value, workspaceRel: null, sha256: null });
  }
  // The resolver's own errors quote only what the planner typed (a prefix of it), never the
  // target of a link; every other sentence here names `shown`, the typed path.
  const resolved = await resolvePath(policy.workspace, program);
  if (!resolved.ok) {
    return err(`${shown}: ${resolved.error} (a program path is taken relative to the workspace)`);
  }
  const where = resolved.value;
  if (where.kind === "missing") return err(`${shown}: there is no such file in the workspace`);
  if (where.kind === "directory") return err(`${shown} is a directory, not a program`);
  if (where.kind !== "file") return err(`${shown} is not a regular file`);
  const info = await statOrNull(where.abs);
  if (!info || !executable(info)) {
    return err(
      `${shown} is not executable (it has no execute permission); run it through its ` +
        `interpreter instead, e.g. {"program": "sh", "args": [${JSON.stringify(program)}]}`,
    );
  }
  const hashed = await policy.worker.call({ op: "hash", path: where.abs });
  if (!hashed.ok) {
    return err(`${shown} cannot be read to bind it to its contents (${hashed.error.name})`);
  }
  return ok({ typed: program, resolved: where.abs, workspaceRel: where.rel, sha256: hashed.value });
}

/**
 * Programs that start the program their arguments name (a shell: the program its line names),
 * each in its own way. Runners (below); and where their argument is git, the git guard refuses
 * them (`wrapperOfGit`, git_programs.ts), since git's overrides cannot be placed after it.
 */
export const WRAPPERS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "ash",
  "zsh",
  "ksh",
  "mksh",
  "fish",
  "csh",
  "tcsh",
  "busybox",
  "env",
  "xargs",
  "parallel",
  "nohup",
  "nice",
  "timeout",
  "time",
  "stdbuf",
  "ionice",
  "chrt",
  "taskset",
  "numactl",
  "prlimit",
  "setsid",
  "flock",
  "sudo",
  "doas",
  "su",
  "runuser",
  "setpriv",
  "unshare",
  "nsenter",
  "chroot",
  "fakeroot",
  "command",
  "exec",
  "strace",
  "ltrace",
  "unbuffer",
  "script",
  "watch",
  "systemd-run",
]);

/**
 * Programs that run other programs or code they are given (docs/contract.md §8.5): vouching one means
 * whatever that code prints reaches the planner as trusted. Matched on the program's file name,
 * with a version suffix (`python3.12`, `perl5.36`) counting as the same program.
 */
const RUNNERS = new Set([
  ...WRAPPERS,
  "sed",
  "gsed",
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "python",
  "pypy",
  "node",
  "nodejs",
  "deno",
  "bun",
  "perl",
  "ruby",
  "php",
  "lua",
  "tclsh",
  "make",
  "gmake",
  "cmake",
  "ninja",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "cargo",
  "go",
  "mvn",
  "gradle",
  "pip",
  "uv",
  "poetry",
  "tox",
  "pytest",
  "jest",
  "vitest",
  "git",
  "ssh",
  "docker",
  "podman",
]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * The one-line warning the approval screen shows for a stage whose program runs code it is
 * given, or null. `find` counts only with one of its `-exec` family (docs/contract.md §8.5).
 */
export function runnerWarning(
  stage: { typed: string; resolved: string; args: readonly string[] },
): string | null {
  const base = stage.resolved.split(/[\\/]/).at(-1)!.replace(/\.exe$/i, "");
  const name = base.replace(/[0-9][0-9.]*$/, "");
  const runs = RUNNERS.has(base) || RUNNERS.has(name) ||
    (name === "find" && stage.args.some((a) => FIND_EXEC.has(a)));
  if (!runs) return null;
  return `${escapeForScreen(stage.typed)} runs other programs or code it is given: if you vouch ` +
    "for it, whatever that code prints reaches the planner as trusted";
}

/** Variables a spawned program inherits, by name; everything else (the API key) is left out. */
const PASSED_THROUGH = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME"] as const;

/**
 * The explicit environment of a run stage: a few harmless variables, `TERM=dumb` since the
 * output goes to a reference rather than a terminal, and temporary files in the scratch folder.
 */
export function childEnv(scratch: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = envVar(name);
    if (value !== undefined) env[name] = value;
  }
  env.LANG ??= "C.UTF-8";
  env.TERM = "dumb";
  env.TMPDIR = scratch;
  // git opens the terminal itself to ask for a user name or password; a run never answers one.
  env.GIT_TERMINAL_PROMPT = "0";
  return env;
}
