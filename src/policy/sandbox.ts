/**
 * Confinement of run stages (docs/contract.md §13.4): programs spawned by `run` are outside Deno's
 * sandbox, so on Linux each stage is wrapped in bubblewrap by default (`run.sandbox: "auto"`):
 * the whole file system read-only, the workspace, the session's scratch folder and the user
 * config's `run.writable` folders writable, a private `/tmp`, Brave Bot's state directory hidden,
 * no network unless `run.network`, and a PID namespace that ends with the run, so nothing a
 * command starts outlives it. A stage holds no capability (as root too: `--cap-drop ALL`; see
 * src/worker/capabilities.ts for the one kept over another user's workspace), cannot write the
 * host's sysctls (`/proc/sys` read-only) and cannot connect to the host daemons' Unix sockets
 * (src/policy/host_sockets.ts).
 *
 * Where bwrap is missing or does not work (not Linux, some containers), `auto` runs unconfined
 * and says why (the session once at start, `doctor`, the approval screen); `bwrap` refuses runs
 * instead: the person asked for the wall, so its absence is never papered over.
 */
import type { SpawnRequest, SpawnResult } from "../worker/protocol.ts";
import type { Settings } from "../state/settings.ts";
import { spawnPipeline } from "../worker/ops/spawn.ts";
import { pinned } from "../worker/covers.ts";
import { type Capability, checkHeld, keptCapabilities } from "../worker/capabilities.ts";
import { findHostCovers, type HostCovers, NO_COVERS } from "./host_sockets.ts";
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

/** One stage's whole box: the confinement, what the machine makes of it, and what it covers. */
export interface StageBox extends Confinement {
  /** Capabilities the stage keeps (src/worker/capabilities.ts `keptCapabilities`): mostly none. */
  keep: readonly Capability[];
  /** The host's sockets and unlistable folders, found on the machine (host_sockets.ts). */
  covers: HostCovers;
}

/**
 * Whether this session's stages run confined: bwrap and the box it was probed with, or why not.
 * The box's covers are found again for each run ({@link stageWrapper}). With bwrap, where a
 * stop's signals reach the command (see {@link bwrapArgs}): the program that reads /proc for the
 * worker, or null where the machine has no `cat`, and a stop then ends the sandbox at once.
 */
export type ConfinementPlan =
  | { confined: true; bwrap: string; box: StageBox; wrapperGroup: { reader: string } | null }
  | { confined: false; why: string };

/** What the stage's own view replaces already, so nothing under it needs a cover of its own. */
function replacedIn(c: Confinement): string[] {
  return ["/tmp", ...c.hide];
}

/**
 * The bwrap argv prefix for one stage. Order matters: later mounts cover earlier ones, so the
 * writable workspace and scratch are bound after /tmp and the state directory are covered, and
 * the host's sockets are covered last of all; the folders between a writable folder and a cover
 * inside it are bound over themselves before any cover, so none can be renamed (worker/covers.ts `pinned`, shared with the kernel wall's box).
 *
 * `/proc/sys` (and `/proc/sysrq-trigger`, where the kernel has it) is bound read-only over the
 * stage's own `/proc`: uid 0 writes the host's sysctls there without any capability, and bwrap
 * covers only `/proc/irq` and `/proc/bus` itself.
 *
 * `--cap-drop ALL`, and a user namespace of its own where the kernel allows one (as root it
 * keeps root's own kernel keyring apart, as an ordinary user's box already does). A box that keeps
 * a capability gets no user namespace: there the capability would not reach files of users the
 * namespace does not map, which is what it is kept for.
 *
 * `--new-session` puts the sandbox's pid 1 and the command in a session and process group of
 * their own, apart from bwrap's outer process (bubblewrap.c calls setsid before it forks pid 1's
 * child). That outer process handles no signal but SIGCHLD, so a SIGINT sent to it ends it, and
 * `--die-with-parent` then kills the sandbox before the command could act on the signal; a stop
 * signals the sandbox's group instead, which pid 1 ignores (a namespace's init gets only the
 * signals it handles) and the command receives as from a terminal. It also keeps the command
 * from reaching a controlling terminal (TIOCSTI).
 */
export function bwrapArgs(bwrap: string, box: StageBox): string[] {
  const args = [
    bwrap,
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--tmpfs",
    "/tmp",
    "--bind",
    box.workspace,
    box.workspace,
  ];
  for (const dir of box.writable ?? []) args.push("--bind-try", dir, dir);
  // Before any cover: a pin binds the host's folder whole, so one made later would undo a cover
  // beneath it. No cover lies in the scratch folder (it is inside the hidden state).
  const covered = [...box.hide, ...box.covers.folders, ...box.covers.sockets];
  args.push(...pinned(covered, [box.workspace, ...(box.writable ?? [])]));
  for (const dir of box.hide) args.push("--tmpfs", dir);
  args.push("--bind", box.scratch, box.scratch);
  for (const dir of box.covers.folders) args.push("--tmpfs", dir);
  for (const socket of box.covers.sockets) args.push("--ro-bind", "/dev/null", socket);
  if (!box.network) args.push("--unshare-net");
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts");
  if (box.keep.length === 0) args.push("--unshare-user-try");
  args.push("--cap-drop", "ALL");
  for (const cap of box.keep) args.push("--cap-add", cap);
  args.push("--die-with-parent", "--new-session", "--chdir", box.workspace, "--");
  return args;
}

/**
 * The wrapper for one run's stages: the planned box, with the host's sockets found now (an agent
 * or a daemon may have started since the plan). An error, and no run, when they cannot be found.
 */
export async function stageWrapper(
  plan: Extract<ConfinementPlan, { confined: true }>,
): Promise<Result<string[]>> {
  const covers = await findHostCovers(replacedIn(plan.box));
  if (!covers.ok) return err(`the host's sockets cannot be hidden: ${covers.error}`);
  return ok(bwrapArgs(plan.bwrap, { ...plan.box, covers: covers.value }));
}

/** One line on what a confined stage may do, for the approval screen and `bravebot doctor`. */
export function describeBox(box: StageBox): string {
  const writable = box.writable?.length
    ? ` and ${plural(box.writable.length, "run.writable folder")}`
    : "";
  const net = box.network ? "network allowed (run.network)" : "no network";
  const caps = box.keep.length
    ? `keeps ${box.keep.join(", ")} (root over a workspace another user owns)`
    : "no capabilities";
  return `file system read-only except the workspace and scratch${writable}, ${net}, ` +
    `the host's sockets covered, ${caps}, a PID namespace per run`;
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

/** Probe answers, per spawner and box: the machine does not change under a session. */
const probes = new WeakMap<Spawner, Map<string, Promise<Result<void>>>>();

/** The largest probe output read: `/proc/self/mountinfo` lists every mount of the machine. */
const PROBE_OUTPUT_BYTES = 1024 * 1024;

/**
 * Whether bwrap confines a stage here as planned: the machine's `cat` prints its own
 * `/proc/self/status` and `/proc/self/mountinfo` inside exactly the box a stage gets, and the
 * process there must hold the planned capabilities and no more (effective and permitted), be
 * unable to gain any (`NoNewPrivs: 1`), and see `/proc/sys` read-only. Asked once per process
 * for each box. The error quotes bwrap when bwrap failed (the person's to read, never the
 * planner's); otherwise it is our sentence.
 */
export function probeBwrap(bwrap: string, spawner: Spawner, box: StageBox): Promise<Result<void>> {
  let known = probes.get(spawner);
  if (!known) probes.set(spawner, known = new Map());
  const key = JSON.stringify([bwrap, box]);
  let probe = known.get(key);
  if (!probe) {
    probe = (async (): Promise<Result<void>> => {
      // Like bwrap, a program of the machine, never one the repository ships.
      const cat = await lookupOnPath("cat", searchPath(), box.workspace);
      if (!cat.ok) return err("cannot probe bwrap: no 'cat' program on PATH");
      const r = await spawner({
        stages: [{ program: cat.value, args: ["/proc/self/status", "/proc/self/mountinfo"] }],
        stdin: null,
        cwd: box.workspace,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 10_000,
        maxOutputBytes: PROBE_OUTPUT_BYTES,
        wrapper: bwrapArgs(bwrap, box),
      });
      if (!r.ok) return err(`bwrap could not start: ${r.error}`);
      if (r.value.code !== 0) {
        const said = new TextDecoder().decode(r.value.stderr).trim().split("\n")[0] ?? "";
        return err(
          `bwrap fails here (exit ${r.value.code ?? r.value.signal})${said ? `: ${said}` : ""}`,
        );
      }
      const seen = new TextDecoder().decode(r.value.stdout);
      const held = checkHeld(seen, box.keep);
      if (!held.ok) return err(`bwrap does not confine as planned here: ${held.error}`);
      if (!readOnlyMount(seen, "/proc/sys")) {
        return err("bwrap does not confine as planned here: /proc/sys is writable inside");
      }
      return ok(undefined);
    })();
    known.set(key, probe);
  }
  return probe;
}

/** Whether the top mount at `point` in a `/proc/<pid>/mountinfo` text is read-only. */
export function readOnlyMount(mountinfo: string, point: string): boolean {
  let top: string | null = null;
  for (const line of mountinfo.split("\n")) {
    // id parent major:minor root mount-point options …
    const f = line.split(" ");
    if (f.length > 5 && /^\d+:\d+$/.test(f[2]) && f[4] === point) top = f[5];
  }
  return top !== null && top.split(",").includes("ro");
}

/**
 * The wrapper for this session's run stages, or why they run unconfined (`none`, or `auto` where
 * bwrap does not work); an error, and no run, when `bwrap` is configured but unusable, and — in
 * `auto` too — when bwrap works but not with what it must hide: a hide that fails never turns
 * into no confinement at all (docs/decisions.md).
 */
export async function planConfinement(
  settings: Settings,
  c: Confinement,
  spawner: Spawner,
): Promise<Result<ConfinementPlan>> {
  if (settings.sandbox === "none") {
    return ok({ confined: false, why: 'run.sandbox is "none" in the config' });
  }
  const found = await usableBwrap(spawner, {
    ...c,
    writable: settings.runWritable,
    network: settings.runNetwork,
  });
  if (found.ok) {
    // Like bwrap, a program of the machine, never one the repository ships.
    const cat = await lookupOnPath("cat", searchPath(), c.workspace);
    return ok({
      confined: true,
      bwrap: found.bwrap,
      box: found.box,
      wrapperGroup: cat.ok ? { reader: cat.value } : null,
    });
  }
  if (found.hides) {
    return err(`${found.why}; nothing was run (set run.sandbox to "none" to run unconfined)`);
  }
  if (settings.sandbox === "auto") return ok({ confined: false, why: found.why });
  return err(
    `run.sandbox is "bwrap" but ${found.why}; nothing was run (set run.sandbox to "auto" or ` +
      '"none" to run unconfined)',
  );
}

/**
 * The bwrap that confines a stage here and the box it was probed with, or why there is none;
 * `hides` when bwrap confines the same box without the hides (the state, the host's sockets).
 */
async function usableBwrap(
  spawner: Spawner,
  c: Confinement,
): Promise<
  { ok: true; bwrap: string; box: StageBox } | { ok: false; why: string; hides: boolean }
> {
  if (Deno.build.os !== "linux") {
    return { ok: false, why: "bwrap confinement exists only on Linux", hides: false };
  }
  // The wall's own program is a program of the machine, never one the repository ships.
  const bwrap = await lookupOnPath("bwrap", searchPath(), c.workspace);
  if (!bwrap.ok) {
    return { ok: false, why: "bwrap is not on PATH (install bubblewrap)", hides: false };
  }
  const keep = keptCapabilities([c.workspace, ...(c.writable ?? [])]);
  const covers = await findHostCovers(replacedIn(c));
  const box: StageBox = { ...c, keep, covers: covers.ok ? covers.value : NO_COVERS };
  const works = covers.ok
    ? await probeBwrap(bwrap.value, spawner, box)
    : err(`the host's sockets cannot be hidden: ${covers.error}`);
  if (works.ok) return { ok: true, bwrap: bwrap.value, box };
  const bare = await probeBwrap(bwrap.value, spawner, { ...box, hide: [], covers: NO_COVERS });
  if (bare.ok) {
    return {
      ok: false,
      why: covers.ok ? `bwrap cannot hide what it must here: ${works.error}` : works.error,
      hides: true,
    };
  }
  return { ok: false, why: works.error, hides: false };
}

export interface SandboxStatus {
  configured: Settings["sandbox"];
  /** Whether run stages are confined in this configuration on this machine. */
  inUse: boolean;
  /** One line for `bravebot doctor`. */
  detail: string;
}

/**
 * What `bravebot doctor` reports about run confinement, and why: probed with `workspace` as the
 * workspace when given (which capabilities a stage keeps depends on who owns it), with a
 * temporary folder as scratch.
 */
export async function sandboxStatus(
  settings: Settings,
  spawner: Spawner = directSpawner,
  workspace?: string,
): Promise<SandboxStatus> {
  const configured = settings.sandbox;
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "bravebot-bwrap-probe-" }));
  // Bound at its real location, as a session's workspace is (bwrap fails on a link).
  const ws = workspace ? await Deno.realPath(workspace).catch(() => tmp) : tmp;
  try {
    const plan = await planConfinement(
      settings,
      { workspace: ws, scratch: tmp, hide: [] },
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
      return {
        configured,
        inUse: true,
        detail: `in use: run stages are confined by ${plan.value.bwrap} (${
          describeBox(plan.value.box)
        })`,
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
