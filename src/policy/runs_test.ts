/** The one spawn request a run and a shell line are both made with. */
import assert from "node:assert/strict";
import { spawnRequest } from "./runs.ts";
import { childEnv } from "./programs.ts";
import { DEFAULT_LIMITS } from "../state/settings.ts";
import type { Watch } from "./watch.ts";

const at = { workspace: { root: "/ws" }, scratch: "/scratch" };
const settings = { limits: { ...DEFAULT_LIMITS, refOutputBytes: 4096 } };
const watch: Watch = { streamBytes: 99, onProgress() {}, end() {} };

Deno.test("spawnRequest: the workspace, a stage's short environment, the reference's cap", () => {
  const plain = spawnRequest(at, settings, {
    stages: [{ program: "/usr/bin/ls", args: ["-a"] }],
    stdin: null,
    timeoutMs: 5000,
    watching: null,
    wrapper: null,
    wrapperGroup: null,
    cgroup: null,
  });
  // Nothing asked for is added: no wrapper, group, cgroup or stream where none was given.
  assert.deepEqual(plain, {
    stages: [{ program: "/usr/bin/ls", args: ["-a"] }],
    stdin: null,
    cwd: "/ws",
    env: childEnv("/scratch"),
    timeoutMs: 5000,
    maxOutputBytes: 4096,
  });
  assert.equal(plain.env.TMPDIR, "/scratch");

  const stdin = new Uint8Array([1]);
  const boxed = spawnRequest(at, settings, {
    stages: [{ program: "/usr/bin/cat", args: [] }],
    stdin,
    timeoutMs: 1000,
    watching: watch,
    wrapper: ["/usr/bin/bwrap", "--"],
    wrapperGroup: { reader: "/usr/bin/cat" },
  });
  assert.deepEqual(boxed.wrapper, ["/usr/bin/bwrap", "--"]);
  assert.deepEqual(boxed.wrapperGroup, { reader: "/usr/bin/cat" });
  assert.equal(boxed.streamBytes, 99);
  assert.equal(boxed.stdin, stdin);
  assert.equal("cgroup" in boxed, false);

  const cgroup = {
    parent: "/sys/fs/cgroup/x",
    sh: "/bin/sh",
    mkdir: "/bin/mkdir",
    rmdir: "/bin/rmdir",
  };
  const loose = spawnRequest(at, settings, {
    stages: [{ program: "/usr/bin/true", args: [] }],
    stdin: null,
    timeoutMs: 1000,
    watching: null,
    cgroup,
  });
  assert.deepEqual(loose.cgroup, cgroup);
  assert.equal("wrapper" in loose, false);
});

Deno.test("spawnRequest: a shell line's SHELL joins the stage environment, nothing else does", () => {
  const shell = spawnRequest(at, settings, {
    stages: [{ program: "/bin/sh", args: ["-c", "ls"] }],
    stdin: null,
    env: { SHELL: "/bin/sh" },
    timeoutMs: 1000,
    watching: watch,
  });
  assert.deepEqual(shell.env, { ...childEnv("/scratch"), SHELL: "/bin/sh" });
  assert.equal(shell.streamBytes, 99);
  assert.equal(shell.cwd, "/ws");
});
