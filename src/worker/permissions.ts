/**
 * The effect worker's Deno permissions (docs/contract.md §13.1, the second wall): read and write
 * only the workspace and the session's scratch folder; no network, no environment, no FFI, no
 * system information; run only as configured. Computed at start, because the workspace is.
 * A read-only worker (`bravebot diff`) may write nowhere and run nothing: the wall itself refuses,
 * whatever a caller asks of it.
 */

export interface WallOptions {
  workspace: string;
  scratch: string;
  /** `true`: any program (each argv is still approved by the person); a list: only those. */
  run: boolean | string[];
  /**
   * Read only: no write permission anywhere and no program, and behind the kernel wall both places
   * are mounted read-only (kernel.ts). What reads a session's changes without acting on them.
   */
  readOnly?: boolean;
  /**
   * Kernel wall under `deno run` only: the children's module cache (module_cache.ts), bound
   * read-only as their `DENO_DIR`; none, an empty one (every child compiles in memory).
   */
  moduleCache?: string | null;
  /**
   * Folders inside the two places the worker must never reach: Brave Bot's state when it lies in
   * the workspace (a home-folder workspace). Real paths; the scratch folder inside one stays
   * reachable. Behind the kernel wall each is covered by an empty read-only folder, its parents
   * pinned (kernel.ts); on both walls the worker's own checks refuse it (ops/wall.ts).
   */
  hide?: readonly string[];
}

/** What the worker's own checks keep it out of: the hidden folders, but the places open in them. */
export interface Hidden {
  hide: string[];
  open: string[];
}

/** The {@link Hidden} set of a worker started with `options`. */
export function hiddenOf(options: WallOptions): Hidden {
  return { hide: [...(options.hide ?? [])], open: [options.workspace, options.scratch] };
}

/** The kernel child's argument carrying its {@link Hidden} set (JSON, after the entry). */
export const HIDDEN_ARG = "--bravebot-hidden=";

/** The {@link Hidden} set given to a kernel child in `args`, or none. */
export function hiddenFromArgs(args: readonly string[]): Hidden | null {
  const arg = args.find((a) => a.startsWith(HIDDEN_ARG));
  if (!arg) return null;
  const parsed = JSON.parse(arg.slice(HIDDEN_ARG.length)) as Hidden;
  const strings = (v: unknown) => Array.isArray(v) && v.every((p) => typeof p === "string");
  if (!strings(parsed?.hide) || !strings(parsed?.open)) throw new TypeError("bad hidden set");
  return parsed;
}

/** After the compiled kernel child's two places (kernel.ts): it narrows itself to read only. */
export const READ_ONLY_ARG = "--read-only";

export function workerPermissions(options: WallOptions): Deno.PermissionOptionsObject {
  const places = [options.workspace, options.scratch];
  if (options.readOnly) {
    return { ...workerPermissions({ ...options, readOnly: false }), write: false, run: false };
  }
  return {
    read: places,
    write: places,
    net: false,
    env: false,
    sys: false,
    ffi: false,
    import: false,
    run: options.run === true ? true : options.run === false ? false : options.run,
  };
}
