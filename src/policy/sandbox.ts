/**
 * Confinement of run stages (design.md §13): programs spawned by `run` are outside Deno's
 * sandbox, so on Linux each stage is wrapped in bubblewrap by default (`run.sandbox: "auto"`):
 * the whole file system read-only, the workspace, the session's scratch folder and the user
 * config's `run.writable` folders writable, a private `/tmp`, Brave Bot's state directory hidden,
 * no network unless `run.network`, and a PID namespace that ends with the run, so nothing a
 * command starts outlives it.
 *
 * Where bwrap is missing or does not work (not Linux, some containers), `auto` runs unconfined
 * and says why (the session once at start, `doctor`, the approval screen); `bwrap` refuses runs
 * instead: the person asked for the wall, so its absence is never papered over.
 */
import type { SpawnRequest, SpawnResult } from "../worker/protocol.ts";
import type { Settings } from "../state/settings.ts";
import { spawnPipeline } from "../worker/ops/spawn.ts";
import { lookupOnPath, searchPath } from "./programs.ts";
import { err, messageOf, ok, type Result } from "../util/result.ts";
import { plural } from "../util/plural.ts";

export interface Confinement {
  workspace: string;
  scratch: string;
  /** Directories to hide behind an empty tmpfs (Brave Bot's state). */
  hide: readonly string[];
  /** More folders a stage may write (the user config's `run.writable`); missing ones are skipped. */
  writable?: readonly string[];
  /** Whether a stage keeps the network (the user config's `run.network`). */
  network?: boolean;
}

/**
 * Whether this session's stages run confined: the wrapper, or why not. With the wrapper, where a
 * stop's signals reach the command (see {@link bwrapArgs}): the program that reads /proc for the
 * worker, or null where the machine has no `cat`, and a stop then ends the sandbox at once.
 */
export type ConfinementPlan =
  | { confined: true; wrapper: string[]; wrapperGroup: { reader: string } | null }
  | { confined: false; why: string };

/**
 * The bwrap argv prefix for one stage. Order matters: later mounts cover earlier ones, so the
 * writable workspace and scratch are bound after /tmp and the state directory are covered.
 *
 * `--new-session` puts the sandbox's pid 1 and the command in a session and process group of
 * their own, apart from bwrap's outer process (bubblewrap.c calls setsid before it forks pid 1's
 * child). That outer process handles no signal but SIGCHLD, so a SIGINT sent to it ends it, and
 * `--die-with-parent` then kills the sandbox before the command could act on the signal; a stop
 * signals the sandbox's group instead, which pid 1 ignores (a namespace's init gets only the
 * signals it handles) and the command receives as from a terminal. It also keeps the command
 * from reaching a controlling terminal (TIOCSTI).
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
  for (const dir of c.writable ?? []) args.push("--bind-try", dir, dir);
  for (const dir of c.hide) args.push("--tmpfs", dir);
  args.push("--bind", c.scratch, c.scratch);
  if (!c.network) args.push("--unshare-net");
  args.push(
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--new-session",
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
 * The wrapper for this session's run stages, or why they run unconfined (`none`, or `auto` where
 * bwrap does not work); an error, and no run, when `bwrap` is configured but unusable.
 */
export async function planConfinement(
  settings: Settings,
  c: Confinement,
  spawner: Spawner,
): Promise<Result<ConfinementPlan>> {
  if (settings.sandbox === "none") {
    return ok({ confined: false, why: 'run.sandbox is "none" in the config' });
  }
  const box = { ...c, writable: settings.runWritable, network: settings.runNetwork };
  const found = await usableBwrap(spawner, box);
  if (found.ok) {
    // Like bwrap, a program of the machine, never one the repository ships.
    const cat = await lookupOnPath("cat", searchPath(), c.workspace);
    return ok({
      confined: true,
      wrapper: bwrapArgs(found.value, box),
      wrapperGroup: cat.ok ? { reader: cat.value } : null,
    });
  }
  if (settings.sandbox === "auto") return ok({ confined: false, why: found.error });
  return err(
    `run.sandbox is "bwrap" but ${found.error}; nothing was run (set run.sandbox to "auto" or ` +
      '"none" to run unconfined)',
  );
}

/** The bwrap that confines a stage here, or why there is none. */
async function usableBwrap(spawner: Spawner, c: Confinement): Promise<Result<string>> {
  if (Deno.build.os !== "linux") return err("bwrap confinement exists only on Linux");
  // The wall's own program is a program of the machine, never one the repository ships.
  const bwrap = await lookupOnPath("bwrap", searchPath(), c.workspace);
  if (!bwrap.ok) return err("bwrap is not on PATH (install bubblewrap)");
  const works = await probeBwrap(bwrap.value, spawner, c);
  return works.ok ? bwrap : works;
}

export interface SandboxStatus {
  configured: Settings["sandbox"];
  /** Whether run stages are confined in this configuration on this machine. */
  inUse: boolean;
  /** One line for `bravebot doctor`. */
  detail: string;
}

/** What `bravebot doctor` reports about run confinement, and why. */
export async function sandboxStatus(
  settings: Settings,
  spawner: Spawner = directSpawner,
): Promise<SandboxStatus> {
  const configured = settings.sandbox;
  const tmp = await Deno.makeTempDir({ prefix: "bravebot-bwrap-probe-" });
  try {
    const plan = await planConfinement(
      settings,
      { workspace: tmp, scratch: tmp, hide: [] },
      spawner,
    );
    if (!plan.ok) {
      return {
        configured,
        inUse: false,
        detail: `${plan.error.replace(/; nothing was run.*/, "")}: runs are refused`,
      };
    }
    if (plan.value.confined) {
      const net = settings.runNetwork ? "network allowed (run.network)" : "no network";
      return {
        configured,
        inUse: true,
        detail: `in use: run stages are confined by ${
          plan.value.wrapper[0]
        } (file system read-only except the workspace and scratch${
          settings.runWritable.length
            ? ` and ${plural(settings.runWritable.length, "run.writable folder")}`
            : ""
        }, ${net}, a PID namespace per run)`,
      };
    }
    return {
      configured,
      inUse: false,
      detail: configured === "none"
        ? 'not in use: run.sandbox is "none" in the config; run stages are not confined'
        : `not in use: ${plan.value.why}; run stages are not confined`,
    };
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
