/**
 * The workspace as the policy layer sees it: its real root, the folders no planner path may
 * name, and whether its file system folds case (which changes what "the same name" means).
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

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
  if (rel === "") return true;
  // `..foo` is a name inside; only a whole `..` segment climbs out.
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
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
 * The real path a folder has or will have: a state directory not created yet is resolved
 * through its nearest existing parent, so a symlinked parent (`/tmp` on macOS) still matches.
 */
async function realThroughParent(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(await Deno.realPath(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(basename(current));
      current = parent;
    }
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
  const stateReal = await realThroughParent(resolve(stateDir));
  return {
    root,
    protectedDirs: [stateReal],
    caseInsensitive: options.caseInsensitive ?? await detectCaseInsensitive(root),
  };
}
