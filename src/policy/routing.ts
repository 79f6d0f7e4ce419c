/**
 * Routing a file tool's target as the planner may be told about it: exactly one of `path` and
 * `path_ref`, the name it is shown under (its own spelling, or `ref:N`, never where a symbolic
 * link led), and the directory a listing or a search walks.
 */
import { isGitPath } from "./git_dir.ts";
import { checkPathSyntax, type ResolvedPath, resolvePath } from "./paths.ts";
import { refName, type RefRecord } from "./refs.ts";
import type { Workspace } from "./workspace.ts";
import { err, ok, type Result } from "../util/result.ts";

/** A routing target: a resolved path and whether the planner named it only through a ref. */
export interface Routed {
  path: ResolvedPath;
  viaRef: RefRecord | null;
}

/**
 * What routing a target needs of the policy layer: resolving exactly one of a path and a
 * reference (`Policy.route`). Named here, not as `Policy`, since `Policy` uses {@link oneTarget}.
 */
export interface Router {
  route(path: unknown, pathRef: unknown): Promise<Result<Routed>>;
}

/**
 * "path or path_ref, exactly one": the message when the rule is broken, else null. The one
 * wording of it, used by the tools' schemas and by routing itself.
 */
export function oneTarget(path: unknown, pathRef: unknown): string | null {
  if (path !== undefined && pathRef !== undefined) return "give either path or path_ref, not both";
  if (path === undefined && pathRef === undefined) {
    return "give path (or path_ref for a referenced file)";
  }
  return null;
}

/**
 * The planner's own path, tidied (`./a//b` → `a/b`, the root → ""): what results are shown
 * under, so a symbolic link's target — chosen by whoever made the link — is never revealed.
 */
export function displayBase(given: string): string {
  const syntax = checkPathSyntax(given);
  return syntax.ok ? syntax.value.join("/") : given;
}

export interface RoutedFile {
  routed: Routed;
  /** How the planner may be told about the target: its own path, or `ref:N`. */
  shownAs: string;
}

/**
 * Routes exactly one of path and path_ref (failures about a reference name the reference,
 * never the path behind it), with the name the target is shown under.
 */
export async function routeFile(
  policy: Router,
  path: string | undefined,
  pathRef: string | undefined,
): Promise<Result<RoutedFile>> {
  const routed = await policy.route(path, pathRef);
  if (!routed.ok) return routed;
  const shownAs = routed.value.viaRef
    ? refName(routed.value.viaRef)
    : displayBase(path ?? ".") || ".";
  return ok({ routed: routed.value, shownAs });
}

/** The directory a listing or a search walks, and the base its results are shown under. */
export interface WalkedDirectory {
  dir: ResolvedPath;
  /** {@link displayBase} of the planner's spelling. */
  base: string;
}

/** What a walking tool says when the directory given is not one it walks. */
export interface DirectoryWording {
  /** The directory is a file (or something else that is not a directory). */
  notDirectory(given: string): string;
  /** The directory is `.git` or inside it. */
  git: string;
}

/** Routes the `directory` of list_files and search: an existing directory, never `.git`. */
export async function routeDirectory(
  policy: { readonly workspace: Workspace },
  directory: string | undefined,
  wording: DirectoryWording,
): Promise<Result<WalkedDirectory>> {
  const given = directory ?? ".";
  const resolved = await resolvePath(policy.workspace, given);
  if (!resolved.ok) return resolved;
  const dir = resolved.value;
  if (dir.kind === "missing") return err(`${given} does not exist`);
  if (dir.kind !== "directory") return err(wording.notDirectory(given));
  if (isGitPath(dir.rel)) return err(wording.git);
  return ok({ dir, base: displayBase(given) });
}
