/**
 * The host daemons' Unix sockets a confined run stage must not reach (docs/contract.md §13.4). A
 * stage sees the whole file system read-only, but read-only does not stop `connect()`: through the
 * session bus, the docker socket, an ssh or gpg agent or a database's socket, a daemon outside
 * the sandbox would act for it. So each socket found is covered by `/dev/null` in the stage's
 * box (connecting to it is then refused), rather than an empty tmpfs over `/run`, which would
 * break NixOS (`/run/current-system/sw/bin` on PATH) and DNS where `/etc/resolv.conf` links into
 * `/run/systemd/resolve`.
 *
 * Where: every socket under `/run` (so `/var/run`) and each `/run/user/<uid>`, under
 * `$XDG_RUNTIME_DIR`, `~/.docker`, `~/.gnupg` (or `$GNUPGHOME`) and `~/.ssh` (ssh's
 * ControlMaster sockets), and the sockets the variables of {@link SOCKET_VARIABLES} name. Every
 * path is taken at its real location (a link is never a mount point: bwrap fails on one). The
 * search stays on each folder's own file system (a FUSE mount could stall it, a container's root
 * file system under `/run/containerd` is huge) and stops at {@link MAX_ENTRIES} entries, which is
 * an error, not a partial answer. A folder that cannot be listed but can be entered (mode 0711)
 * may hold a socket whose name a stage knows: it is covered whole by an empty tmpfs.
 *
 * Found again for every run: agents and daemons start and stop during a session.
 */
import { join } from "node:path";
import { envVar } from "./programs.ts";
import { isWithin } from "./workspace.ts";
import { err, ok, type Result } from "../util/result.ts";

/**
 * Variables that name a daemon's socket, read by name only (permissions/main.flags lists them):
 * agents (ssh, gpg), buses (D-Bus), container engines, terminal multiplexers and editors whose
 * socket takes commands, window managers and the sound server.
 */
export const SOCKET_VARIABLES = [
  "SSH_AUTH_SOCK",
  "GPG_AGENT_INFO",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "DOCKER_HOST",
  "CONTAINER_HOST",
  "TMUX",
  "NVIM",
  "NVIM_LISTEN_ADDRESS",
  "VSCODE_IPC_HOOK_CLI",
  "KITTY_LISTEN_ON",
  "WAYLAND_DISPLAY",
  "SWAYSOCK",
  "I3SOCK",
  "PULSE_SERVER",
] as const;

/** Variables naming folders searched for sockets (with HOME). */
export const SOCKET_FOLDER_VARIABLES = ["XDG_RUNTIME_DIR", "GNUPGHOME"] as const;

/** The most entries the search looks at, over all its folders, before it gives up. */
export const MAX_ENTRIES = 50_000;

/** What a stage's box covers of the machine, found on it rather than configured. */
export interface HostCovers {
  /** Sockets (real paths), each covered by `/dev/null`. */
  sockets: readonly string[];
  /** Folders that cannot be listed but can be entered (real paths), each covered by a tmpfs. */
  folders: readonly string[];
}

export const NO_COVERS: HostCovers = { sockets: [], folders: [] };

/** The file-system calls the search makes; tests give their own. */
export interface SocketFs {
  realPath(path: string): Promise<string>;
  lstat(path: string): Promise<Deno.FileInfo>;
  readDir(path: string): AsyncIterable<Deno.DirEntry>;
}

const denoFs: SocketFs = {
  realPath: (p) => Deno.realPath(p),
  lstat: (p) => Deno.lstat(p),
  readDir: (p) => Deno.readDir(p),
};

/**
 * The absolute paths a socket variable's value names: a plain path (`SSH_AUTH_SOCK`), a D-Bus
 * address list (`unix:path=/run/user/1000/bus,guid=…;…`, with its `%xx` escapes), a URL
 * (`DOCKER_HOST=unix:///var/run/docker.sock`), `unix:/path` (kitty, PulseAudio, behind an
 * optional `{machine-id}`), `path:pid:1` (`GPG_AGENT_INFO`) and `path,pid,index` (`TMUX`).
 * Abstract sockets (`unix:abstract=…`, `@name`) and TCP addresses name no path.
 */
export function socketPathsIn(value: string): string[] {
  const found: string[] = [];
  for (const part of value.split(/[;,\s]+/)) {
    let p = part.replace(/^\{[^}]*\}/, "").replace(/^unix:(\/\/)?/, "").replace(/^path=/, "");
    if (!p.startsWith("/")) continue;
    p = p.replace(/:\d+(:\d+)?$/, "");
    try {
      p = decodeURIComponent(p);
    } catch { /* not escaped: as written */ }
    found.push(p);
  }
  return found;
}

/** The folders searched, as named (not yet resolved): see the module comment. */
export function socketFolders(get: (name: string) => string | undefined = envVar): string[] {
  const home = get("HOME");
  return [
    "/run",
    get("XDG_RUNTIME_DIR"),
    get("GNUPGHOME"),
    ...(home ? [".docker", ".gnupg", ".ssh"].map((d) => join(home, d)) : []),
  ].filter((d): d is string => d !== undefined && d.startsWith("/"));
}

/**
 * Every host socket a stage could reach by path, and the folders to cover whole, leaving out
 * what lies under `covered` (the stage's own `/tmp`, Brave Bot's hidden state): those are gone
 * from its view already. An error when the search would pass {@link MAX_ENTRIES}.
 */
export async function findHostCovers(
  covered: readonly string[],
  get: (name: string) => string | undefined = envVar,
  fs: SocketFs = denoFs,
): Promise<Result<HostCovers>> {
  const sockets = new Set<string>();
  const folders = new Set<string>();
  let budget = MAX_ENTRIES;
  const hidden = (p: string) => [...covered, ...folders].some((c) => isWithin(c, p));
  const addIfSocket = async (path: string) => {
    try {
      const real = await fs.realPath(path);
      if ((await fs.lstat(real)).isSocket && !hidden(real)) sockets.add(real);
    } catch { /* gone, or not ours to see: nothing a stage could reach through it */ }
  };
  for (const name of SOCKET_VARIABLES) {
    for (const path of socketPathsIn(get(name) ?? "")) await addIfSocket(path);
  }

  const roots: string[] = [];
  for (const named of socketFolders(get)) {
    try {
      roots.push(await fs.realPath(named));
    } catch { /* absent */ }
  }
  // Each /run/user/<uid> is a file system of its own (logind's tmpfs): searched as a root.
  try {
    for await (const e of fs.readDir("/run/user")) {
      if (e.isDirectory) roots.push(await fs.realPath(join("/run/user", e.name)));
    }
  } catch { /* none, or not listable */ }

  const seen = new Set<string>();
  for (const root of roots) {
    if (seen.has(root) || hidden(root)) continue;
    seen.add(root);
    let dev: number;
    try {
      dev = (await fs.lstat(root)).dev;
    } catch {
      continue;
    }
    const stack = [root];
    while (stack.length) {
      const dir = stack.pop()!;
      const entries: Deno.DirEntry[] = [];
      try {
        for await (const e of fs.readDir(dir)) {
          if (--budget < 0) {
            return err(
              `more than ${MAX_ENTRIES} entries in the folders searched for the host's sockets`,
            );
          }
          entries.push(e);
        }
      } catch (e) {
        if (e instanceof Deno.errors.PermissionDenied && await enterable(fs, dir)) {
          folders.add(dir);
        }
        continue;
      }
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isSymlink) await addIfSocket(path);
        else if (e.isDirectory) {
          try {
            if ((await fs.lstat(path)).dev !== dev || seen.has(path)) continue;
            seen.add(path);
            stack.push(path);
          } catch { /* gone */ }
        } else if (!e.isFile) await addIfSocket(path);
      }
    }
  }
  // A socket inside a folder covered whole needs no cover of its own.
  return ok({
    sockets: [...sockets].filter((s) => !hidden(s)).sort(),
    folders: [...folders].sort(),
  });
}

/** Whether a folder that cannot be listed can still be entered: a name in it can be looked up. */
async function enterable(fs: SocketFs, dir: string): Promise<boolean> {
  try {
    await fs.lstat(join(dir, ".bravebot-no-such-name"));
    return true;
  } catch (e) {
    return e instanceof Deno.errors.NotFound;
  }
}
