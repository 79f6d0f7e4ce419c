/**
 * The composition root: the one place a session's policy layer is made (issue 22). From plain
 * options it builds the reference table, the change log, the audit log, the private patterns,
 * the vouch store, the session's own state (run state, egress answers) and the `Policy` that
 * holds them, binding the approval policy file's commands before anything runs. A session
 * (open.ts), the `skills` subcommand and the test fixtures all come through here, so each is wired
 * the same way; everything else takes only the capabilities it uses (policy/capabilities.ts).
 */
import type { Workspace } from "../policy/workspace.ts";
import type { EffectWorker } from "../worker/client.ts";
import type { Person } from "../person/person.ts";
import type { ApprovalsFile } from "../policy/approvals_file.ts";
import type { TrustMap } from "../policy/trust_map.ts";
import { RefTable } from "../policy/refs.ts";
import { ChangeLog } from "../policy/change_log.ts";
import { AuditLog } from "../policy/audit.ts";
import { PrivatePaths } from "../policy/private.ts";
import { VouchStore } from "../policy/vouches.ts";
import { EgressAnswers, RunState } from "../policy/session_memory.ts";
import { Policy } from "../policy/core.ts";

export interface ComposeOptions {
  workspace: Workspace;
  worker: EffectWorker;
  person: Person;
  /** The trust map as loaded (after the first-use question, where it was asked). */
  trust: TrustMap;
  /** The trust map's file, changed under its lock; null: the map lives in memory only. */
  trustFile: string | null;
  /** The session's id, which every audit entry carries. */
  sessionId: string;
  /** The audit log's file; null: kept in memory only. */
  auditFile: string | null;
  /** The session's folder, where references and the change log are kept; null: memory only. */
  sessionDir: string | null;
  /** The session's scratch folder (absolute). */
  scratch: string;
  /** Where the workspace's vouches are kept; null: in memory only. */
  vouchesFile: string | null;
  /** The person's private patterns, beside the built-in ones. */
  privatePatterns?: readonly string[];
  approvals?: ApprovalsFile | null;
}

export interface ComposedSession {
  /** The session's aggregate: hand each rule and port the capabilities it takes. */
  policy: Policy;
  /** What loading the session's state met (files set aside, policy entries that allow nothing). */
  problems: string[];
}

export async function composeSession(options: ComposeOptions): Promise<ComposedSession> {
  const problems: string[] = [];
  let refs = RefTable.inMemory();
  let changes = ChangeLog.inMemory();
  if (options.sessionDir !== null) {
    const opened = await RefTable.open(options.sessionDir);
    problems.push(...opened.problems);
    refs = opened.table;
    const log = await ChangeLog.open(options.sessionDir);
    problems.push(...log.problems);
    changes = log.log;
  }
  const root = options.workspace.root;
  const { policy, problems: unbound } = await Policy.open({
    workspace: options.workspace,
    worker: options.worker,
    person: options.person,
    refs,
    audit: new AuditLog(options.auditFile, options.sessionId),
    privatePaths: new PrivatePaths(options.privatePatterns),
    trust: options.trust,
    trustFile: options.trustFile,
    approvals: options.approvals ?? null,
    scratch: options.scratch,
    vouches: options.vouchesFile === null
      ? VouchStore.inMemory(root)
      : VouchStore.at(options.vouchesFile, root),
    changes,
    runState: new RunState(),
    egressAnswers: new EgressAnswers(),
  });
  problems.push(...unbound);
  return { policy, problems };
}
