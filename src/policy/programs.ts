/**
 * What program a run stage names (tools.md, run): a bare name is looked up on PATH; anything
 * with a `/` is a path relative to the workspace and must stay inside it. The answer is an
 * absolute path the person is shown and a vouch is keyed by; a program that lies inside the
 * workspace (where the planner can write) also carries its content hash.
 *
 * Also the environment a spawned program gets: a short explicit list, never the API key.
 */
import { join, relative } from "node:path";
import type { Policy } from "./core.ts";
import { resolvePath } from "./paths.ts";
import { isWithin } from "./workspace.ts";
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

function envVar(name: string): string | undefined {
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

/** The first executable file called `name` on PATH, or why there is none. */
export async function lookupOnPath(
  name: string,
  dirs: readonly string[] = searchPath(),
): Promise<Result<string>> {
  let notExecutable: string | null = null;
  for (const dir of dirs) {
    const candidate = join(dir, name);
    const info = await statOrNull(candidate);
    if (!info || !info.isFile) continue;
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

/** Resolves one stage's program (tools.md: a name on PATH, a path relative to the workspace). */
export async function resolveProgram(
  policy: Policy,
  program: string,
): Promise<Result<ResolvedProgram>> {
  const text = checkProgramText(program);
  if (!text.ok) return text;
  const shown = `'${escapeForScreen(program)}'`;
  let found: string;
  if (program.includes("/")) {
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
          `interpreter instead, e.g. {"program": "sh", "args": ["${where.rel}"]}`,
      );
    }
    found = where.abs;
  } else {
    const onPath = await lookupOnPath(program);
    if (!onPath.ok) return onPath;
    found = onPath.value;
  }
  // A program reached through PATH may still live inside the workspace (node_modules/.bin):
  // the planner can write there, so it is bound to its bytes like any workspace program.
  let real = found;
  try {
    real = await Deno.realPath(found);
  } catch { /* keep the found path */ }
  if (!isWithin(policy.workspace.root, real)) {
    return ok({ typed: program, resolved: found, workspaceRel: null, sha256: null });
  }
  const hashed = await policy.worker.call({ op: "hash", path: real });
  if (!hashed.ok) {
    return err(`${shown} cannot be read to bind it to its contents: ${hashed.error.message}`);
  }
  return ok({
    typed: program,
    resolved: found,
    workspaceRel: relative(policy.workspace.root, real).split("\\").join("/"),
    sha256: hashed.value,
  });
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
  return env;
}
