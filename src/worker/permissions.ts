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
