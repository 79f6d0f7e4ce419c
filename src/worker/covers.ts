/**
 * Covers inside a bwrap box, shared by both boxes that hide Brave Bot's state: a run stage's
 * (src/policy/sandbox.ts `bwrapArgs`) and the kernel wall's child (kernel.ts `childArgv`). It
 * lives here, in the worker's part, because the policy layer may import the worker and not the
 * other way round.
 */

/** Whether `path` lies strictly below `root` (both absolute, without `..`). */
export function strictlyInside(root: string, path: string): boolean {
  return path.startsWith(`${root.replace(/\/+$/, "")}/`);
}

/**
 * Binds over themselves the folders between a writable folder of the box and a path covered
 * inside it (the state directory in a home workspace or a `run.writable` `~/.local`, a host
 * socket under the workspace): a cover is a mount on its own name only, and a box that renames
 * a folder above it moves the real one on the host and makes its own in its place (a state, a
 * kernel wall module cache of its making). A mount point cannot be renamed or removed, so each
 * such folder stays where it is, and as writable as it was. Made before any cover: a pin binds
 * the host's folder whole, so one made later would undo a cover beneath it.
 */
export function pinned(covered: readonly string[], writable: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const path of covered) {
    for (let up = path.slice(0, path.lastIndexOf("/")); up.length > 1;) {
      if (writable.some((root) => strictlyInside(root, up))) folders.add(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  }
  // Outer folders first: a bind over an inner one made before its parent's would be covered.
  const order = [...folders].sort((a, b) => a.split("/").length - b.split("/").length);
  return order.flatMap((dir) => ["--bind", dir, dir]);
}
