/**
 * The decisions write_file and edit_file ask for: the slice of the tools' port (`../api.ts`) that those tools
 * call. Each method decides through the policy layer's rule functions and returns a value the
 * tool renders; none hands out the effect worker, the audit log or the planner context.
 */
import type { Policy } from "../core.ts";

// deno-lint-ignore no-empty-interface
export interface FilesWritePort {}

export function filesWritePort(_policy: Policy): FilesWritePort {
  return {};
}
