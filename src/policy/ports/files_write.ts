/**
 * The decisions write_file and edit_file ask for: the slice of the tools' port (`../api.ts`) that those tools
 * call. Each method decides through the policy layer's rule functions and returns a value the
 * tool renders; none hands out the effect worker, the audit log or the planner context.
 */
import type { ChangeRecords, Deciding } from "../capabilities.ts";
import { writeFile, type WriteFileRequest, type WriteFileResult } from "../writes.ts";
import { editFile, type EditFileRequest, type EditFileResult } from "../edits.ts";

export type { WriteFileRequest, WriteFileResult, WriteRefusal } from "../writes.ts";
export type { EditFileRequest, EditFileResult } from "../edits.ts";

export interface FilesWritePort {
  /**
   * write_file, decided whole: the destination routed from the raw `path`/`path_ref` and
   * checked, the content resolved (`contents_ref`, or the planner's text with the planner
   * context's label), the person's approval of the diff, the hash-checked write, and one more
   * ask if the file changed meanwhile. Every audit entry and notice is the policy layer's.
   */
  writeFile(request: WriteFileRequest): Promise<WriteFileResult>;
  /**
   * edit_file, decided whole: as {@link writeFile}, with the new bytes made from the file's
   * current ones only if it is trusted text holding old_text once (or at all, with replace_all).
   */
  editFile(request: EditFileRequest): Promise<EditFileResult>;
}

export function filesWritePort(
  policy: Deciding & ChangeRecords,
): FilesWritePort {
  return {
    writeFile: (request) => writeFile(policy, request),
    editFile: (request) => editFile(policy, request),
  };
}
