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
import {
  checkTrustableDir,
  loadTrustMap,
  normaliseRuleDir,
  PERSON_TRUST_WAIT,
  type TrustRule,
  updateTrustMap,
} from "../policy/trust_map.ts";
import { LockTimeout, type LockWait } from "../state/jsonfile.ts";
import type { AuditLog } from "../policy/audit.ts";
import { transcriptHasMessage } from "../state/transcript.ts";
import { type ComposedSession, composeSession } from "./compose.ts";
import type { ApprovalsFile } from "../policy/approvals_file.ts";
import type { FirstUseAnswer, Person } from "../person/person.ts";
import { EarlyWorker, EffectWorker, prepareKernelWall, type WallChoice } from "../worker/client.ts";
import type { WallOptions } from "../worker/permissions.ts";
import { VERSION } from "../version.ts";
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
  /** How the first-use answer waits for the trust map's lock (PERSON_TRUST_WAIT). */
  trustWait?: LockWait;
}

export interface OpenSession {
  workspace: Workspace;
  paths: SessionPaths;
  policy: ComposedSession["policy"];
  state: SessionState;
  /** Problems found while loading state (corrupt files set aside), to show the person. */
  problems: string[];
  /** What the session holds now, which decides whether {@link OpenSession.close} keeps it. */
  holds(): SessionHolds;
  /** Ends the effect worker; a new session that holds nothing is removed ({@link sessionHolds}). */
  close(): void;
}

/** A message (a session to go on with), an audit entry and no message, or nothing at all. */
export type SessionHolds = "messages" | "audit" | "nothing";

/**
 * A session is stored only once something happened in it (issue 25): a new session closed with
 * no message in its transcript and no entry in its audit log held nothing worth going back to,
 * and its folder goes — references, answers and scratch with it, which only a message or an
 * audited action could have filled. An audit entry keeps the session whatever else it holds (a
 * shell line at the first prompt is audited: its log is never lost). A session killed before
 * its first message leaves its folder; the listing counts it and never offers it.
 */
export function sessionHolds(paths: SessionPaths, audit: AuditLog): SessionHolds {
  if (transcriptHasMessage(paths.transcript)) return "messages";
  if (audit.entries.length > 0) return "audit";
  try {
    return Deno.statSync(paths.audit).size === 0 ? "nothing" : "audit";
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? "nothing" : "audit";
  }
}

/**
 * The rules a "let me choose directories" answer makes, checked as `trust add` and `untrust`
 * are: a name that is no rule directory, or a directory to trust that does not exist, is left
 * out and said.
 */
async function firstUseRules(
  root: string,
  answer: FirstUseAnswer,
  problems: string[],
): Promise<TrustRule[]> {
  if (answer.choice !== "custom") return [];
  const rules: TrustRule[] = [];
  const asked = [
    ...answer.trusted.map((d) => ({ d, trusted: true })),
    ...answer.untrusted.map((d) => ({ d, trusted: false })),
  ];
  for (const { d, trusted } of asked) {
    const dir = normaliseRuleDir(d);
    const checked = dir.ok && trusted ? await checkTrustableDir(root, dir.value) : dir;
    if (dir.ok && checked.ok) rules.push({ dir: dir.value, trusted });
    else if (!checked.ok) problems.push(`first use: a rule was left out: ${checked.error}`);
  }
  return rules;
}

/**
 * The workspace's trust map as this session starts with it: the first-use question asked where
 * the workspace is new and someone can answer (its problems added to `problems`).
 */
async function sessionTrust(
  options: OpenOptions,
  root: string,
  trustFile: string,
  problems: string[],
) {
  const loaded = await loadTrustMap(trustFile, root);
  if (loaded.problem) problems.push(loaded.problem);
  let trust = loaded.map;
  if (trust.firstUse === null && options.person.interactive) {
    const answer = await options.person.firstUse(root);
    if (answer.choice === "unanswered") {
      problems.push(
        "the first-use question was not answered: this session trusts nothing, and the " +
          "question is asked again next time",
      );
    } else {
      const choice = answer.choice;
      const rules = await firstUseRules(root, answer, problems);
      try {
        const answered = await updateTrustMap(trustFile, root, (map) => {
          map.applyFirstUse(choice);
          for (const r of rules) map.setRule(r.dir, r.trusted);
        }, options.trustWait ?? PERSON_TRUST_WAIT);
        if (answered.problem) problems.push(answered.problem);
        trust = answered.map;
      } catch (e) {
        if (!(e instanceof LockTimeout)) throw e;
        // As an interrupted answer: nothing stored, nothing trusted, asked again next time.
        problems.push(
          `the first-use answer could not be saved (${e.message}): this session trusts ` +
            "nothing, and the question is asked again next time",
        );
      }
    }
  }
  return trust;
}

export async function openSession(options: OpenOptions): Promise<OpenSession> {
  // The kernel wall's module cache while the rest opens, then its probe for this session's
  // places, covers and all, so what is probed is what the worker gets (issue 24).
  let placed: (places: WallOptions | null) => void = () => {};
  const places = new Promise<WallOptions | null>((resolve) => placed = resolve);
  const walls = options.wall === "process"
    ? Promise.resolve(null)
    : prepareKernelWall(options.stateDir, VERSION, places);
  let wallOptions: WallOptions | null = null;
  let id: string;
  let paths: ReturnType<typeof sessionPaths>;
  let workspace: Awaited<ReturnType<typeof openWorkspace>>;
  let state: ReturnType<typeof statePaths>;
  try {
    workspace = await openWorkspace(options.workspaceDir, options.stateDir);
    state = statePaths(options.stateDir, workspace.root);
    id = options.resume ?? newSessionId();
    paths = sessionPaths(state, id);
    await ensurePrivateDir(paths.dir);
    await ensurePrivateDir(paths.scratch);
    wallOptions = {
      workspace: workspace.root,
      scratch: await Deno.realPath(paths.scratch),
      run: options.settings.runPrograms ?? true,
      // The state, where it lies in the workspace: hidden from the worker on both walls.
      hide: workspace.protectedDirs,
    };
  } finally {
    placed(wallOptions); // null: the session did not open, and nothing is probed
  }
  const scratch = wallOptions.scratch;
  // The in-process Worker boots while the wall is probed and the trust map read (issue 24).
  const early = new EarlyWorker(wallOptions);
  // The pool starts as soon as the module cache is known, while the wall is probed (its requests
  // wait for the probe's answer: EffectWorker.startWhileProbed) and the trust map is read or
  // the first-use question waits for its answer: the worker's places do not depend on trust.
  const starting = walls.then((moduleCache) => {
    const placed = { ...wallOptions!, moduleCache };
    const worker = options.wall === undefined || options.wall === "auto"
      ? EffectWorker.startWhileProbed(placed, poolSize(), early)
      : EffectWorker.start(placed, poolSize(), options.wall, early);
    // The session's first run is its confinement probe (session/runtime.ts), right after this.
    worker.startSpawner();
    return worker;
  });
  const problems: string[] = [];
  let trust: Awaited<ReturnType<typeof sessionTrust>>;
  let worker: EffectWorker;
  try {
    trust = await sessionTrust(options, workspace.root, state.trustFile, problems);
    worker = await starting;
  } catch (e) {
    void starting.then((w) => w.terminate(), () => early.stop());
    throw e;
  }
  // The worker is started before the state it is composed with is read: a failure there ends it.
  const composed = composeSession({
    workspace,
    worker,
    person: options.person,
    trust,
    trustFile: state.trustFile,
    sessionId: id,
    auditFile: paths.audit,
    sessionDir: paths.dir,
    scratch,
    vouchesFile: state.vouchesFile,
    privatePatterns: options.settings.privatePatterns,
    approvals: options.approvals,
  }).catch((e) => {
    worker.terminate();
    throw e;
  });
  const { policy, problems: composing } = await composed;
  problems.push(...composing);
  const audit = policy.audit;
  // A resumed session had a message (only such a one is offered); only a new one can be empty.
  const holds = (): SessionHolds =>
    options.resume !== undefined ? "messages" : sessionHolds(paths, audit);
  return {
    workspace,
    paths,
    policy,
    state: new SessionState(id, options.oneShot),
    problems,
    holds,
    close: () => {
      worker.terminate();
      // The handles kept open between decisions (the trust map's version, the audit log).
      policy.releaseTrustFile();
      audit.close();
      if (holds() !== "nothing") return;
      try {
        Deno.removeSync(paths.dir, { recursive: true });
      } catch { /* left behind: never listed, as after a crash */ }
    },
  };
}
