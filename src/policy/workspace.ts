/**
 * The workspace as the policy layer sees it: its real root, the folders no planner path may
 * name, and whether its file system folds case (which changes what "the same name" means).
 */
import { dirname, isAbsolute, relative, resolve } from "node:path";

export interface Workspace {
  /** Real (symlink-free) absolute path of the workspace root. */
  readonly root: string;
  /** Real paths inside or around the workspace that planner paths may never reach. */
  readonly protectedDirs: readonly string[];
  /** True when `a` and `A` name the same file here (macOS, Windows by default). */
  readonly caseInsensitive: boolean;
}

/** Whether `child` is `parent` or lies below it; both must be absolute real paths. */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

async function detectCaseInsensitive(root: string): Promise<boolean> {
  const name = root.split(/[\\/]/).at(-1) ?? "";
  const swapped = [...name].map((c) => c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())
    .join("");
  if (swapped === name) return Deno.build.os !== "linux";
  try {
    const [a, b] = await Promise.all([
      Deno.stat(root),
      Deno.stat(resolve(dirname(root), swapped)),
    ]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/**
 * Resolves the workspace root once, at start. The state directory is protected when it lies
 * inside the workspace, so no path the planner writes can reach trust or vouches.
 */
export async function openWorkspace(
  dir: string,
  stateDir: string,
  options: { caseInsensitive?: boolean } = {},
): Promise<Workspace> {
  const root = await Deno.realPath(dir);
  const info = await Deno.stat(root);
  if (!info.isDirectory) throw new Error(`workspace ${dir} is not a directory`);
  let stateReal = resolve(stateDir);
  try {
    stateReal = await Deno.realPath(stateDir);
  } catch { /* not created yet: its absolute path is what a planner path would have to name */ }
  return {
    root,
    protectedDirs: [stateReal],
    caseInsensitive: options.caseInsensitive ?? await detectCaseInsensitive(root),
  };
}
