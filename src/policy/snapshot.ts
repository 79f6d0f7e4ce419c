/**
 * What a snapshot of the workspace holds (run_changes.ts compares two): plain types, in a module
 * of their own so that the session's run state (session_memory.ts) can hold one without
 * importing the rules.
 */
import type { FileId } from "../worker/protocol.ts";

export interface SnapshotEntry {
  kind: string;
  key: string;
  /** The size the snapshot saw (bytes). */
  size: number;
  ctimeMs: number;
  /** The device and inode the snapshot saw (null where the system gives no inode). */
  id: FileId | null;
}

export interface Snapshot {
  readonly entries: ReadonlyMap<string, SnapshotEntry>;
  /** Every entry outside the blind folders was recorded (no bound was met). */
  readonly recordedAll: boolean;
  /** Every folder outside the blind folders was recorded. */
  readonly foldersRecorded: boolean;
  /** Folders nothing beneath which is known (`.`: the root). */
  readonly blind: readonly string[];
}
