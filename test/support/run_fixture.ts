/**
 * A policy layer whose effect worker may start programs, for testing run, read_output and
 * shell mode: like policy_fixture.ts (whose tree helpers it reuses), plus a vouch store kept in
 * the temporary state directory, a config for the settings, and a folder outside the workspace
 * to check that nothing escaped into it.
 */
import { join } from "node:path";
import { Policy } from "../../src/policy/core.ts";
import { AuditLog } from "../../src/policy/audit.ts";
import { PrivatePaths } from "../../src/policy/private.ts";
import { RefTable } from "../../src/policy/refs.ts";
import { normaliseRuleDir, TrustMap } from "../../src/policy/trust_map.ts";
import { openWorkspace } from "../../src/policy/workspace.ts";
import { VouchStore } from "../../src/policy/vouches.ts";
import type { ApprovalsFile } from "../../src/policy/approvals_file.ts";
import type { Person } from "../../src/person/person.ts";
import { type ScriptedAnswer, ScriptedPerson } from "../../src/person/scripted.ts";
import { EffectWorker } from "../../src/worker/client.ts";
import type { Config } from "../../src/state/config.ts";
import { type Settings, settingsFrom } from "../../src/state/settings.ts";
import { SessionState } from "../../src/state/session_state.ts";
import type { ToolContext, ToolDef, ToolOutput } from "../../src/tools/tool.ts";
import { hashTree, writeTree } from "./policy_fixture.ts";

export interface RunFixtureOptions {
  files?: Record<string, string | Uint8Array>;
  /** Files to make executable (workspace-relative). */
  executables?: string[];
  trust?: Record<string, boolean>;
  person?: Person;
  answers?: ScriptedAnswer[];
  approvals?: ApprovalsFile | null;
  config?: Config;
  /** Overrides of the §14 limits (a small output cap for the flood test). */
  limits?: Partial<Settings["limits"]>;
}

export interface RunFixture {
  root: string;
  stateDir: string;
  /** A folder outside the workspace and the scratch folder. */
  outside: string;
  scratch: string;
  vouchesFile: string;
  policy: Policy;
  person: Person;
  scripted: ScriptedPerson | null;
  settings: Settings;
  ctx: ToolContext;
  call(tool: ToolDef<never>, args: unknown): Promise<ToolOutput>;
  treeHash(): Promise<string>;
}

const noProcessor = {
  complete(): Promise<string> {
    return Promise.reject(new Error("no processor in this test"));
  },
};

export async function withRunPolicy(
  options: RunFixtureOptions,
  fn: (fx: RunFixture) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-run-ws-" }));
  const stateDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-run-state-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-run-outside-" }));
  const scratch = join(stateDir, "scratch");
  await Deno.mkdir(scratch);
  let worker: EffectWorker | null = null;
  try {
    await writeTree(root, options.files ?? {});
    for (const rel of options.executables ?? []) await Deno.chmod(join(root, rel), 0o755);
    const workspace = await openWorkspace(root, stateDir, { caseInsensitive: false });
    const trust = new TrustMap(root);
    trust.firstUse = "custom";
    for (const [dir, trusted] of Object.entries(options.trust ?? { ".": true })) {
      const d = normaliseRuleDir(dir);
      if (!d.ok) throw new Error(d.error);
      trust.setRule(d.value, trusted);
    }
    const scripted = options.person ? null : new ScriptedPerson(options.answers ?? []);
    const person = options.person ?? scripted!;
    worker = EffectWorker.start({ workspace: root, scratch, run: true });
    const vouchesFile = join(stateDir, "vouches.json");
    const policy = new Policy({
      workspace,
      worker,
      person,
      refs: RefTable.inMemory(),
      audit: new AuditLog(null, "test-session"),
      privatePaths: new PrivatePaths([]),
      trust,
      trustFile: null,
      approvals: options.approvals ?? null,
      scratch,
      vouches: VouchStore.at(vouchesFile, root),
    });
    const base = settingsFrom(options.config ?? {});
    const settings: Settings = { ...base, limits: { ...base.limits, ...options.limits } };
    const ctx: ToolContext = {
      policy,
      settings,
      session: new SessionState("test-session", !person.interactive),
      processor: noProcessor,
      emit: () => {},
    };
    await fn({
      root,
      stateDir,
      outside,
      scratch,
      vouchesFile,
      policy,
      person,
      scripted,
      settings,
      ctx,
      async call(tool, args) {
        const parsed = tool.schema.safeParse(args);
        if (!parsed.success) {
          return {
            content: `error: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
            isError: true,
            label: { integrity: "T", confidentiality: "pub" },
          };
        }
        return await (tool as ToolDef<unknown>).handler(parsed.data, ctx);
      },
      treeHash: () => hashTree(root),
    });
  } finally {
    worker?.terminate();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(stateDir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
}

/** A script that prints its arguments as JSON: how a test sees the exact argv a program got. */
export const ARGV_SCRIPT = "process.stdout.write(JSON.stringify(process.argv.slice(2)));\n";
