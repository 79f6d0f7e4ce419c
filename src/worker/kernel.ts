/**
 * The kernel wall (docs/contract.md §13.2): where bwrap works, the effect worker's file operations
 * run in a child process — this same program, started in its worker mode, behind narrowed Deno
 * permissions — inside a mount namespace where only the workspace, the scratch folder and what
 * the program must read exist. A link inside the workspace that points elsewhere resolves to
 * nothing there, so neither a planted link nor a process racing Brave Bot reaches outside.
 *
 * What the namespace holds, all read-only but the two places:
 * - the system's library folders (`/usr/lib`, `/lib64`, …: the dynamic loader and libc the
 *   Deno executable links against) and `/etc/ld.so.cache`;
 * - the executable itself (`Deno.execPath()`), and under `deno run` the source folder holding
 *   the worker's modules (`src/`); for the compiled binary its modules are inside it;
 * - `/proc/self/exe` as a plain link to the executable and `/proc/self/maps` (Deno reads both
 *   at start) — no real `/proc`, so `/proc/self/fd/…` (the child's own pipes) and
 *   `/proc/self/mem` do not exist;
 * - the workspace and the scratch folder, writable (read-only for a read-only worker), bound
 *   last so they win — but Brave Bot's state where it lies in the workspace: an empty read-only
 *   folder covers it, its parents pinned, and only the scratch folder inside it is bound back
 *   ({@link hiddenCovers});
 * - under `deno run`, `/deno-dir` as Deno's cache folder: the module cache warmed outside the wall
 *   (module_cache.ts), read-only, or an empty one (the modules are then compiled in memory);
 * Nothing else: no `/etc`, `/home`, `/tmp`, `/dev`, no `/proc` (so no `/proc/sys` either); no
 * network, no PID, IPC or UTS sharing, a new session (no terminal), an empty environment, no
 * capability (`--cap-drop ALL`: as root bwrap would keep them all, and a user namespace alone only
 * moves them into it) but `CAP_DAC_OVERRIDE` as root over another user's workspace
 * (capabilities.ts), and the child dies with Brave Bot.
 *
 * Programs a run stage starts need the whole system, so `spawn` stays in the in-process worker
 * (its stages have their own bwrap, src/policy/sandbox.ts); see docs/decisions.md.
 */
import { HIDDEN_ARG, hiddenOf, READ_ONLY_ARG, type WallOptions } from "./permissions.ts";
import { pinned, strictlyInside } from "./covers.ts";
import { frameChunks, readFrames, reusedChunks } from "./frames.ts";
import { CHECK_HELD, effectiveUid, keptCapabilities } from "./capabilities.ts";
import { CHILD_RUN, usableCache } from "./module_cache.ts";

import { KERNEL_CHILD_ARG } from "./child_arg.ts";
export { KERNEL_CHILD_ARG };

/** What the child is started from; computed once per process by {@link kernelWall}. */
export interface KernelPlan {
  bwrap: string;
  /** The executable: `deno` under `deno run`, the binary itself when compiled. */
  exec: string;
  /** Under `deno run`: the child's entry module and the source folder bound read-only. */
  module: { entry: string; root: string } | null;
  /** bwrap arguments making the system's libraries visible read-only (see {@link systemBinds}). */
  system: string[];
}

/** The folders the dynamic loader may need, as they are here: bound read-only, links kept. */
export function systemBinds(
  lstat: (path: string) => Deno.FileInfo | null = lstatOrNull,
  readLink: (path: string) => string = Deno.readLinkSync,
): string[] {
  const binds: string[] = [];
  const links: string[] = [];
  for (const dir of ["/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32"]) {
    const info = lstat(dir);
    if (info?.isSymlink) links.push("--symlink", readLink(dir), dir);
    else if (info?.isDirectory) binds.push("--ro-bind", dir, dir);
  }
  binds.push("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
  return [...binds, ...links];
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * The whole command line of one child: bwrap with its binds, then the program in worker mode.
 * Under `deno run`, `deno run` with the worker's narrowed flags and the entry module; compiled,
 * the binary with {@link KERNEL_CHILD_ARG} (its own flags are fixed at compile time, so it
 * narrows itself: it answers through a Deno Worker with the worker's permissions).
 * `extra` goes to the child after its own arguments and `binds` to bwrap after the workspace's
 * (the probe's `--check` and the status file it reads).
 *
 * A child that keeps a capability (root over another user's workspace) gets every namespace but
 * the user one: in a namespace of its own the capability would not reach files of users it does
 * not map, which is what it is kept for.
 */
export function childArgv(
  plan: KernelPlan,
  options: WallOptions,
  extra: string[] = [],
  binds: string[] = [],
  lstat: (path: string) => Deno.FileInfo | null = lstatOrNull,
): string[] {
  const { workspace, scratch } = options;
  const keep = keptCapabilities([workspace, scratch]);
  const args = [
    plan.bwrap,
    ...(keep.length
      ? ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
      : ["--unshare-all"]),
    "--cap-drop",
    "ALL",
    ...keep.flatMap((cap) => ["--cap-add", cap]),
    "--as-pid-1",
    "--die-with-parent",
    "--new-session",
    ...plan.system,
    "--ro-bind",
    plan.exec,
    plan.exec,
  ];
  if (plan.module) {
    // Deno insists on a cache folder: the module cache we warmed outside the wall, read-only
    // (module_cache.ts), or else an empty one, read-only once / is remounted, so the worker's
    // modules are compiled in memory and nothing is cached.
    args.push("--ro-bind", plan.module.root, plan.module.root);
    const cache = options.moduleCache;
    if (cache && usableCache(cache, [workspace, scratch], effectiveUid()) === null) {
      args.push("--ro-bind", cache, "/deno-dir");
    } else args.push("--dir", "/deno-dir");
    args.push("--setenv", "DENO_DIR", "/deno-dir");
  }
  args.push(
    "--dir",
    "/proc/self",
    "--symlink",
    plan.exec,
    "/proc/self/exe",
    // With --as-pid-1 the process bwrap sets up is the one that runs the program: its own
    // memory map, which glibc reads for the main thread's stack (Deno's parser needs it).
    "--ro-bind",
    "/proc/self/maps",
    "/proc/self/maps",
    // A read-only worker's places are mounted read-only too: a second wall under Deno's.
    options.readOnly ? "--ro-bind" : "--bind",
    workspace,
    workspace,
  );
  const covers = hiddenCovers(options, lstat);
  args.push(...covers.cover, options.readOnly ? "--ro-bind" : "--bind", scratch, scratch);
  args.push(...binds, ...covers.seal);
  args.push(
    "--remount-ro",
    "/",
    "--chdir",
    "/",
    "--",
    plan.exec,
  );
  // What the worker's own checks refuse too (ops/wall.ts `setHidden`): both walls hold the rule.
  const hidden = options.hide?.length ? [`${HIDDEN_ARG}${JSON.stringify(hiddenOf(options))}`] : [];
  if (!plan.module) {
    const mode = options.readOnly ? [READ_ONLY_ARG] : [];
    return [...args, KERNEL_CHILD_ARG, workspace, scratch, ...mode, ...hidden, ...extra];
  }
  const places = `${workspace},${scratch}`;
  return [
    ...args,
    ...CHILD_RUN,
    `--allow-read=${places}`,
    ...(options.readOnly ? [] : [`--allow-write=${places}`]),
    plan.module.entry,
    ...hidden,
    ...extra,
  ];
}

/**
 * Brave Bot's state where the child's namespace holds it (inside the workspace: a home-folder
 * workspace). `cover`, before the scratch folder (inside the state) is bound: the folders between
 * the workspace and each hidden folder pinned in place (covers.ts `pinned`, as a run stage's box
 * does), then an empty tmpfs over each. `seal`, after: each cover remounted read-only. A hidden
 * folder outside the workspace is not in the namespace at all; a read-only worker's workspace
 * needs no pins, since nothing in it can be renamed.
 */
export function hiddenCovers(
  options: WallOptions,
  lstat: (path: string) => Deno.FileInfo | null = lstatOrNull,
): { cover: string[]; seal: string[] } {
  // Only a folder that is there: bwrap would make a missing one on the host (as 0755, where the
  // state must be private), and a session's state is there before its worker starts.
  const inside = (options.hide ?? []).filter((dir) =>
    strictlyInside(options.workspace, dir) && lstat(dir)?.isDirectory
  );
  const cover = options.readOnly ? [] : pinned(inside, [options.workspace]);
  for (const dir of inside) cover.push("--tmpfs", dir);
  return { cover, seal: inside.flatMap((dir) => ["--remount-ro", dir]) };
}

/** A program on PATH, as the main thread sees it; never one inside `workspace`. */
function onPath(name: string, workspace: string | null): string | null {
  let path: string | undefined;
  try {
    path = Deno.env.get("PATH");
  } catch {
    return null;
  }
  for (const dir of (path ?? "/usr/bin:/bin").split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir.replace(/\/+$/, "")}/${name}`;
    try {
      const real = Deno.realPathSync(candidate);
      const info = Deno.statSync(real);
      if (!info.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
      if (workspace && (real === workspace || real.startsWith(`${workspace}/`))) continue;
      return real;
    } catch {
      continue;
    }
  }
  return null;
}

export type KernelWall = { ok: true; plan: KernelPlan } | { ok: false; why: string };

let planned: KernelWall | null = null;
let known: KernelWall | null = null;
let probing: Promise<KernelWall> | null = null;

/**
 * How this process would start the wall's children — bwrap on PATH, the executable, the source
 * folder under `deno run` — not yet probed. Worked out once per process.
 */
export function kernelPlan(): KernelWall {
  return planned ??= plan();
}

/**
 * Whether the kernel wall works here, and how to start its children: {@link kernelPlan}, and one
 * child started in a probe box (see {@link probeKernelWall}). Asked once per process; blocks
 * while it probes, so a session asks {@link kernelWallReady} first, which does not.
 *
 * With `places`, whether it works for a worker of those places: the probe's child is started
 * with their very command line ({@link childArgv}: their binds and the covers of their hidden
 * folders), so a cover bwrap cannot set up fails the probe, and the session falls back to the
 * process wall, rather than its worker failing at start. Probed once per command line.
 */
export function kernelWall(places?: WallOptions): KernelWall {
  if (!places) {
    if (known) return known;
    const found = kernelPlan();
    return known = found.ok ? probeKernelWall(found.plan) : found;
  }
  const found = placesPlan(places);
  if (!found.ok) return found;
  const key = probeKey(found.plan, places);
  const done = probedFor.get(key);
  if (done) return done;
  const wall = probeKernelWall(found.plan, places.moduleCache ?? null, places);
  probedFor.set(key, wall);
  return wall;
}

/** {@link kernelPlan}, for places Deno's flags can carry ({@link kernelPlaces}). */
function placesPlan(places: WallOptions): KernelWall {
  const bad = kernelPlaces(places);
  return bad ? { ok: false, why: bad } : kernelPlan();
}

/** Probe results by the command line of the places probed (see {@link kernelWall}). */
const probedFor = new Map<string, KernelWall>();
const probingFor = new Map<string, Promise<KernelWall>>();

/** What a probe for `places` stands for: the command line their worker gets. */
function probeKey(plan: KernelPlan, places: WallOptions): string {
  return JSON.stringify(childArgv(plan, places));
}

/**
 * {@link kernelWall} without blocking the main thread: the probe's child runs while the session
 * opens (with the module cache, when given, as the children will have it). Probed once per
 * process, or once per command line with `places`; {@link kernelWall} then answers at once.
 */
export function kernelWallReady(
  moduleCache: string | null = null,
  places?: WallOptions,
): Promise<KernelWall> {
  if (!places) {
    if (known) return Promise.resolve(known);
    return probing ??= (async () => {
      const found = kernelPlan();
      const wall = found.ok ? await probeKernelWallAsync(found.plan, moduleCache) : found;
      return known ??= wall;
    })();
  }
  const found = placesPlan(places);
  if (!found.ok) return Promise.resolve(found);
  const withCache = { ...places, moduleCache };
  return probeOnce(found.plan, probeKey(found.plan, withCache), withCache);
}

/** The probe of the command line `key` stands for: answered, in flight, or started now. */
function probeOnce(plan: KernelPlan, key: string, places: WallOptions): Promise<KernelWall> {
  const done = probedFor.get(key);
  if (done) return Promise.resolve(done);
  let pending = probingFor.get(key);
  if (!pending) {
    pending = probeKernelWallAsync(plan, places.moduleCache ?? null, places).then((wall) => {
      if (!probedFor.has(key)) probedFor.set(key, wall);
      return probedFor.get(key)!;
    });
    probingFor.set(key, pending);
  }
  return pending;
}

/**
 * The command line of a worker for `places` and the probe of exactly that command line (joined
 * where {@link kernelWallReady} started it): a child may be started with `argv` while it runs,
 * and is used only once it passed (client.ts `EffectWorker.startWhileProbed`). `argv` null: no
 * kernel wall for these places, and why.
 */
export function kernelWallProbe(
  places: WallOptions,
): { argv: string[]; wall: Promise<KernelWall> } | { argv: null; why: string } {
  const found = placesPlan(places);
  if (!found.ok) return { argv: null, why: found.why };
  const argv = childArgv(found.plan, places);
  return { argv, wall: probeOnce(found.plan, JSON.stringify(argv), places) };
}

function plan(): KernelWall {
  if (Deno.build.os !== "linux") return { ok: false, why: "bwrap exists only on Linux" };
  const bwrap = onPath("bwrap", null);
  if (!bwrap) return { ok: false, why: "bwrap is not on PATH" };
  try {
    const exec = Deno.realPathSync(Deno.execPath());
    let module: KernelPlan["module"] = null;
    if (!Deno.build.standalone) {
      const entry = new URL("./kernel_child.ts", import.meta.url);
      if (entry.protocol !== "file:") return { ok: false, why: "the worker modules are not files" };
      const path = Deno.realPathSync(decodeURIComponent(entry.pathname));
      // The source folder: src/ (worker modules import src/util, nothing outside src/).
      module = { entry: path, root: path.replace(/\/worker\/kernel_child\.ts$/, "") };
    }
    return { ok: true, plan: { bwrap, exec, module, system: systemBinds() } };
  } catch (e) {
    return { ok: false, why: `cannot find the program to start: ${(e as Error).message}` };
  }
}

/**
 * A probe box in a fresh temporary folder, its child's command line, and its removal. With
 * `places`, the child is started as their worker is (their binds, their covers), its files in a
 * fresh folder of their scratch folder (ours, and the one place of theirs it may write) and the
 * file outside in the temporary folder.
 */
function probeBox(plan: KernelPlan, moduleCache: string | null, places?: WallOptions) {
  const box = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "bravebot-kernel-probe-" }));
  let files: string | null = null;
  const remove = () => {
    for (const dir of [files, box]) {
      try {
        if (dir) Deno.removeSync(dir, { recursive: true });
      } catch { /* a temp folder left behind */ }
    }
  };
  try {
    const options: WallOptions = places
      ? { ...places, moduleCache }
      : { workspace: `${box}/ws`, scratch: `${box}/scratch`, run: false, moduleCache };
    if (!places) {
      Deno.mkdirSync(options.workspace);
      Deno.mkdirSync(options.scratch);
    }
    files = places
      ? Deno.makeTempDirSync({ dir: places.scratch, prefix: ".kernel-probe-" })
      : options.workspace;
    Deno.writeTextFileSync(`${files}/inside`, "inside\n");
    Deno.writeTextFileSync(`${files}/status`, "");
    Deno.writeTextFileSync(`${box}/outside`, "outside\n");
    Deno.symlinkSync(`${box}/outside`, `${files}/link`);
    const argv = childArgv(
      plan,
      options,
      // The capabilities this command line keeps (root over another user's places), no more.
      [
        "--check",
        `${files}/inside`,
        `${files}/link`,
        `${files}/status`,
        keptCapabilities([options.workspace, options.scratch]).join(","),
      ],
      // With --as-pid-1 the process that binds it is the one that runs the child.
      ["--ro-bind", "/proc/self/status", `${files}/status`],
    );
    const command = new Deno.Command(argv[0], {
      args: argv.slice(1),
      clearEnv: true,
      env: {},
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    });
    return { command, remove };
  } catch (e) {
    remove();
    throw e;
  }
}

/** What the probe's exit says about the wall. */
function probeVerdict(plan: KernelPlan, out: Deno.CommandOutput): KernelWall {
  if (out.code === 0) return { ok: true, plan };
  if (out.code === CHECK_HELD) {
    return {
      ok: false,
      why: "the kernel wall's probe failed: its child holds capabilities or could gain them",
    };
  }
  const said = new TextDecoder().decode(out.stderr).trim().split("\n")[0]?.slice(0, 200) ?? "";
  return {
    ok: false,
    why: `the kernel wall's probe failed (exit ${out.code})${said ? `: ${said}` : ""}`,
  };
}

const couldNotRun = (e: unknown): KernelWall => ({
  ok: false,
  why: `the kernel wall's probe could not run: ${(e as Error).message}`,
});

/**
 * Starts one child of `plan` in a probe box, which must read a file inside, get NotFound for a
 * link to a file outside, and hold no capability and no way to gain one — its own
 * `/proc/self/status`, bound into the box, says so (kernel_child.ts `check`).
 */
export function probeKernelWall(
  plan: KernelPlan,
  moduleCache: string | null = null,
  places?: WallOptions,
): KernelWall {
  let box: ReturnType<typeof probeBox> | null = null;
  try {
    box = probeBox(plan, moduleCache, places);
    return probeVerdict(plan, box.command.outputSync());
  } catch (e) {
    return couldNotRun(e);
  } finally {
    box?.remove();
  }
}

/** {@link probeKernelWall}, its child awaited rather than waited for. */
export async function probeKernelWallAsync(
  plan: KernelPlan,
  moduleCache: string | null = null,
  places?: WallOptions,
): Promise<KernelWall> {
  let box: ReturnType<typeof probeBox> | null = null;
  try {
    box = probeBox(plan, moduleCache, places);
    return probeVerdict(plan, await box.command.output());
  } catch (e) {
    return couldNotRun(e);
  } finally {
    box?.remove();
  }
}

/** Paths Deno's permission flags cannot carry (a comma separates them) keep the old wall. */
export function kernelPlaces(options: WallOptions): string | null {
  for (const p of [options.workspace, options.scratch]) {
    if (p.includes(",")) return `a path with a comma cannot be given to Deno's flags`;
  }
  return null;
}

/**
 * One running child: frames of `{ id, request }` to its stdin, frames of replies from its
 * stdout; its stderr goes nowhere. `onReply` gets each reply; `onExit` once, when the child is
 * gone (crash, kill, broken stream), with why.
 */
export class KernelChild {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #reader: ReadableStreamBYOBReader;
  #reading: Promise<void>;
  #stopping = false;

  constructor(
    argv: string[],
    onReply: (reply: unknown) => void,
    onExit: (why: string) => void,
  ) {
    const child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      clearEnv: true,
      env: {},
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      // Its own process group: a Ctrl-C at the terminal (SIGINT to the foreground group) is the
      // session's to handle, and must not end the wall under it.
      detached: true,
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    const reader = this.#reader = child.stdout.getReader({ mode: "byob" });
    this.#reading = (async () => {
      let why = "";
      try {
        // One read buffer, reused (frames.ts): each message is copied out of it.
        for await (const reply of readFrames(reusedChunks(reader))) onReply(reply);
      } catch (e) {
        why = (e as Error).message;
      }
      const status = await child.status;
      if (!this.#stopping) {
        onExit(
          `the effect worker's process ended (${
            status.signal ? `signal ${status.signal}` : `exit ${status.code}`
          })${why ? `: ${why}` : ""}`,
        );
      }
    })();
  }

  send(message: unknown): void {
    // Writes queued back to back (one for a small frame): nothing can come between them. A dead
    // child's broken pipe is reported by the reader ending, not here.
    for (const chunk of frameChunks(message)) this.#writer.write(chunk).catch(() => {});
  }

  /**
   * Ends the child: its stdin closes, so it exits at once by itself (killing bwrap while it
   * sets up can leave its inner process behind); one still there after `graceMs` is killed.
   * Settles when the child has exited, without waiting on whatever else holds its stdout.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.#stopping = true;
    await this.#writer.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((r) => timer = setTimeout(() => r("late"), graceMs));
    if (await Promise.race([this.#child.status, late]) === "late") {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* gone meanwhile */ }
    }
    clearTimeout(timer);
    await this.#child.status;
    await this.#reader.cancel().catch(() => {});
    await this.#reading;
  }
}
