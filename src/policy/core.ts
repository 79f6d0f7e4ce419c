/**
 * The policy layer's shared state and the decisions every tool needs: the label of a file or
 * a name, the planner context's label, routing through a path or a reference, what a write
 * does to the trust map, and the audit line for each decision. Tool-specific rules live beside
 * it (reads.ts, writes.ts, runs.ts, …); each rule is decided in exactly one place.
 */
import type { EffectWorker } from "../worker/client.ts";
import type { Person } from "../person/person.ts";
import type { ApprovalsFile } from "./approvals_file.ts";
import type { AuditEntry, AuditLog, Decider } from "./audit.ts";
import { formatLabel, joinLabels, type Label, label } from "../util/label.ts";
import { type CheckedEntry, openedAsChecked, resolvePath } from "./paths.ts";
import type { PrivatePaths } from "./private.ts";
import { type RefRecord, type RefTable } from "./refs.ts";
import {
  type FileEntry,
  type LeftoverWatch,
  loadTrustMap,
  normaliseRuleDir,
  type StoredTrust,
  type TrustMap,
  updateTrustMap,
} from "./trust_map.ts";
import { type LockWait, type Stamp, StampReader } from "../state/jsonfile.ts";
import type { Workspace } from "./workspace.ts";
import type { VouchStore } from "./vouches.ts";
import type { ChangeLog } from "./change_log.ts";
import { bindRules, type BoundRules, NO_RULES } from "./command_rules.ts";
import { err, ok, type Result } from "../util/result.ts";
import { oneTarget, type Routed } from "./routing.ts";
import type { EgressAnswers, RunState } from "./session_memory.ts";
import type {
  Asking,
  BoundCommandRules,
  EgressMemory,
  FileLabels,
  PlannerContext,
  Recording,
  References,
  RunControl,
  RunMemory,
  SessionChanges,
  TrustChanges,
  Vouches,
  WorkspaceFiles,
} from "./capabilities.ts";

export interface PolicyOptions {
  workspace: Workspace;
  worker: EffectWorker;
  person: Person;
  refs: RefTable;
  audit: AuditLog;
  privatePaths: PrivatePaths;
  /** The stored trust map (what `trust.json` holds). */
  trust: TrustMap;
  /**
   * The trust map's file: every change is applied to it under its lock, and the map is read
   * again whenever the file changed. Null: the map lives in memory only (tests).
   */
  trustFile: string | null;
  approvals?: ApprovalsFile | null;
  /** The session's scratch folder (absolute). */
  scratch: string;
  /** The workspace's vouched commands (docs/contract.md §8.6). */
  vouches: VouchStore;
  /** What the session changed, for `/diff` and `/undo`. */
  changes: ChangeLog;
  /** What this session's runs learned once, and the leftovers watch. */
  runState: RunState;
  /** What the person said about sending values out. */
  egressAnswers: EgressAnswers;
}

/**
 * The session's aggregate: it implements every capability (capabilities.ts) and is nothing more.
 * Only the composition root names it; every rule takes the capabilities it uses.
 */
export class Policy
  implements
    FileLabels,
    PlannerContext,
    Asking,
    Recording,
    WorkspaceFiles,
    References,
    TrustChanges,
    Vouches,
    BoundCommandRules,
    SessionChanges,
    RunControl,
    RunMemory,
    EgressMemory {
  readonly workspace: Workspace;
  readonly worker: EffectWorker;
  readonly person: Person;
  readonly refs: RefTable;
  readonly audit: AuditLog;
  readonly privatePaths: PrivatePaths;
  readonly approvals: ApprovalsFile | null;
  readonly scratch: string;
  readonly vouches: VouchStore;
  readonly changes: ChangeLog;
  readonly runState: RunState;
  readonly egressAnswers: EgressAnswers;
  /** The map decisions use: the stored one plus this run's `--approvals` rules. */
  trust: TrustMap;
  #stored: TrustMap;
  #trustFile: string | null;
  /** Stamps the trust map's file before each decision, its last version kept open. */
  #trustStamps: StampReader | null;
  #commandRules: BoundRules | null = null;
  /** The stamp of the file version #stored was read from; undefined: not compared yet. */
  #stamp: Stamp | null | undefined = undefined;
  /** Reloads and changes of the stored map, one at a time, so an older read never wins. */
  #trustQueue: Promise<unknown> = Promise.resolve();
  #problemListeners: ((problem: string) => void)[] = [];
  #leftovers: LeftoverWatch | null = null;
  #context: Label = label("T", "pub");
  #contextListeners: ((l: Label) => void)[] = [];

  /**
   * Opens the policy layer: the one way to make one, so that the approval policy file's commands
   * are bound to their programs before anything runs. Returns the entries that allow nothing,
   * for the person. Called only by the composition root (session/compose.ts).
   */
  static async open(options: PolicyOptions): Promise<{ policy: Policy; problems: string[] }> {
    const policy = new Policy(options);
    return { policy, problems: await policy.#bindCommandRules() };
  }

  private constructor(options: PolicyOptions) {
    this.workspace = options.workspace;
    this.worker = options.worker;
    this.person = options.person;
    this.refs = options.refs;
    this.audit = options.audit;
    this.privatePaths = options.privatePaths;
    this.approvals = options.approvals ?? null;
    this.scratch = options.scratch;
    this.vouches = options.vouches;
    this.changes = options.changes;
    this.runState = options.runState;
    this.egressAnswers = options.egressAnswers;
    this.#stored = options.trust;
    this.#trustFile = options.trustFile;
    this.#trustStamps = options.trustFile === null ? null : new StampReader(options.trustFile);
    this.trust = this.#overlay();
  }

  /** The stored map (without the `--approvals` rules), as last read from or written to its file. */
  get storedTrust(): TrustMap {
    return this.#stored;
  }

  #overlay(): TrustMap {
    const rules = [
      ...(this.approvals?.trust ?? []).map((d) => ({ d, trusted: true })),
      ...(this.approvals?.untrust ?? []).map((d) => ({ d, trusted: false })),
    ].flatMap(({ d, trusted }) => {
      const dir = normaliseRuleDir(d);
      return dir.ok ? [{ dir: dir.value, trusted }] : [];
    });
    const map = rules.length ? this.storedTrust.withOverlay(rules) : this.storedTrust;
    map.leftovers = this.#leftovers;
    return map;
  }

  /**
   * Opens (or, with null, closes) the watch on what an unconfined run may have left running
   * (policy/leftovers.ts): it stays on the map decisions use, across reloads of the stored one.
   */
  watchLeftovers(watch: LeftoverWatch | null): void {
    this.#leftovers = watch;
    this.trust = this.#overlay();
  }

  /**
   * Reads the stored map again if its file changed since this session read or wrote it
   * (another session's write, `bravebot trust` in another terminal), so the next label
   * decision is made on what the file holds. When nothing changed this is a stat of the path and
   * a short read through the handle of the version last stamped (StampReader). The
   * `--approvals` rules are laid on top again.
   */
  refreshTrust(): Promise<void> {
    const file = this.#trustFile;
    const stamps = this.#trustStamps;
    if (file === null || stamps === null) return Promise.resolve();
    return this.#queued(async () => {
      if (this.#stamp !== undefined && stamps.current() === this.#stamp) return;
      this.#adopt(await loadTrustMap(file, this.workspace.root));
    });
  }

  /**
   * Applies one change (a rule, a file entry) to the stored map. With a file, the change is
   * applied to the file as freshly read, under its lock, and this session takes up the result:
   * never a save of this session's whole copy, which would drop other sessions' changes.
   * `wait`: how the lock is waited for; by default the change waits until it lands (the record
   * of a write or of a run's changes), the person's own (`/trust`) gives up (PERSON_TRUST_WAIT).
   */
  changeTrust<R>(change: (map: TrustMap) => R, wait?: LockWait): Promise<R> {
    const file = this.#trustFile;
    if (file === null) {
      const result = change(this.#stored);
      this.trust = this.#overlay();
      return Promise.resolve(result);
    }
    return this.#queued(async () => {
      const updated = await updateTrustMap(file, this.workspace.root, change, wait);
      this.#adopt(updated);
      return updated.result;
    });
  }

  /** Lets the trust map's last version go (the session closes); a later refresh opens it again. */
  releaseTrustFile(): void {
    this.#trustStamps?.close();
  }

  /** Problems met with the stored state mid-session (a corrupt trust map set aside). */
  onStateProblem(listener: (problem: string) => void): void {
    this.#problemListeners.push(listener);
  }

  #adopt(stored: StoredTrust): void {
    this.#stored = stored.map;
    this.#stamp = stored.stamp;
    this.trust = this.#overlay();
    if (stored.problem) { for (const f of this.#problemListeners) f(stored.problem); }
  }

  #queued<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#trustQueue.then(fn);
    this.#trustQueue = next.catch(() => {});
    return next;
  }

  // ---- the approval policy file's commands (docs/cli.md#run; docs/contract.md §8.3) ----

  /**
   * Binds the approval policy file's `run` and `vouch` entries to the programs they name, as
   * they are now: once, when the run starts, before the planner can write anything.
   */
  async #bindCommandRules(): Promise<string[]> {
    const { rules, problems } = await bindRules(this, this.approvals);
    this.#commandRules = rules;
    return problems;
  }

  /** The bound entries; an unbound file with entries is a wiring bug, reported loudly. */
  get commandRules(): BoundRules {
    if (this.#commandRules) return this.#commandRules;
    if (!this.approvals?.run?.length && !this.approvals?.vouch?.length) return NO_RULES;
    throw new Error("the approval policy file's commands were not bound when the run started");
  }

  // ---- the planner context (docs/contract.md §4.1) ----

  get contextLabel(): Label {
    return this.#context;
  }

  /**
   * The label of whatever the planner writes — contents, new_text, an instruction, todos
   * (docs/contract.md §3.2): its context's label. Every place that labels the planner's words asks
   * this.
   */
  get plannerWords(): Label {
    return this.#context;
  }

  get contextTainted(): boolean {
    return this.#context.integrity === "U";
  }

  /** Joins a label into the planner context: called whenever bytes are placed in it. */
  placeInContext(l: Label): void {
    const before = this.#context;
    this.#context = joinLabels(this.#context, l);
    if (before !== this.#context) { for (const f of this.#contextListeners) f(this.#context); }
  }

  /** `/clear`: a new context, label back to `(T,pub)`. */
  clearContext(): void {
    this.#context = label("T", "pub");
    for (const f of this.#contextListeners) f(this.#context);
  }

  onContextChange(listener: (l: Label) => void): void {
    this.#contextListeners.push(listener);
  }

  // ---- labels of files and names (docs/contract.md §3.2) ----

  /**
   * The label of a file's content: integrity from the trust map, confidentiality by path. A
   * trust entry bound to a hash holds only if the file hashed is `at`, the entry as checked (by
   * default `rel`'s path, reached through no link): a hash of anything else is no hash at all.
   */
  async fileLabel(
    rel: string,
    at: CheckedEntry = { abs: this.#abs(rel), id: null },
  ): Promise<Label> {
    await this.refreshTrust();
    const integrity = await this.trust.fileIntegrity(rel, async () => {
      const h = await this.worker.call({ op: "hash", path: at.abs, identify: true });
      return h.ok && openedAsChecked(at, h.value.opened) ? h.value.sha256 : null;
    });
    return label(integrity, this.privatePaths.confidentialityOf(rel));
  }

  /** A file name carries the integrity of the directory that contains it. */
  nameLabel(dirRel: string): Label {
    return label(this.trust.ruleIntegrity(dirRel), "pub");
  }

  #abs(rel: string): string {
    return rel === "." ? this.workspace.root : `${this.workspace.root}/${rel}`;
  }

  // ---- routing: a path or a reference to a file ----

  /**
   * Resolves the routing of a file tool: exactly one of `path` and `path_ref`. A reference must
   * stand for a file (a quarantined file or a listing entry); output and answers are not places.
   */
  async route(path: unknown, pathRef: unknown): Promise<Result<Routed>> {
    const problem = oneTarget(path, pathRef);
    if (problem !== null) return err(problem);
    if (path !== undefined) {
      const resolved = await resolvePath(this.workspace, path);
      return resolved.ok ? ok({ path: resolved.value, viaRef: null }) : resolved;
    }
    const found = this.refs.lookup(pathRef);
    if (!found.ok) return found;
    const ref = found.value;
    if ((ref.kind !== "file" && ref.kind !== "file_name") || ref.path === undefined) {
      return err(`ref:${ref.id} is ${describeKind(ref)}, not a file; a path_ref must name a file`);
    }
    const resolved = await resolvePath(this.workspace, ref.path);
    if (!resolved.ok) return err(staleFileRef(ref));
    return ok({ path: resolved.value, viaRef: ref });
  }

  // ---- what writes and vouches do to the trust map (docs/contract.md §5.3, §6) ----

  /**
   * Records the written content's label on the file: `U` content marks it untrusted wherever
   * it is; `T` content marks it trusted (bound to the written bytes' hash), since the person
   * approved those exact bytes. Answers the file's entry before (null: none), for `/undo`.
   */
  async recordWrite(rel: string, written: Label, sha256: string): Promise<FileEntry | null> {
    const entry: FileEntry = written.integrity === "U"
      ? { integrity: "U", why: "write" }
      : { integrity: "T", sha256, why: "write" };
    return await this.changeTrust((map) => {
      const before = map.files.get(rel) ?? null;
      map.setFile(rel, entry);
      return before;
    });
  }

  /** A file vouch at the quarantined-read prompt: these bytes, as they are now, are trusted. */
  async vouchFile(rel: string, sha256: string): Promise<void> {
    await this.changeTrust((map) => map.setFile(rel, { integrity: "T", sha256, why: "vouch" }));
  }

  // ---- the audit log ----

  /** Appends a decision, with the context label, to the audit log. */
  async record(
    entry: Omit<AuditEntry, "labels"> & { labels?: Record<string, Label> },
  ): Promise<void> {
    const labels: Record<string, string> = { context: formatLabel(this.#context) };
    for (const [k, v] of Object.entries(entry.labels ?? {})) labels[k] = formatLabel(v);
    await this.audit.append({ ...entry, labels });
  }

  /**
   * Ctrl-C in a session: every run in progress is to stop. The effect worker sends SIGINT, then
   * SIGTERM, then SIGKILL, to the command itself (confined too), and a call while that is under
   * way goes straight to SIGKILL; the run's result says which signal ended it. Answers how many
   * were running.
   */
  async stopRuns(): Promise<number> {
    const stopped = await this.worker.call({ op: "stopSpawns" });
    return stopped.ok ? stopped.value.stopped : 0;
  }

  /**
   * Whether anybody can be asked: not in a one-shot run, where the policy layer declines (or the
   * approval policy file answers) and never guesses. Every "nobody can be asked" test is this one.
   */
  get canAsk(): boolean {
    return this.person.interactive;
  }

  /** Who decides when the person is asked: the person, the policy file, or nobody. */
  get asker(): Decider {
    return this.person.decider;
  }
}

/**
 * The error for a file reference whose path no longer resolves. The resolver's own reason is
 * not repeated: it quotes the path, and the planner was never shown that name.
 */
export function staleFileRef(ref: RefRecord): string {
  return `ref:${ref.id} no longer names a usable file (it was moved or removed, or now leads ` +
    "outside the workspace); its name is not shown";
}

/** Names a reference's kind in words, for error results. */
export function describeKind(ref: RefRecord): string {
  switch (ref.kind) {
    case "file":
      return "a quarantined file";
    case "file_name":
      return ref.entryType === "directory" ? "a directory from a listing" : "a file from a listing";
    case "file_content":
      return "content taken from files";
    case "command_output":
      return "a command's output";
    case "processor_answer":
      return "a processor's answer";
  }
}

/** Every capability, as one type: what the session's aggregate is. */
type AllCapabilities =
  & FileLabels
  & PlannerContext
  & Asking
  & Recording
  & WorkspaceFiles
  & References
  & TrustChanges
  & Vouches
  & BoundCommandRules
  & SessionChanges
  & RunControl
  & RunMemory
  & EgressMemory;

/**
 * `Policy` holds nothing beyond its capabilities: a public member added to it and to none of
 * them fails to compile here, so no rule can come to need the whole aggregate again.
 */
const _nothingBeyond: [Exclude<keyof Policy, keyof AllCapabilities>] extends [never] ? true
  : never = true;
