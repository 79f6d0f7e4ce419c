/**
 * `.git/` is Brave Bot's blind spot by design (docs/contract.md §14): it is never listed or
 * searched, and nothing is written into it — hooks and config there run code the person never
 * approved as a file. Any path segment spelled `.git` in any case counts, so a nested repository
 * and a case-folding file system are covered too.
 */

/** Whether a workspace-relative path is `.git` or lies inside one, at any depth. */
export function isGitPath(rel: string): boolean {
  return rel.split("/").some((segment) => segment.toLowerCase() === ".git");
}

/** Whether a directory entry's name is `.git` (skipped by every walk). */
export function isGitName(name: string): boolean {
  return name.toLowerCase() === ".git";
}
