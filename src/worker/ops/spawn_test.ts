/**
 * The pipeline runner on its own (no worker, no policy): every way out ends with the stages
 * reaped and the streams closed — a stage that leaves a daemon holding its stdout, a stage that
 * never reads its stdin, a stage that cannot start, a later stage that stops reading early.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnPipeline } from "./spawn.ts";
import type { SpawnRequest } from "../protocol.ts";
import { findRunCgroup } from "../../policy/leftovers.ts";
import { directSpawner } from "../../policy/sandbox.ts";
import { leftRunning } from "../../../test/support/signal_log.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

function which(name: string): string {
  for (const dir of PATH.split(":")) {
    try {
      if (Deno.statSync(join(dir, name)).isFile) return join(dir, name);
    } catch { /* next */ }
  }
  throw new Error(`${name} not on PATH`);
}

function request(
  stages: [string, ...string[]][],
  extra: Partial<SpawnRequest> = {},
): SpawnRequest {
  return {
    stages: stages.map(([p, ...args]) => ({ program: which(p), args })),
    stdin: null,
    cwd: Deno.cwd(),
    env: { PATH },
    timeoutMs: 30_000,
    maxOutputBytes: 1 << 20,
    ...extra,
  };
}

Deno.test("spawn: stdin bytes reach the first stage and stdout flows through the stages", async () => {
  const r = await spawnPipeline(
    request([["cat"], ["tr", "a-z", "A-Z"]], { stdin: new TextEncoder().encode("abc\n") }),
  );
  assert.equal(text(r.stdout), "ABC\n");
  assert.deepEqual(r.stages, [{ code: 0, signal: null }, { code: 0, signal: null }]);
  assert.equal(r.timedOut, false);
});

Deno.test("spawn: a later stage that stops reading early ends the pipeline", async () => {
  const r = await spawnPipeline(request([["yes", "line"], ["head", "-n", "2"]]));
  assert.equal(text(r.stdout), "line\nline\n");
  assert.equal(r.code, 0);
  assert.equal(r.timedOut, false);
});

Deno.test("spawn: the environment is exactly the one given", async () => {
  const r = await spawnPipeline(request([["env"]], { env: { PATH, ONLY_THIS: "1" } }));
  const names = text(r.stdout).trim().split("\n").map((l) => l.split("=")[0]).sort();
  assert.deepEqual(names, ["ONLY_THIS", "PATH"]);
});

Deno.test("spawn: a stage has no controlling terminal to read from", async () => {
  const r = await spawnPipeline(
    request([["sh", "-c", "cat /dev/tty 2>/dev/null && echo READ || echo NO-TTY"]]),
  );
  assert.equal(text(r.stdout).trim(), "NO-TTY");
});

Deno.test("spawn: a stage that never reads its stdin is stopped by the timeout", async () => {
  const r = await spawnPipeline(
    request([["sleep", "30"]], { stdin: new Uint8Array(4 << 20), timeoutMs: 300 }),
  );
  assert.equal(r.timedOut, true);
  assert.equal(r.signal, "SIGKILL");
});

Deno.test("spawn: stderr of every stage is kept, and output past the cap stops the run", async () => {
  const r = await spawnPipeline(
    request([["sh", "-c", "echo one >&2; echo data"], ["sh", "-c", "cat; echo two >&2"]]),
  );
  assert.equal(text(r.stderr), "one\ntwo\n");
  assert.equal(text(r.stdout), "data\n");
  const flood = await spawnPipeline(request([["yes"]], { maxOutputBytes: 1000 }));
  assert.equal(flood.truncated, true);
  assert.equal(flood.stdout.length, 1000);
  assert.ok(flood.stdoutBytes >= 1000);
});

Deno.test("spawn: a stage that cannot start is reported by number and nothing is left", async () => {
  const req = request([["sleep", "30"]]);
  req.stages.push({ program: "/nonexistent/bb-program", args: [] });
  await assert.rejects(spawnPipeline(req), (e: Error & { stage?: number }) => {
    assert.equal(e.stage, 1);
    assert.equal(e.name, "NotFound");
    assert.match(e.message, /stage 2 could not start/);
    assert.ok(!e.message.includes("bb-program"), "the real path never crosses the wall");
    return true;
  });
  await assert.rejects(
    spawnPipeline({ ...req, stages: [] }),
    /no stages/,
  );
});

Deno.test({
  name: "spawn: a daemon that escaped its group does not hold the run until the timeout",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "bb-spawn-" });
    const pidFile = join(dir, "daemon.pid");
    try {
      const r = await spawnPipeline(request([[
        "sh",
        "-c",
        `setsid sh -c 'echo $$ > "${pidFile}"; exec sleep 30' & sleep 0.2; echo done`,
      ]], { timeoutMs: 25_000 }));
      assert.equal(text(r.stdout), "done\n");
      assert.equal(r.timedOut, false, "the run ended when its stage did");
      const pid = Number(await Deno.readTextFile(pidFile));
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("spawn: a wrapper argv prefix runs before each stage's program", async () => {
  const r = await spawnPipeline({
    ...request([["echo", "wrapped"]]),
    wrapper: [which("env"), "WRAPPED=yes"],
  });
  assert.equal(text(r.stdout), "wrapped\n");
  const env = await spawnPipeline({ ...request([["env"]]), wrapper: [which("env"), "W=1"] });
  assert.match(text(env.stdout), /^W=1$/m);
});

// Unconfined runs (issue 21): a `setsid` child escapes every group signal, so where this
// process's cgroup is writable a run gets a cgroup folder of its own, killed when it ends.
const found = await findRunCgroup(Deno.cwd(), Deno.cwd(), directSpawner);

Deno.test({
  name: "spawn: in its own cgroup, what a run left behind ends with it and the folder goes",
  ignore: !found.ok,
  fn: async () => {
    if (!found.ok) return;
    const dir = await Deno.makeTempDir({ prefix: "bb-cg-" });
    // On the leftover's command line (the `:` keeps sh from becoming the sleep), for pgrep.
    const marker = `bb-cg-leftover-${crypto.randomUUID()}`;
    try {
      const r = await spawnPipeline(request([[
        "sh",
        "-c",
        `cat /proc/self/cgroup; setsid sh -c 'touch started; sleep 30; :' ${marker} ` +
        "> /dev/null 2>&1 < /dev/null & while [ ! -e started ]; do sleep 0.05; done",
      ]], { cwd: dir, cgroup: found.value }));
      assert.equal(r.code, 0, text(r.stderr));
      assert.equal(r.cgroupEnded, true);
      const own = /^0::(\/.*)$/m.exec(text(r.stdout))?.[1] ?? "";
      assert.match(own, /\/bravebot-\d+-\d+-[0-9a-f]{8}$/, "the stage ran in the run's folder");
      assert.equal(await leftRunning(marker), "", "what the run left behind ended with it");
      // Deno does not look into /sys: `test` does.
      const folder = `${found.value.parent}/${own.split("/").at(-1)}`;
      const there = await new Deno.Command("sh", { args: ["-c", 'test -e "$1"', "_", folder] })
        .output();
      assert.equal(there.code, 1, "the run's folder was removed");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
