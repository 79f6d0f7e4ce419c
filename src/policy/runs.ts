/**
 * A `run`, carried out (docs/tools.md#run; docs/contract.md §3.3, §4.3, §8, §12.1, §13):
 * {@link carryOutRun} is the whole of a `run` for the tool. It prepares the run (run_prepare.ts), plans
 * the sandbox, decides (run_evaluate.ts), has the effect worker spawn the pipeline, finds the files
 * it changed, keeps the output and returns what became of it. The planner's system-prompt line of
 * the commands that run unasked is run_unasked.ts.
 */
import {
  changesLine,
  compareSnapshots,
  fingerprintFiles,
  hotFingerprints,
  hotToHashAgain,
  recordRunChanges,
  type RunChanges,
  runStart,
  type Snapshot,
} from "./run_changes.ts";
import { takeSnapshot } from "./snapshot_parts.ts";
import {
  closeLeftoverWatch,
  leftoverWatchSince,
  openLeftoverWatch,
  runCgroup,
} from "./leftovers.ts";
import type {
  Asking,
  BoundCommandRules,
  ChangeRecords,
  Deciding,
  FileLabels,
  Recording,
  RunMemory,
  Vouches,
  WorkspaceFiles,
} from "./capabilities.ts";
import { type Integrity, type Label, label } from "../util/label.ts";
import { childEnv } from "./programs.ts";
import { keepOutput, statusLines, stopLine } from "./outputs.ts";
import { personWatch, type Watch } from "./watch.ts";
import { type ConfinementPlan, planConfinement, type Spawner, stageWrapper } from "./sandbox.ts";
import type { Settings } from "../state/settings.ts";
import type { SpawnCgroup, SpawnRequest, SpawnStage } from "../worker/protocol.ts";
import type { Result } from "../util/result.ts";
import { doneLine, seatAt, settle, type Settled, type Terms } from "./verdict.ts";
import { displayPipeline, prepareRun, type RunInput, stdinBytes } from "./run_prepare.ts";
import { decideRun } from "./run_evaluate.ts";
import { keepBeforeRun } from "./run_keep.ts";

// What the tool's port names of a run, from the step that defines it.
export { MAX_STAGES, RUN_TIMEOUT_SECONDS } from "./run_prepare.ts";
export type { RunInput, StageInput } from "./run_prepare.ts";
export { commandsRunUnasked } from "./run_unasked.ts";

/** A run's output reference as the tool names it: metadata, never the bytes. */
export interface OutputRef {
  id: number;
  size: number;
  lines: number;
  label: Label;
}

/**
 * What became of a run, for the tool to render. Only `ran` started anything; every other
 * outcome ran nothing, and the one that failed to start says which stage, as the planner typed
 * it (the resolved path may be an untrusted name behind a link).
 */
export type RunOutcome =
  /** The request or the configured confinement cannot run; nobody was asked. */
  | { outcome: "invalid"; reason: string }
  /** Refused or declined (by rule, the policy file or the person). */
  | { outcome: "refused"; reason: string }
  /** Allowed, but the stdin reference's bytes could not be read. */
  | { outcome: "stdin unreadable"; reason: string }
  | {
    outcome: "not started";
    /** The stage that failed (0-based) and its program as typed, when the worker named one. */
    stage: { index: number; typed: string } | null;
    /** The kind of failure (`NotFound`, `PermissionDenied`, `NotCapable`, …). */
    cause: string;
  }
  | {
    outcome: "ran";
    /** Each stage's program as the planner typed it. */
    typed: string[];
    vouched: boolean;
    /** Run inside the configured sandbox. */
    confined: boolean;
    /** Exit status, duration, byte counts, cut or timed out: metadata the planner is shown. */
    status: string[];
    /**
     * How the last stage ended and, when the person stopped it, how (both in `status` too): for
     * the person's summary line.
     */
    ended: {
      code: number | null;
      signal: string | null;
      timedOut: boolean;
      stopped: string | null;
    };
    ref: OutputRef;
    /** The label the output carries. */
    label: Label;
    /** A trusted output's capped text, which the planner is shown; null otherwise. */
    shown: { text: string; omitted: number } | null;
  };

/** The effect worker as the sandbox probe's spawner: one per session, so the probe runs once. */
function workerSpawner(policy: WorkspaceFiles & RunMemory): Spawner {
  let spawner = policy.runState.spawner;
  if (!spawner) {
    spawner = async (request) => {
      const r = await policy.worker.call({ op: "spawn", request });
      return r.ok ? r : { ok: false, error: `${r.error.name}: ${r.error.message}` };
    };
    policy.runState.spawner = spawner;
  }
  return spawner;
}

/** What a spawn is asked for beyond what every spawn gets; absent or null: none of it. */
export interface SpawnAsk {
  stages: SpawnStage[];
  stdin: Uint8Array | null;
  timeoutMs: number;
  /** Variables beyond a stage's short environment (a shell line's `SHELL`). */
  env?: Record<string, string>;
  /** The person watching it print, if anyone is. */
  watching: Watch | null;
  /** A confined run's bwrap prefix, and where a stop's signals go inside the box. */
  wrapper?: string[] | null;
  wrapperGroup?: { reader: string } | null;
  /** An unconfined run's cgroup folder of its own. */
  cgroup?: SpawnCgroup | null;
}

/**
 * The one spawn request, for a run and a shell line alike (docs/contract.md §9, §13.4): in the
 * workspace, with a stage's short environment (never the API key), output capped at the reference's
 * bound, streamed to the person when they watch.
 */
export function spawnRequest(
  at: { workspace: { root: string }; scratch: string },
  settings: Pick<Settings, "limits">,
  ask: SpawnAsk,
): SpawnRequest {
  return {
    stages: ask.stages,
    stdin: ask.stdin,
    cwd: at.workspace.root,
    env: { ...childEnv(at.scratch), ...ask.env },
    timeoutMs: ask.timeoutMs,
    maxOutputBytes: settings.limits.refOutputBytes,
    ...(ask.wrapper ? { wrapper: ask.wrapper } : {}),
    ...(ask.wrapperGroup ? { wrapperGroup: ask.wrapperGroup } : {}),
    ...(ask.watching ? { streamBytes: ask.watching.streamBytes } : {}),
    ...(ask.cgroup ? { cgroup: ask.cgroup } : {}),
  };
}

/**
 * The workspace as it is now, within the settings' bounds; with `since` (after a run, its start)
 * the entries changed since come back past the first bound. A snapshot that failed knows nothing.
 */
async function snapshotWorkspace(
  policy: WorkspaceFiles,
  settings: Settings,
  since?: number,
): Promise<Snapshot> {
  const { snapshotEntries, snapshotChanges, snapshotMarks } = settings.limits;
  return await takeSnapshot(policy.worker.pool, {
    root: policy.workspace.root,
    skip: [...policy.workspace.protectedDirs],
    maxEntries: snapshotEntries,
    maxChanges: snapshotChanges,
    maxMarks: snapshotMarks,
    ...(since !== undefined ? { since: Math.floor(since / 1000) * 1000 } : {}),
  });
}

/**
 * Files a run created or changed carry its label (docs/contract.md §13.5): `T` only when the whole
 * command was vouched, every stdin was `T` and the planner context is `T`; recorded, and audited
 * when anything changed.
 */
async function recordChanges(
  policy: ChangeRecords & FileLabels & Asking & Recording & WorkspaceFiles,
  changes: RunChanges,
  integrity: Integrity,
  command: string,
): Promise<void> {
  const { created, changed, unsure, removed, blind, complete } = changes;
  const touched = created.length + changed.length + unsure.length + removed.length;
  if (touched === 0 && blind.length === 0 && complete) return;
  await recordRunChanges(policy, changes, integrity);
  await settle(
    ranLine(
      command,
      "files changed by the run",
      `${created.length} created, ${changed.length + unsure.length} changed, ` +
        `${removed.length} removed${complete ? "" : " (snapshot partial)"}` +
        (blind.length ? `, ${blind.length} folders not seen into` : ""),
      { files: label(integrity, "pub") },
    ),
    seatAt(policy),
  );
}

/** A line an allowed run leaves by rule: what it changed, or that it could not start. */
function ranLine(
  command: string,
  decision: string,
  reason: string,
  labels: Record<string, Label> = {},
): Settled<Terms> {
  return doneLine({
    tool: "run",
    routing: { pipeline: command },
    labels,
    decision,
    by: "rule",
    reason,
  });
}

/**
 * How this session's run stages are confined (docs/contract.md §13.4): planned once a session (PATH
 * looked up, bwrap probed), then asked by each run and by the session at its start, which tells
 * the person when runs will not be confined.
 */
export function sessionConfinement(
  policy: WorkspaceFiles & RunMemory,
  settings: Settings,
): Promise<Result<ConfinementPlan>> {
  // Planned once a session for each configuration: finding bwrap and cat on PATH and probing
  // bwrap need not be done again at every run.
  const key = JSON.stringify([settings.sandbox, settings.runWritable, settings.runNetwork]);
  const known = policy.runState.confinement;
  let plan = known.get(key);
  if (!plan) {
    const hide = policy.workspace.protectedDirs;
    plan = planConfinement(
      settings,
      { workspace: policy.workspace.root, scratch: policy.scratch, hide },
      workerSpawner(policy),
    );
    known.set(key, plan);
  }
  return plan;
}

/**
 * The planner's reason when the configured confinement cannot stand: `run.sandbox: "bwrap"` and
 * bwrap cannot confine, or bwrap cannot hide what it must (in `auto` too).
 */
const BWRAP_REFUSED =
  "bwrap cannot confine commands here; nothing was run (the person was told why)";

/**
 * A whole `run`: prepares it, plans the sandbox, decides (asking the person when §8 says so),
 * reads the stdin, has the effect worker spawn the pipeline and keeps the output as a
 * reference. Every audit entry of the run is written here or in what it calls.
 */
export async function carryOutRun(
  policy: Deciding & ChangeRecords & Vouches & BoundCommandRules & RunMemory,
  settings: Settings,
  input: RunInput,
): Promise<RunOutcome> {
  const prepared = await prepareRun(policy, settings, input);
  if (!prepared.ok) return { outcome: "invalid", reason: prepared.error };
  const run = prepared.value;

  // A configured wall that cannot stand refuses the run before the person is bothered.
  const plan = await sessionConfinement(policy, settings);
  if (!plan.ok) {
    // Why bwrap fails can quote bwrap itself and real paths: the person's to read, not the
    // planner's, as an endpoint's own words are (docs/contract.md §3.5); the planner gets the fact
    // in our words.
    policy.person.notice(plan.error);
    return { outcome: "invalid", reason: BWRAP_REFUSED };
  }

  const decision = await decideRun(policy, run, plan.value);
  if (!decision.run) return { outcome: "refused", reason: decision.reason };
  const confined = plan.value.confined && !decision.unconfined ? plan.value : null;
  // Found again for each run: the host's sockets of now (sandbox.ts).
  const wrapped = confined ? await stageWrapper(confined) : null;
  if (wrapped && !wrapped.ok) {
    policy.person.notice(wrapped.error);
    await settle(
      ranLine(displayPipeline(run.stages), "failed to start", wrapped.error),
      seatAt(policy),
    );
    return { outcome: "invalid", reason: BWRAP_REFUSED };
  }
  const wrapper = wrapped?.value ?? null;

  let stdin: Uint8Array | null = null;
  if (run.stdin) {
    const bytes = await stdinBytes(policy, run.stdin.ref);
    if (!bytes.ok) return { outcome: "stdin unreadable", reason: bytes.error };
    stdin = bytes.value;
  }

  const command = displayPipeline(run.stages);
  // Unconfined, the run gets a cgroup folder of its own where one can be made (leftovers.ts).
  const cgroup = confined ? null : (await runCgroup(policy, workerSpawner(policy))).cgroup;
  // What the stages may write is found by comparing the workspace before and after (§13). The
  // snapshot before also closes the watch on a previous unconfined run's leftovers, so it keeps
  // what changed since that run even past its bound.
  const before = await snapshotWorkspace(policy, settings, leftoverWatchSince(policy));
  await closeLeftoverWatch(policy, before);
  // The bytes of the files it may change, for /undo (run_keep.ts), from the same walk.
  const fresh = new Set<string>();
  const keptBefore = await keepBeforeRun(policy, before, fresh);
  // At once when the files changed in this second are hashed (what the keep read is reused),
  // else in the next second (run_changes.ts).
  const start = await runStart(
    before,
    (files) => hotFingerprints(policy, files, keptBefore, fresh),
  );
  const { startMs } = start;
  // The person who approved the command sees it print, whatever the planner is shown (§15).
  const watching = personWatch(policy, decision.by === "person");
  const spawned = await policy.worker.call({
    op: "spawn",
    request: spawnRequest(policy, settings, {
      stages: run.stages.map((s) => ({ program: s.resolved, args: [...s.injected, ...s.args] })),
      stdin,
      timeoutMs: run.timeoutMs,
      watching,
      wrapper,
      wrapperGroup: confined?.wrapperGroup ?? null,
      cgroup,
    }),
  }, watching?.onProgress);
  // Files carry the run's label (§13), whether it ran or a later stage could not start.
  const filesLabel = policy.contextTainted ? "U" : decision.outputLabel.integrity;
  const afterBegun = Date.now();
  const after = await snapshotWorkspace(policy, settings, startMs);
  // A hot file whose key did not move is told changed by its bytes and mode.
  const hot = start.hot === null ? undefined : {
    before: start.hot,
    after: await fingerprintFiles(policy, hotToHashAgain(start.hot, before, after)),
  };
  const changes = { ...compareSnapshots(before, after, startMs, hot), kept: keptBefore };
  await recordChanges(policy, changes, filesLabel, command);
  // Unconfined, and not every process it started known to be gone: the watch stands.
  if (!confined && !(spawned.ok && spawned.value.cgroupEnded === true)) {
    openLeftoverWatch(policy, {
      since: startMs,
      integrity: filesLabel,
      after,
      afterBegun,
      command,
      ...(changes.steady ? { steady: changes.steady } : {}),
    });
  }
  if (!spawned.ok) {
    const { name, message, stage } = spawned.error;
    await settle(ranLine(command, "failed to start", `${name}: ${message}`), seatAt(policy));
    const failed = stage !== undefined ? run.stages[stage] : undefined;
    return {
      outcome: "not started",
      stage: failed ? { index: stage!, typed: failed.typed } : null,
      cause: name,
    };
  }
  const result = spawned.value;
  watching?.end(result);
  const kept = await keepOutput(
    policy,
    settings,
    result,
    decision.outputLabel,
    command,
    "run",
    run.stdin?.ref ?? null,
  );
  const { ref } = kept;
  const filesLine = changesLine(changes);
  return {
    outcome: "ran",
    typed: run.stages.map((s) => s.typed),
    vouched: decision.vouched,
    confined: wrapper !== null,
    status: [
      ...statusLines(result, run.timeoutMs, settings.limits.refOutputBytes, kept),
      ...(filesLine ? [filesLine] : []),
    ],
    ended: {
      code: result.code,
      signal: result.signal,
      timedOut: result.timedOut,
      stopped: stopLine(result.stopSignals),
    },
    ref: { id: ref.id, size: ref.size ?? 0, lines: ref.lines ?? 0, label: ref.label },
    label: decision.outputLabel,
    shown: kept.shown,
  };
}
