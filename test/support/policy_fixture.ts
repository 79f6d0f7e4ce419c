/**
 * A whole policy layer over a temporary workspace, for testing tools and policy decisions
 * without a model or a terminal: real effect worker, in-memory references and audit log,
 * a trust map built from the rules given, and whichever Person the test chooses. With `run`,
 * `vouchesOnDisk` and `outside` it is also the base of run_fixture.ts (run, read_output, shell
 * mode).
 *
 * @example
 * ```ts
 * await withPolicy({ files: { "src/a.ts": "x" }, trust: { src: true } }, async (fx) => {
 *   const out = await fx.call(readFileTool, { path: "src/a.ts" });
 * });
 * ```
 */
import { dirname, join } from "node:path";
import { toolPolicy } from "../../src/policy/api.ts";
import { type ComposedSession, composeSession } from "../../src/session/compose.ts";
import { normaliseRuleDir, TrustMap } from "../../src/policy/trust_map.ts";
import { openWorkspace, type Workspace } from "../../src/policy/workspace.ts";
import type { ApprovalsFile } from "../../src/policy/approvals_file.ts";
import type { Person } from "../../src/person/person.ts";
import { type ScriptedAnswer, ScriptedPerson } from "./scripted_person.ts";
import { EffectWorker } from "../../src/worker/client.ts";
import type { WorkerRequest } from "../../src/worker/protocol.ts";
import { settingsFrom } from "../../src/state/settings.ts";
import type { Settings } from "../../src/state/settings.ts";
import { SessionState } from "../../src/state/session_state.ts";
import type { Config } from "../../src/state/config.ts";
import type { ToolContext, ToolDef, ToolOutput } from "../../src/tools/tool.ts";
import { sha256 } from "../../src/util/hash.ts";

export interface FixtureOptions {
  /** Workspace-relative path → contents; a path ending in `/` makes an empty directory. */
  files?: Record<string, string | Uint8Array>;
  /** Trust-map rules: directory → trusted; `"workspace"` applies the first-use default. */
  trust?: Record<string, boolean> | "workspace";
  /** Defaults to a ScriptedPerson with `answers`. */
  person?: Person;
  answers?: ScriptedAnswer[];
  approvals?: ApprovalsFile | null;
  privatePatterns?: string[];
  /** Workspace-relative folders to treat as Brave Bot's state (never reachable, never listed). */
  protect?: string[];
  /** Symbolic links to make: workspace-relative link → target (as written in the link). */
  symlinks?: Record<string, string>;
  /** Files to make executable (workspace-relative). */
  executables?: string[];
  /** The config the settings come from (defaults to an empty one). */
  config?: Config;
  /** Overrides of the §14 limits (a small output cap for the flood test). */
  limits?: Partial<Settings["limits"]>;
  /** Whether the effect worker may start programs (default false). */
  run?: boolean;
  /** How many effect workers to start (default 2, as a session starts). */
  workers?: number;
  /** Keep vouches in a file of the temporary state folder instead of in memory. */
  vouchesOnDisk?: boolean;
  /** Append the audit log to `audit.jsonl` in the temporary state folder, as a session does. */
  auditOnDisk?: boolean;
  /** Make a folder outside the workspace and the state folder, to check nothing escaped. */
  outside?: boolean;
  /** Which wall the effect worker stands behind (default: the kernel wall where it works). */
  wall?: "kernel" | "process";
  /**
   * Runs before each request is sent to the effect worker: a test can change the disk exactly
   * between the policy layer's check and the worker's act.
   */
  beforeCall?: (request: WorkerRequest) => Promise<void> | void;
  /**
   * The session's folder, where references and what the session changed (`/diff`, `/undo`) are
   * kept, as a resumed session finds them; default: both kept in memory.
   */
  sessionDir?: string;
  /**
   * Give the workspace and what it holds to this uid (and gid) before the worker starts: root
   * over another user's checkout, as a session meets it from its start.
   */
  owner?: number;
}

export interface Fixture {
  root: string;
  /** The temporary state folder (holds the scratch folder and, with `vouchesOnDisk`, vouches). */
  stateDir: string;
  scratch: string;
  /** The folder outside everything, when `outside` asked for it. */
  outside: string | null;
  /** Where vouches are kept, when `vouchesOnDisk` asked for it. */
  vouchesFile: string | null;
  workspace: Workspace;
  policy: ComposedSession["policy"];
  person: Person;
  /** The ScriptedPerson, when the fixture made one. */
  scripted: ScriptedPerson | null;
  ctx: ToolContext;
  settings: Settings;
  /** Every request sent to the effect worker, in order: what was opened, listed, written. */
  workerCalls: WorkerRequest[];
  /** Events the tools emitted to the person's screen. */
  emitted: { type: string; text: string }[];
  /** Validates with the tool's schema, as the driver does, then calls the handler. */
  call(tool: ToolDef<never>, args: unknown): Promise<ToolOutput>;
  write(rel: string, contents: string | Uint8Array): Promise<void>;
  read(rel: string): Promise<string>;
  /** A hash of every path, kind and content under the workspace: equal means nothing changed. */
  treeHash(): Promise<string>;
}

export async function writeTree(root: string, files: Record<string, string | Uint8Array>) {
  for (const [rel, contents] of Object.entries(files)) {
    const abs = join(root, rel);
    if (rel.endsWith("/")) {
      await Deno.mkdir(abs, { recursive: true });
      continue;
    }
    await Deno.mkdir(dirname(abs), { recursive: true });
    if (typeof contents === "string") await Deno.writeTextFile(abs, contents);
    else await Deno.writeFile(abs, contents);
  }
}

/** Every entry under `root` with its kind and content hash, sorted, hashed once more. */
export async function hashTree(root: string): Promise<string> {
  const rows: string[] = [];
  async function visit(dir: string, rel: string) {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
    entries.sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const abs = join(dir, e.name);
      if (e.isSymlink) rows.push(`L ${r} -> ${await Deno.readLink(abs)}`);
      else if (e.isDirectory) {
        rows.push(`D ${r}`);
        await visit(abs, r);
      } else rows.push(`F ${r} ${sha256(await Deno.readFile(abs))}`);
    }
  }
  await visit(root, "");
  return sha256(rows.join("\n"));
}

const noProcessor = {
  complete(): Promise<string> {
    return Promise.reject(new Error("no processor in this test"));
  },
};

/** Builds the fixture, runs `fn`, and always stops the worker and removes the temp folders. */
export async function withPolicy(
  options: FixtureOptions,
  fn: (fx: Fixture) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-fx-ws-" }));
  const stateDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-fx-state-" }));
  const outside = options.outside
    ? await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-fx-outside-" }))
    : null;
  const scratch = join(stateDir, "scratch");
  await Deno.mkdir(scratch);
  let worker: EffectWorker | null = null;
  try {
    await writeTree(root, options.files ?? {});
    for (const rel of options.executables ?? []) await Deno.chmod(join(root, rel), 0o755);
    for (const [link, target] of Object.entries(options.symlinks ?? {})) {
      await Deno.mkdir(dirname(join(root, link)), { recursive: true });
      await Deno.symlink(target, join(root, link));
    }
    if (options.owner !== undefined) {
      for await (const e of Deno.readDir(root)) {
        await Deno.chown(join(root, e.name), options.owner, options.owner);
      }
      await Deno.chown(root, options.owner, options.owner);
    }
    const opened = await openWorkspace(root, stateDir, { caseInsensitive: false });
    const workspace: Workspace = {
      ...opened,
      protectedDirs: [
        ...opened.protectedDirs,
        ...(options.protect ?? []).map((d) => join(root, d)),
      ],
    };
    const trust = new TrustMap(root);
    if (options.trust === "workspace") trust.applyFirstUse("workspace");
    else {
      trust.firstUse = "custom";
      for (const [dir, trusted] of Object.entries(options.trust ?? {})) {
        const d = normaliseRuleDir(dir);
        if (!d.ok) throw new Error(d.error);
        trust.setRule(d.value, trusted);
      }
    }
    const scripted = options.person ? null : new ScriptedPerson(options.answers ?? []);
    const person = options.person ?? scripted!;
    // A pool of two by default, as a session starts (a search splits its files across both).
    worker = EffectWorker.start(
      { workspace: root, scratch, run: options.run ?? false },
      options.workers ?? 2,
      options.wall ?? "auto",
    );
    const workerCalls: WorkerRequest[] = [];
    const beforeCall = options.beforeCall;
    for (const started of worker.pool) {
      const call = started.call.bind(started);
      const send = call as (...a: unknown[]) => unknown;
      started.call = ((request: WorkerRequest, ...rest: unknown[]) => {
        workerCalls.push(request);
        if (!beforeCall) return send(request, ...rest);
        return Promise.resolve(beforeCall(request)).then(() => send(request, ...rest));
      }) as typeof started.call;
    }
    const vouchesFile = options.vouchesOnDisk ? join(stateDir, "vouches.json") : null;
    const { policy, problems: unbound } = await composeSession({
      workspace,
      worker,
      person,
      trust,
      trustFile: null,
      sessionId: "test-session",
      auditFile: options.auditOnDisk ? join(stateDir, "audit.jsonl") : null,
      sessionDir: options.sessionDir ?? null,
      scratch,
      vouchesFile,
      privatePatterns: options.privatePatterns ?? [],
      approvals: options.approvals ?? null,
    });
    if (unbound.length) throw new Error(`fixture: ${unbound.join("; ")}`);
    const base = settingsFrom(options.config ?? {});
    const settings: Settings = { ...base, limits: { ...base.limits, ...options.limits } };
    const emitted: { type: string; text: string }[] = [];
    const session = new SessionState("test-session", !person.interactive);
    const ctx: ToolContext = {
      decide: toolPolicy(policy, session),
      settings,
      session,
      processor: noProcessor,
      emit: (e) => emitted.push(e),
    };
    const fx: Fixture = {
      root,
      stateDir,
      scratch,
      outside,
      vouchesFile,
      workspace,
      policy,
      person,
      scripted,
      ctx,
      settings,
      emitted,
      workerCalls,
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
      write: (rel, contents) => writeTree(root, { [rel]: contents }),
      read: (rel) => Deno.readTextFile(join(root, rel)),
      treeHash: () => hashTree(root),
    };
    try {
      await fn(fx);
    } finally {
      policy.audit.close();
    }
  } finally {
    await worker?.terminate();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(stateDir, { recursive: true });
    if (outside) await Deno.remove(outside, { recursive: true });
  }
}
