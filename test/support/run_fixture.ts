/**
 * A policy layer whose effect worker may start programs, for testing run, read_output and
 * shell mode: policy_fixture.ts's fixture with a vouch store kept in the temporary state
 * directory, a config for the settings, and a folder outside the workspace to check that
 * nothing escaped into it.
 */
import type { ApprovalsFile } from "../../src/policy/approvals_file.ts";
import type { Person, RunApprovalRequest } from "../../src/person/person.ts";
import type { ScriptedAnswer, ScriptedPerson } from "./scripted_person.ts";
import type { Config } from "../../src/state/config.ts";
import type { Settings } from "../../src/state/settings.ts";
import type { ToolContext, ToolDef, ToolOutput } from "../../src/tools/tool.ts";
import type { WorkerRequest } from "../../src/worker/protocol.ts";
import assert from "node:assert/strict";
import { type Fixture, withPolicy } from "./policy_fixture.ts";

export interface RunFixtureOptions {
  files?: Record<string, string | Uint8Array>;
  /** Files to make executable (workspace-relative). */
  executables?: string[];
  /** Symbolic links to make: workspace-relative link → target (as written in the link). */
  symlinks?: Record<string, string>;
  /** Trust-map rules; defaults to trusting the whole workspace. */
  trust?: Record<string, boolean>;
  person?: Person;
  answers?: ScriptedAnswer[];
  approvals?: ApprovalsFile | null;
  config?: Config;
  /** Overrides of the §14 limits (a small output cap for the flood test). */
  limits?: Partial<Settings["limits"]>;
  /** Runs before each request to the effect worker (policy_fixture.ts): a swap at a moment. */
  beforeCall?: (request: WorkerRequest) => Promise<void> | void;
  /** The workspace's owner from the start (policy_fixture.ts). */
  owner?: number;
  /** The session's folder (references, what it changed for `/undo`); default: in memory. */
  sessionDir?: string;
  /** Workspace-relative folders to treat as Brave Bot's state (policy_fixture.ts). */
  protect?: string[];
}

export interface RunFixture {
  root: string;
  stateDir: string;
  /** A folder outside the workspace and the scratch folder. */
  outside: string;
  scratch: string;
  vouchesFile: string;
  policy: Fixture["policy"];
  person: Person;
  scripted: ScriptedPerson | null;
  settings: Settings;
  ctx: ToolContext;
  call(tool: ToolDef<never>, args: unknown): Promise<ToolOutput>;
  treeHash(): Promise<string>;
}

/** Builds the fixture (one worker that may start programs), runs `fn`, and always cleans up. */
export async function withRunPolicy(
  options: RunFixtureOptions,
  fn: (fx: RunFixture) => Promise<void>,
): Promise<void> {
  await withPolicy({
    files: options.files,
    executables: options.executables,
    symlinks: options.symlinks,
    trust: options.trust ?? { ".": true },
    person: options.person,
    answers: options.answers,
    approvals: options.approvals,
    config: options.config,
    limits: options.limits,
    beforeCall: options.beforeCall,
    owner: options.owner,
    sessionDir: options.sessionDir,
    protect: options.protect,
    run: true,
    workers: 1,
    vouchesOnDisk: true,
    outside: true,
  }, (fx) =>
    fn({
      root: fx.root,
      stateDir: fx.stateDir,
      outside: fx.outside!,
      scratch: fx.scratch,
      vouchesFile: fx.vouchesFile!,
      policy: fx.policy,
      person: fx.person,
      scripted: fx.scripted,
      settings: fx.settings,
      ctx: fx.ctx,
      call: fx.call,
      treeHash: fx.treeHash,
    }));
}

/** A script that prints its arguments as JSON: how a test sees the exact argv a program got. */
export const ARGV_SCRIPT = "process.stdout.write(JSON.stringify(process.argv.slice(2)));\n";

/** The reference number a run's result names for its output. */
export function refOf(out: ToolOutput): number {
  const m = /(?:output: |kept as )ref:(\d+)/.exec(out.content);
  assert.ok(m, `no output reference in: ${out.content}`);
  return Number(m[1]);
}

/** The run approvals the scripted person was asked, in order. */
export function runRequests(fx: RunFixture): RunApprovalRequest[] {
  return fx.scripted!.asked.flatMap((a) => a.kind === "run" ? [a.request] : []);
}

/** Whether anything is at `path` (a link counts, whatever it points at). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
