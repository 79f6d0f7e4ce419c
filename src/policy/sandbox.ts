/**
 * Optional confinement of run stages (design.md §13): programs spawned by `run` are outside
 * Deno's sandbox, so on Linux, with `run.sandbox: "bwrap"` in the config, each stage is wrapped
 * in bubblewrap: the whole file system read-only, the workspace and the session's scratch
 * folder writable, Brave Bot's state directory hidden, no network, its own PID namespace.
 *
 * When confinement is configured but cannot work (not Linux, no `bwrap` on PATH, or `bwrap`
 * fails here, as it does in some containers), runs are refused rather than run unconfined:
 * the person asked for the wall, so its absence is said, never papered over.
 */
import type { SpawnRequest, SpawnResult } from "../worker/protocol.ts";
import type { Settings } from "../state/settings.ts";
import { spawnPipeline } from "../worker/ops/spawn.ts";
import { lookupOnPath, searchPath } from "./programs.ts";
import { err, messageOf, ok, type Result } from "../util/result.ts";

export interface Confinement {
  workspace: string;
  scratch: string;
  /** Directories to hide behind an empty tmpfs (Brave Bot's state). */
  hide: readonly string[];
}

/**
 * The bwrap argv prefix for one stage. Order matters: later mounts cover earlier ones, so the
 * writable workspace and scratch are bound after /tmp and the state directory are covered.
 */
export function bwrapArgs(bwrap: string, c: Confinement): string[] {
  const args = [
    bwrap,
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--bind",
    c.workspace,
    c.workspace,
  ];
  for (const dir of c.hide) args.push("--tmpfs", dir);
  args.push(
    "--bind",
    c.scratch,
    c.scratch,
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--chdir",
    c.workspace,
    "--",
  );
  return args;
}

/** Runs one pipeline; the policy layer passes the effect worker, `doctor` the direct call. */
export type Spawner = (request: SpawnRequest) => Promise<Result<SpawnResult>>;

/** The main thread's own spawn, for `bravebot doctor`'s probe (no tool runs through this). */
export const directSpawner: Spawner = async (request) => {
  try {
    return ok(await spawnPipeline(request));
  } catch (e) {
    return err(messageOf(e));
  }
};

/** Probe answers, per spawner and bwrap path: the machine does not change under a session. */
const probes = new WeakMap<Spawner, Map<string, Promise<Result<void>>>>();

/**
 * Whether bwrap actually confines a program here: it runs `true` inside the same kind of box
 * a stage gets. Asked once per process for each bwrap path.
 */
export function probeBwrap(
  bwrap: string,
  spawner: Spawner,
  where?: Confinement,
): Promise<Result<void>> {
  let known = probes.get(spawner);
  if (!known) probes.set(spawner, known = new Map());
  let probe = known.get(bwrap);
  if (!probe) {
    probe = (async (): Promise<Result<void>> => {
      const truePath = await lookupOnPath("true", searchPath(), where?.workspace ?? null);
      if (!truePath.ok) return err("cannot probe bwrap: no 'true' program on PATH");
      const tmp = where ? null : await Deno.makeTempDir({ prefix: "bravebot-bwrap-probe-" });
      const box = where ?? { workspace: tmp!, scratch: tmp!, hide: [] };
      try {
        const r = await spawner({
          stages: [{ program: truePath.value, args: [] }],
          stdin: null,
          cwd: box.workspace,
          env: { PATH: "/usr/bin:/bin" },
          timeoutMs: 10_000,
          maxOutputBytes: 4096,
          wrapper: bwrapArgs(bwrap, box),
        });
        if (!r.ok) return err(`bwrap could not start: ${r.error}`);
        if (r.value.code === 0) return ok(undefined);
        const said = new TextDecoder().decode(r.value.stderr).trim().split("\n")[0] ?? "";
        return err(
          `bwrap fails here (exit ${r.value.code ?? r.value.signal})${said ? `: ${said}` : ""}`,
        );
      } finally {
        if (tmp) await Deno.remove(tmp, { recursive: true }).catch(() => {});
      }
    })();
    known.set(bwrap, probe);
  }
  return probe;
}

/**
 * The wrapper for this session's run stages: null when confinement is off, an error (and no
 * run) when it is configured but unusable.
 */
export async function planConfinement(
  settings: Settings,
  c: Confinement,
  spawner: Spawner,
): Promise<Result<string[] | null>> {
  if (settings.sandbox !== "bwrap") return ok(null);
  if (Deno.build.os !== "linux") {
    return err(
      'run.sandbox is "bwrap", which exists only on Linux; nothing was run (set run.sandbox to "none" to run unconfined)',
    );
  }
  // The wall's own program is a program of the machine, never one the repository ships.
  const bwrap = await lookupOnPath("bwrap", searchPath(), c.workspace);
  if (!bwrap.ok) {
    return err(
      'run.sandbox is "bwrap" but bwrap is not on PATH; nothing was run (install bubblewrap, or set run.sandbox to "none")',
    );
  }
  const works = await probeBwrap(bwrap.value, spawner, c);
  if (!works.ok) {
    return err(
      `run.sandbox is "bwrap" but ${works.error}; nothing was run (set run.sandbox to "none" to run unconfined)`,
    );
  }
  return ok(bwrapArgs(bwrap.value, c));
}

export interface SandboxStatus {
  configured: "none" | "bwrap";
  /** Whether run stages are confined in this configuration on this machine. */
  inUse: boolean;
  /** The bwrap found on PATH, if any. */
  bwrap: string | null;
  /** Whether that bwrap works here (null: not probed). */
  works: boolean | null;
  /** One line for `bravebot doctor`. */
  detail: string;
}

/** What `bravebot doctor` reports about run confinement. */
export async function sandboxStatus(
  settings: Settings,
  spawner: Spawner = directSpawner,
): Promise<SandboxStatus> {
  const configured = settings.sandbox;
  if (Deno.build.os !== "linux") {
    return {
      configured,
      inUse: false,
      bwrap: null,
      works: null,
      detail: configured === "bwrap"
        ? 'run.sandbox is "bwrap" but confinement exists only on Linux: run is refused'
        : "run stages are not confined (bwrap confinement exists only on Linux)",
    };
  }
  const found = await lookupOnPath("bwrap");
  const bwrap = found.ok ? found.value : null;
  const probe = bwrap ? await probeBwrap(bwrap, spawner) : null;
  const works = probe ? probe.ok : null;
  let detail: string;
  if (configured === "bwrap") {
    if (!bwrap) detail = 'run.sandbox is "bwrap" but bwrap is not on PATH: run is refused';
    else if (!probe!.ok) detail = `run.sandbox is "bwrap" but ${probe!.error}: run is refused`;
    else {detail =
        `in use: run stages are confined by ${bwrap} (file system read-only except the workspace and scratch, no network)`;}
  } else if (bwrap && works) {
    detail =
      `not in use: ${bwrap} works here; set run.sandbox to "bwrap" in the config to confine run stages`;
  } else if (bwrap) {
    detail = `not in use: ${bwrap} is on PATH but ${probe!.ok ? "" : probe!.error}`;
  } else {
    detail =
      'not in use: bwrap is not on PATH (install bubblewrap and set run.sandbox to "bwrap" to confine run stages)';
  }
  return { configured, inUse: configured === "bwrap" && works === true, bwrap, works, detail };
}
