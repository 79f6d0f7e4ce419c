/**
 * Opens everything a session needs, in the order the walls require: settings, workspace, state
 * folders, the trust map (asking the first-use question once), references, audit log, the
 * effect worker with its narrowed permissions, and the policy layer on top. Nothing is sent
 * to any model here.
 */
import { ensurePrivateDir } from "../state/dirs.ts";
import {
  newSessionId,
  type SessionPaths,
  sessionPaths,
  statePaths,
} from "../state/session_paths.ts";
import type { Settings } from "../state/settings.ts";
import { SessionState } from "../state/session_state.ts";
import { openWorkspace, type Workspace } from "../policy/workspace.ts";
import { loadTrustMap, normaliseRuleDir, updateTrustMap } from "../policy/trust_map.ts";
import { RefTable } from "../policy/refs.ts";
import { AuditLog } from "../policy/audit.ts";
import { PrivatePaths } from "../policy/private.ts";
import { VouchStore } from "../policy/vouches.ts";
import { Policy } from "../policy/core.ts";
import type { ApprovalsFile } from "../policy/approvals_file.ts";
import type { Person } from "../person/person.ts";
import { EffectWorker, type WallChoice } from "../worker/client.ts";
import { poolSize } from "../worker/pool.ts";

export interface OpenOptions {
  workspaceDir: string;
  stateDir: string;
  settings: Settings;
  person: Person;
  approvals: ApprovalsFile | null;
  oneShot: boolean;
  /** Resume this session id instead of starting a new one. */
  resume?: string;
  /** Forces the effect worker's wall (the bench compares them); a session leaves it `auto`. */
  wall?: WallChoice;
}

export interface OpenSession {
  workspace: Workspace;
  paths: SessionPaths;
  policy: Policy;
  state: SessionState;
  /** Problems found while loading state (corrupt files set aside), to show the person. */
  problems: string[];
  close(): void;
}

export async function openSession(options: OpenOptions): Promise<OpenSession> {
  const workspace = await openWorkspace(options.workspaceDir, options.stateDir);
  const state = statePaths(options.stateDir, workspace.root);
  const id = options.resume ?? newSessionId();
  const paths = sessionPaths(state, id);
  await ensurePrivateDir(paths.dir);
  await ensurePrivateDir(paths.scratch);
  const problems: string[] = [];

  const loaded = await loadTrustMap(state.trustFile, workspace.root);
  if (loaded.problem) problems.push(loaded.problem);
  let trust = loaded.map;
  const answer = trust.firstUse === null && options.person.interactive
    ? await options.person.firstUse(workspace.root)
    : null;
  if (answer === null || answer.choice === "unanswered") {
    if (answer) {
      problems.push(
        "the trust question was left unanswered: nothing is trusted this time, and it is asked again",
      );
    }
  } else {
    const answered = await updateTrustMap(state.trustFile, workspace.root, (map) => {
      map.applyFirstUse(answer.choice);
      if (answer.choice !== "custom") return;
      for (const d of answer.trusted) {
        const dir = normaliseRuleDir(d);
        if (dir.ok) map.setRule(dir.value, true);
      }
      for (const d of answer.untrusted) {
        const dir = normaliseRuleDir(d);
        if (dir.ok) map.setRule(dir.value, false);
      }
    });
    if (answered.problem) problems.push(answered.problem);
    trust = answered.map;
  }

  const { table: refs, problems: refProblems } = await RefTable.open(paths.dir);
  problems.push(...refProblems);
  const audit = new AuditLog(paths.audit, id);
  const scratch = await Deno.realPath(paths.scratch);
  const worker = EffectWorker.start(
    {
      workspace: workspace.root,
      scratch,
      run: options.settings.runPrograms ?? true,
    },
    poolSize(),
    options.wall,
  );
  const { policy, problems: unbound } = await Policy.open({
    workspace,
    worker,
    person: options.person,
    refs,
    audit,
    privatePaths: new PrivatePaths(options.settings.privatePatterns),
    trust,
    trustFile: state.trustFile,
    approvals: options.approvals,
    scratch,
    vouches: VouchStore.at(state.vouchesFile, workspace.root),
  });
  problems.push(...unbound);
  return {
    workspace,
    paths,
    policy,
    state: new SessionState(id, options.oneShot),
    problems,
    close: () => worker.terminate(),
  };
}
