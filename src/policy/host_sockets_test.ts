/** Finding the host's sockets a confined stage must not reach (host_sockets.ts). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  findHostCovers,
  MAX_ENTRIES,
  SOCKET_FOLDER_VARIABLES,
  SOCKET_VARIABLES,
  socketFolders,
  type SocketFs,
  socketPathsIn,
} from "./host_sockets.ts";

Deno.test("host sockets: the paths each kind of variable names", () => {
  const cases: [string, string[]][] = [
    ["/run/user/1000/ssh-agent.sock", ["/run/user/1000/ssh-agent.sock"]],
    [
      "unix:path=/run/user/1000/bus,guid=0123;unix:abstract=/tmp/dbus-x,guid=4",
      ["/run/user/1000/bus"],
    ],
    ["unix:path=/run/a%20b%2cc", ["/run/a b,c"]],
    ["unix:///var/run/docker.sock", ["/var/run/docker.sock"]],
    ["tcp://127.0.0.1:2375", []],
    ["/run/user/1000/gnupg/S.gpg-agent:1234:1", ["/run/user/1000/gnupg/S.gpg-agent"]],
    ["/tmp/tmux-0/default,4242,0", ["/tmp/tmux-0/default"]],
    ["{0a1b}unix:/run/user/1000/pulse/native tcp:elsewhere:4713", [
      "/run/user/1000/pulse/native",
    ]],
    ["unix:@kitty-socket", []],
    ["wayland-0", []],
    ["", []],
  ];
  for (const [value, paths] of cases) assert.deepEqual(socketPathsIn(value), paths, value);
});

Deno.test("host sockets: the folders searched", () => {
  const env: Record<string, string> = {
    HOME: "/home/u",
    XDG_RUNTIME_DIR: "/run/user/1000",
    GNUPGHOME: "relative/not/taken",
  };
  assert.deepEqual(socketFolders((n) => env[n]), [
    "/run",
    "/run/user/1000",
    "/home/u/.docker",
    "/home/u/.gnupg",
    "/home/u/.ssh",
  ]);
});

type Node =
  | { kind: "dir"; dev: number; listable?: "yes" | "denied" | "closed" }
  | { kind: "socket" | "file" }
  | { kind: "link"; to: string };

/** A file system of `nodes` (absolute path → node); folders list the paths directly under them. */
function fakeFs(nodes: Record<string, Node>): SocketFs {
  const denied = (p: string) => new Deno.errors.PermissionDenied(p);
  const missing = (p: string) => new Deno.errors.NotFound(p);
  const parentOf = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";
  const real = (p: string): string => {
    const node = nodes[p];
    if (node?.kind === "link") return real(node.to);
    if (!node) throw missing(p);
    return p;
  };
  const info = (node: Node, p: string): Deno.FileInfo => {
    // The device of a path is its nearest folder's.
    let dev = 0;
    for (let q = p; dev === 0; q = parentOf(q)) {
      const n = nodes[q];
      if (n?.kind === "dir") dev = n.dev;
      if (q === "/") break;
    }
    return {
      isFile: node.kind === "file",
      isDirectory: node.kind === "dir",
      isSymlink: node.kind === "link",
      isSocket: node.kind === "socket",
      dev,
    } as Deno.FileInfo;
  };
  return {
    realPath: (p) => Promise.resolve().then(() => real(p)),
    lstat: (p) =>
      Promise.resolve().then(() => {
        const parent = nodes[parentOf(p)];
        if (parent?.kind === "dir" && parent.listable === "closed") throw denied(p);
        const node = nodes[p];
        if (!node) throw missing(p);
        return info(node, p);
      }),
    readDir: (p) => ({
      async *[Symbol.asyncIterator]() {
        const node = nodes[p];
        if (!node || node.kind !== "dir") throw missing(p);
        if (node.listable === "denied" || node.listable === "closed") throw denied(p);
        for (const [path, child] of Object.entries(nodes)) {
          if (parentOf(path) !== p || path === p) continue;
          yield {
            name: path.slice(p.length + 1),
            isFile: child.kind === "file",
            isDirectory: child.kind === "dir",
            isSymlink: child.kind === "link",
          };
        }
      },
    }),
  };
}

Deno.test("host sockets: every socket by its real path, each folder's own file system only", async () => {
  const fs = fakeFs({
    "/": { kind: "dir", dev: 1 },
    "/var": { kind: "dir", dev: 1 },
    "/var/run": { kind: "link", to: "/run" },
    "/run": { kind: "dir", dev: 2 },
    "/run/docker.sock": { kind: "socket" },
    "/run/notes.txt": { kind: "file" },
    "/run/dbus": { kind: "dir", dev: 2 },
    "/run/dbus/system_bus_socket": { kind: "socket" },
    "/run/bus-link": { kind: "link", to: "/run/dbus/system_bus_socket" },
    "/run/far-link": { kind: "link", to: "/srv/far.sock" },
    "/srv": { kind: "dir", dev: 1 },
    "/srv/far.sock": { kind: "socket" },
    "/run/containerd": { kind: "dir", dev: 2 },
    "/run/containerd/rootfs": { kind: "dir", dev: 7 },
    "/run/containerd/rootfs/in-a-container.sock": { kind: "socket" },
    "/run/secret": { kind: "dir", dev: 2, listable: "denied" },
    "/run/closed": { kind: "dir", dev: 2, listable: "closed" },
    "/run/user": { kind: "dir", dev: 2 },
    "/run/user/1000": { kind: "dir", dev: 3 },
    "/run/user/1000/bus": { kind: "socket" },
    "/run/user/1001": { kind: "dir", dev: 4 },
    "/run/user/1001/gnupg": { kind: "dir", dev: 4 },
    "/run/user/1001/gnupg/S.gpg-agent": { kind: "socket" },
    "/home": { kind: "dir", dev: 1 },
    "/home/u": { kind: "dir", dev: 1 },
    "/home/u/agent.sock": { kind: "socket" },
    "/home/u/.ssh": { kind: "dir", dev: 1 },
    "/home/u/.ssh/cm-git@host:22": { kind: "socket" },
    "/tmp": { kind: "dir", dev: 1 },
    "/tmp/x.sock": { kind: "socket" },
    "/state": { kind: "dir", dev: 1 },
    "/state/s.sock": { kind: "socket" },
  });
  const env: Record<string, string> = {
    HOME: "/home/u",
    SSH_AUTH_SOCK: "/home/u/agent.sock",
    DOCKER_HOST: "unix:///tmp/x.sock",
    NVIM: "/state/s.sock",
    DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/var/run/dbus/system_bus_socket",
  };
  const found = await findHostCovers(["/tmp", "/state"], (n) => env[n], fs);
  assert.ok(found.ok, JSON.stringify(found));
  assert.deepEqual(found.value.sockets, [
    "/home/u/.ssh/cm-git@host:22",
    "/home/u/agent.sock",
    "/run/dbus/system_bus_socket",
    "/run/docker.sock",
    "/run/user/1000/bus",
    "/run/user/1001/gnupg/S.gpg-agent",
    "/srv/far.sock",
  ]);
  // Listable by nobody here, but a stage can look a name up in it: covered whole.
  assert.deepEqual(found.value.folders, ["/run/secret"]);
});

Deno.test("host sockets: past the bound the search is an error, not a partial answer", async () => {
  const nodes: Record<string, Node> = { "/run": { kind: "dir", dev: 2 } };
  for (let i = 0; i <= MAX_ENTRIES; i++) nodes[`/run/f${i}`] = { kind: "file" };
  const found = await findHostCovers([], () => undefined, fakeFs(nodes));
  assert.ok(!found.ok);
  assert.match(found.error, /more than 50000 entries/);
});

Deno.test("host sockets: a real socket named through a link is found at its real path", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "bb-hs-" }));
  await Deno.mkdir(join(dir, "real"));
  const socket = Deno.listen({ transport: "unix", path: join(dir, "real", "agent.sock") });
  try {
    await Deno.symlink(join(dir, "real"), join(dir, "alias"));
    const env: Record<string, string> = {
      SSH_AUTH_SOCK: join(dir, "alias", "agent.sock"),
      XDG_RUNTIME_DIR: join(dir, "alias"),
    };
    const found = await findHostCovers(["/tmp"], (n) => env[n]);
    assert.ok(found.ok, JSON.stringify(found));
    assert.deepEqual(
      found.value.sockets.filter((s) => s.startsWith(dir)),
      [join(dir, "real", "agent.sock")],
    );
  } finally {
    socket.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("host sockets: the main thread's flags let it read every variable named, by name", async () => {
  const flags = await Deno.readTextFile(new URL("../../permissions/main.flags", import.meta.url));
  const allowed = /^--allow-env=(.+)$/m.exec(flags)?.[1].split(",") ?? [];
  for (const name of [...SOCKET_VARIABLES, ...SOCKET_FOLDER_VARIABLES, "HOME"]) {
    assert.ok(allowed.includes(name), `${name} is not in permissions/main.flags`);
  }
  assert.match(flags, /^--ignore-env$/m, "and no other variable");
});
