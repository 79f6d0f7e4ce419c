/**
 * Which run stages are git (docs/contract.md §13.6), for the guard
 * of git_guard.ts. A stage is git when its program is — whatever the planner called it:
 *
 * - `git` itself, a link to it under another name (`g → git`), or the very file on PATH that
 *   `git` names (a hard link or copy under another name is not seen);
 * - one of git's dashed programs (`git-upload-pack`, `git-receive-pack`, `git-upload-archive`,
 *   anything `git-…` on PATH): git dispatches on the name it is called by, and these take no
 *   global options, so the guard's `-c` overrides cannot be given to them;
 * - `git-shell` and `scalar`, which run git commands they choose themselves.
 *
 * And a stage that runs git through a wrapper (`env git …`, `nice`, `timeout 5 git …`,
 * `xargs git`, `sh -c 'git …'`, `find -exec git`) is seen as one: the overrides are inserted
 * after the stage's program, and the guard reads the repository the stage starts in, and
 * neither holds for a git the wrapper starts (`env -C DIR`, `cd` in a shell line, arguments
 * from stdin). A build tool or a script that starts git is not seen (docs/trust.md).
 */
import { basename } from "node:path";
import { lookupOnPath, searchPath, WRAPPERS } from "./programs.ts";

export type GitProgram =
  /** git: the overrides go right after the program. */
  | { kind: "git" }
  /** `git-<name>`: runs as `git <name>`, without global options. */
  | { kind: "dashed"; name: string }
  /** Runs git commands of its own choosing (`git-shell`, `scalar`): never guarded enough. */
  | { kind: "chooser"; name: string };

const GIT = /^git(?:\.exe)?$/i;
const DASHED = /^git-(.+?)(?:\.exe)?$/i;
const CHOOSERS = new Set(["git-shell", "scalar"]);

async function realOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.realPath(path);
  } catch {
    return null;
  }
}

async function identity(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    return info.ino === null ? null : `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/** What kind of git a stage's resolved program is, or null when it is not git. */
export async function gitProgram(resolved: string): Promise<GitProgram | null> {
  const name = basename(resolved).replace(/\.exe$/i, "");
  if (CHOOSERS.has(name.toLowerCase())) return { kind: "chooser", name };
  const dashed = DASHED.exec(name);
  if (dashed) return { kind: "dashed", name: dashed[1] };
  if (GIT.test(name)) return { kind: "git" };
  // Called by another name, git acts as plain git: a link to it, or the same file.
  const real = await realOrNull(resolved);
  if (real !== null) {
    const realName = basename(real).replace(/\.exe$/i, "");
    if (CHOOSERS.has(realName.toLowerCase())) return { kind: "chooser", name: realName };
    if (GIT.test(realName)) return { kind: "git" };
  }
  const git = await lookupOnPath("git", searchPath());
  if (!git.ok) return null;
  const [mine, its] = await Promise.all([identity(resolved), identity(git.value)]);
  return mine !== null && mine === its ? { kind: "git" } : null;
}

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * `git`, `git-…` or `scalar` as a word of an argument: the argument itself, a path's last name
 * (`/usr/bin/git`), or a word of a shell line (`cd x && git status`). A name that only begins
 * with it (`github`, `.gitignore`, `GIT_DIR`) is not one.
 */
const GIT_WORD =
  /(?:^|[\s/;&|()<>`'"=$!{}])(?:git(?:-[\w.-]+)?|scalar)(?:\.exe)?(?=$|[\s;&|()<>`'"}])/i;

/**
 * The wrapper through which a stage runs git (its name, one of ours), or null: a known wrapper
 * or shell (with a version suffix, `bash5.2`), or `find` with one of its `-exec` family, any of
 * whose arguments names git ({@link GIT_WORD}).
 */
export function wrapperOfGit(stage: { resolved: string; args: readonly string[] }): string | null {
  const name = basename(stage.resolved).replace(/\.exe$/i, "");
  const base = name.replace(/[0-9][0-9.]*$/, "");
  const wrapper = WRAPPERS.has(name)
    ? name
    : WRAPPERS.has(base)
    ? base
    : name === "find" && stage.args.some((a) => FIND_EXEC.has(a))
    ? "find -exec"
    : null;
  if (wrapper === null) return null;
  return stage.args.some((a) => GIT_WORD.test(a)) ? wrapper : null;
}
