/**
 * The policy layer's capabilities: one small interface per concern of a session. A rule takes
 * the intersection of the ones it uses (`policy: FileLabels & Recording`), never the whole
 * session, so its signature says what it can reach and a test can hand it just that.
 * `Policy` (core.ts) implements them all; it is made in one place, the composition root
 * (`session/compose.ts`), and no other file names it (test/capabilities_test.ts).
 *
 * These are types only, over leaf modules, so that every rule may import them without a circle.
 */
import type { EffectWorker } from "../worker/client.ts";
import type { Person } from "../person/person.ts";
import type { ApprovalsFile } from "./approvals_file.ts";
import type { AuditEntry, AuditLog, Decider } from "./audit.ts";
import type { Label } from "../util/label.ts";
import type { CheckedEntry } from "./paths.ts";
import type { PrivatePaths } from "./private.ts";
import type { RefTable } from "./refs.ts";
import type { FileEntry, LeftoverWatch, TrustMap } from "./trust_map.ts";
import type { LockWait } from "../state/jsonfile.ts";
import type { Workspace } from "./workspace.ts";
import type { VouchStore } from "./vouches.ts";
import type { ChangeLog } from "./change_log.ts";
import type { BoundRules } from "./command_rules.ts";
import type { Result } from "../util/result.ts";
import type { Routed } from "./routing.ts";
import type { EgressAnswers, RunState } from "./session_memory.ts";

/**
 * The labels of files and names (contract §3): the trust map decisions use (the stored one with
 * this run's `--approvals` rules on top), read again when its file changed, and the private
 * patterns, and hearing of a stored map set aside when it is read again. Grants reading labels,
 * never changing them.
 */
export interface FileLabels {
  readonly trust: TrustMap;
  readonly privatePaths: PrivatePaths;
  /** A file's content label: integrity from the trust map (a hash checked), confidentiality by path. */
  fileLabel(rel: string, at?: CheckedEntry): Promise<Label>;
  /** A file name's label: the integrity of the directory that holds it. */
  nameLabel(dirRel: string): Label;
  /** Reads the stored map again if its file changed since this session read or wrote it. */
  refreshTrust(): Promise<void>;
  /** Problems met reading the stored map again mid-session (a corrupt file set aside). */
  onStateProblem(listener: (problem: string) => void): void;
  /** Lets the file version kept open for {@link refreshTrust} go (the session closes). */
  releaseTrustFile(): void;
}

/**
 * The planner context's label (contract §4): what it is, the label of the planner's words, and
 * the one way a label enters it. Grants raising (and, for `/clear`, resetting) the context label.
 */
export interface PlannerContext {
  readonly contextLabel: Label;
  /** The label of whatever the planner writes: its context's label. */
  readonly plannerWords: Label;
  readonly contextTainted: boolean;
  placeInContext(l: Label): void;
  clearContext(): void;
  onContextChange(listener: (l: Label) => void): void;
}

/**
 * Asking (contract §8): the person, whether anybody can be asked, who decides when they are, and
 * the approval policy file that answers when nobody can be. Grants putting questions and notices.
 */
export interface Asking {
  readonly person: Person;
  readonly canAsk: boolean;
  readonly asker: Decider;
  readonly approvals: ApprovalsFile | null;
}

/** The audit log (contract §12). Grants appending decisions, with the context label, and reading it. */
export interface Recording {
  readonly audit: AuditLog;
  record(entry: Omit<AuditEntry, "labels"> & { labels?: Record<string, Label> }): Promise<void>;
}

/**
 * The workspace and the effect worker that acts in it, the session's scratch folder, and the
 * routing of a file tool through a path or a reference. Grants every effect the worker performs.
 */
export interface WorkspaceFiles {
  readonly workspace: Workspace;
  readonly worker: EffectWorker;
  /** The session's scratch folder (absolute). */
  readonly scratch: string;
  route(path: unknown, pathRef: unknown): Promise<Result<Routed>>;
}

/** The session's reference table (contract §6). Grants looking up and adding references. */
export interface References {
  readonly refs: RefTable;
}

/**
 * Changing the stored trust map (contract §5): what a write and a file vouch record, any other
 * change under the file's lock, and the watch on an unconfined run's leftovers. Grants raising and
 * lowering files' integrity: only rules that record what happened take it.
 */
export interface TrustChanges {
  /** The stored map, without the `--approvals` rules. */
  readonly storedTrust: TrustMap;
  changeTrust<R>(change: (map: TrustMap) => R, wait?: LockWait): Promise<R>;
  recordWrite(rel: string, written: Label, sha256: string): Promise<FileEntry | null>;
  vouchFile(rel: string, sha256: string): Promise<void>;
  watchLeftovers(watch: LeftoverWatch | null): void;
}

/** The workspace's vouched commands (contract §8). Grants reading and adding vouches. */
export interface Vouches {
  readonly vouches: VouchStore;
}

/**
 * The approval policy file's `run` and `vouch` entries, bound to their programs when the run
 * started. Grants reading them.
 */
export interface BoundCommandRules {
  readonly commandRules: BoundRules;
}

/** What the session changed, for `/diff` and `/undo`. Grants reading and adding to the log. */
export interface SessionChanges {
  readonly changes: ChangeLog;
}

/** The runs in progress. Grants stopping them all (Ctrl-C). */
export interface RunControl {
  stopRuns(): Promise<number>;
}

/**
 * What this session's runs learned once (the probe's spawner, the confinement plans, the cgroup
 * folder) and the leftovers watch between runs. Grants reusing and replacing them.
 */
export interface RunMemory {
  readonly runState: RunState;
}

/** What the person said about sending values out this session. Grants reading and adding answers. */
export interface EgressMemory {
  readonly egressAnswers: EgressAnswers;
}

/**
 * What a tool call decides with: the labels, the planner context, asking, the audit log, the
 * workspace and the references. Named because most tools' whole path takes exactly this.
 */
export type Deciding =
  & FileLabels
  & PlannerContext
  & Asking
  & Recording
  & WorkspaceFiles
  & References;

/** What records a change made to the workspace: the trust map's entries and the change log. */
export type ChangeRecords = TrustChanges & SessionChanges;
