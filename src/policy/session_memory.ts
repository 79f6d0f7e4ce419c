/**
 * What a session keeps beyond its trust map, in objects the session owns: the composition root
 * (session/compose.ts) makes one of each per session, and the capabilities `RunMemory` and
 * `EgressMemory` carry them. Not module globals: two sessions in one process share nothing.
 *
 * The sandbox's probe cache stays keyed by its spawner (sandbox.ts): each session's spawner is
 * made once, here, so the probe runs once a session all the same.
 */
import type { ConfinementPlan, Spawner } from "./sandbox.ts";
import type { SpawnCgroup } from "../worker/protocol.ts";
import type { Integrity } from "../util/label.ts";
import type { Result } from "../util/result.ts";
import type { Snapshot } from "./snapshot.ts";

/** Whether unconfined runs are gathered in a cgroup here, or why not (for the person). */
export type RunCgroupPlan = { cgroup: SpawnCgroup } | { cgroup: null; why: string };

/** The watch on what an unconfined run may have left running (leftovers.ts). */
export interface OpenWatch {
  /** The run's start: files changed at or after it take its label. */
  since: number;
  integrity: Integrity;
  /** The snapshot after the run, and when it was begun. */
  after: Snapshot;
  afterBegun: number;
  command: string;
  /** Hot files the run left as they were, by fingerprint (run_changes.ts `RunChanges.steady`). */
  steady?: ReadonlyMap<string, string>;
}

/** What this session's runs learned once and keep, and the leftovers watch between runs. */
export class RunState {
  /** The effect worker as the sandbox probe's spawner: made once, so the probe runs once. */
  spawner: Spawner | null = null;
  /** The confinement planned for each configuration (runs.ts `sessionConfinement`). */
  readonly confinement = new Map<string, Promise<Result<ConfinementPlan>>>();
  /** The cgroup folder unconfined runs are made in, found and tried once (leftovers.ts). */
  cgroup: Promise<RunCgroupPlan> | null = null;
  /** Open after an unconfined run whose processes were not all confirmed ended. */
  leftoverWatch: OpenWatch | null = null;
}

/** What the person said about sending values out: the SHA-256 of a value → whether it may go. */
export class EgressAnswers {
  readonly #said = new Map<string, boolean>();

  /** The answer given for these bytes earlier in the session; undefined: not asked yet. */
  get(sha256: string): boolean | undefined {
    return this.#said.get(sha256);
  }

  set(sha256: string, allowed: boolean): void {
    this.#said.set(sha256, allowed);
  }
}
