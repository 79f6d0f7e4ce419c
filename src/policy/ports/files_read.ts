/**
 * The decisions read_file, list_files and search ask for: the slice of the tools' port (`../api.ts`) that those tools
 * call. Each method decides through the policy layer's rule functions and returns a value the
 * tool renders; none hands out the effect worker, the audit log or the planner context.
 */
import type {
  Asking,
  FileLabels,
  Recording,
  References,
  TrustChanges,
  WorkspaceFiles,
} from "../capabilities.ts";
import { decideReadFile, type FileRead, type ReadTarget } from "../read_file.ts";
import { decideListFiles, type Listing, type ListRequest } from "../list_files.ts";
import { decideSearch, type SearchRequest, type SearchResult } from "../search.ts";
import { type RoutedFile, routeFile } from "../routing.ts";
import type { Result } from "../../util/result.ts";

export { READ_FILE_MAX_BYTES } from "../read_file.ts";
export type { FileRead, ReadTarget } from "../read_file.ts";
export type { EntryKind, ListedEntry, ListedParent, Listing, ListRequest } from "../list_files.ts";
export type {
  SearchCounts,
  SearchFound,
  SearchMatch,
  SearchRequest,
  SearchResult,
} from "../search.ts";
export type { RoutedFile } from "../routing.ts";
export { oneTarget } from "../routing.ts";

export interface FilesReadPort {
  /**
   * Routes exactly one of `path` and `path_ref` to a file, with the name the planner may be
   * told it under (its own spelling, or `ref:N`). Shared by the file tools: write_file and
   * edit_file route their destination through it too. read_file need not call it: `readFile`
   * routes.
   */
  route(path: string | undefined, pathRef: string | undefined): Promise<Result<RoutedFile>>;
  /**
   * read_file: routes, labels, asks the quarantined-read prompt when the file is not trusted
   * and carries out the answer (a reference, the bytes as untrusted — the planner context is
   * tainted here — or a vouch), and records each decision.
   */
  readFile(target: ReadTarget): Promise<FileRead>;
  /**
   * list_files: walks the directory; each entry whose name may not be shown becomes its own
   * reference; records the decision.
   */
  listFiles(request: ListRequest): Promise<Listing>;
  /**
   * search: walks and searches on the effect workers, labels the result, and gives back the
   * findings with their label, or quarantines them whole (printed, `util/search_text.ts`) as one
   * reference and gives back the counts; records it.
   */
  search(request: SearchRequest): Promise<SearchResult>;
}

export function filesReadPort(
  policy: FileLabels & Asking & Recording & WorkspaceFiles & References & TrustChanges,
): FilesReadPort {
  return {
    route: (path, pathRef) => routeFile(policy, path, pathRef),
    readFile: (target) => decideReadFile(policy, target),
    listFiles: (request) => decideListFiles(policy, request),
    search: (request) => decideSearch(policy, request),
  };
}
