/** Run confinement's decisions, without depending on whether bwrap works on this machine. */
import assert from "node:assert/strict";
import { bwrapArgs, planConfinement, sandboxStatus, type Spawner } from "./sandbox.ts";
import { settingsFrom } from "../state/settings.ts";

const box = { workspace: "/ws", scratch: "/state/s/scratch", hide: ["/state"] };

Deno.test("sandbox: the workspace and scratch are writable, the state hidden, no network", () => {
  const a = bwrapArgs("/usr/bin/bwrap", box);
  const at = (...xs: string[]) => a.findIndex((_, i) => xs.every((x, j) => a[i + j] === x));
  assert.equal(a[0], "/usr/bin/bwrap");
  assert.ok(at("--ro-bind", "/", "/") >= 0);
  assert.ok(at("--unshare-net") > 0);
  assert.ok(at("--die-with-parent") > 0);
  // The sandbox's own session and group, apart from bwrap's outer process: what a stop signals.
  assert.ok(at("--new-session") > 0);
  assert.equal(a.at(-1), "--", "the stage's argv follows and is never read as bwrap options");
  // Later mounts cover earlier ones: /tmp, then the workspace, then the hidden state, then
  // scratch (which may lie inside the state directory).
  const ro = at("--ro-bind", "/", "/");
  const tmp = at("--tmpfs", "/tmp");
  const ws = at("--bind", "/ws", "/ws");
  const hide = at("--tmpfs", "/state");
  const scratch = at("--bind", box.scratch, box.scratch);
  assert.ok(ro < tmp && tmp < ws && ws < hide && hide < scratch, a.join(" "));
});

Deno.test("sandbox: auto by default; bwrap configured but unusable refuses, auto says why and runs bare", async () => {
  const never: Spawner = () => Promise.reject(new Error("must not spawn"));
  const none = await planConfinement(settingsFrom({ run: { sandbox: "none" } }), box, never);
  assert.deepEqual(none, {
    ok: true,
    value: { confined: false, why: 'run.sandbox is "none" in the config' },
  });
  assert.equal(settingsFrom({}).sandbox, "auto");
  const failing: Spawner = () =>
    Promise.resolve({
      ok: true,
      value: {
        stdout: new Uint8Array(),
        stderr: new TextEncoder().encode("bwrap: No permissions to create new namespace\n"),
        code: 1,
        signal: null,
        stages: [{ code: 1, signal: null }],
        durationMs: 1,
        timedOut: false,
        truncated: false,
        stopSignals: [],
        stdoutBytes: 0,
        stderrBytes: 40,
      },
    });
  const planned = await planConfinement(settingsFrom({ run: { sandbox: "bwrap" } }), box, failing);
  assert.equal(planned.ok, false);
  const message = planned.ok ? "" : planned.error;
  assert.match(message, /nothing was run/);
  if (Deno.build.os === "linux") {
    assert.match(message, /not on PATH|No permissions to create new namespace/);
  }
  // The same machine with "auto": unconfined, and the reason is kept for the person.
  const auto = await planConfinement(settingsFrom({}), box, failing);
  assert.ok(auto.ok && !auto.value.confined);
  if (auto.ok && !auto.value.confined && Deno.build.os === "linux") {
    assert.match(auto.value.why, /not on PATH|No permissions to create new namespace/);
  }
});

Deno.test("sandbox: run.writable folders are bound writable, run.network keeps the network", () => {
  const closed = bwrapArgs("/usr/bin/bwrap", { ...box, writable: ["/home/u/.cache/deno"] });
  const at = (a: string[], ...xs: string[]) =>
    a.findIndex((_, i) => xs.every((x, j) => a[i + j] === x));
  assert.ok(at(closed, "--bind-try", "/home/u/.cache/deno", "/home/u/.cache/deno") > 0);
  assert.ok(at(closed, "--unshare-net") > 0);
  assert.ok(at(closed, "--unshare-pid") > 0, "a PID namespace that ends with the run");
  const open = bwrapArgs("/usr/bin/bwrap", { ...box, network: true });
  assert.equal(at(open, "--unshare-net"), -1);
});

Deno.test("sandbox: doctor's status names whether confinement is in use", async () => {
  const off = await sandboxStatus(settingsFrom({ run: { sandbox: "none" } }));
  assert.equal(off.configured, "none");
  assert.equal(off.inUse, false);
  assert.match(off.detail, /not in use|not confined/);
  const auto = await sandboxStatus(settingsFrom({}));
  assert.equal(auto.configured, "auto");
  assert.match(
    auto.detail,
    auto.inUse ? /^in use/ : /^not in use: .+; run stages are not confined/,
  );
  const on = await sandboxStatus(settingsFrom({ run: { sandbox: "bwrap" } }));
  assert.equal(on.configured, "bwrap");
  assert.match(on.detail, on.inUse ? /^in use/ : /runs are refused/);
});

// Without the workspace skip, a `bwrap` the repository ships on a PATH entry inside the
// workspace was taken as the wall's own program and handed every confined run.
Deno.test("sandbox: a bwrap inside the workspace is never the wall's program", async () => {
  if (Deno.build.os !== "linux") return;
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-sbx-ws-" }));
  const before = Deno.env.get("PATH") ?? "";
  try {
    await Deno.mkdir(`${ws}/bin`);
    await Deno.writeTextFile(`${ws}/bin/bwrap`, '#!/bin/sh\nexec "$@"\n');
    await Deno.chmod(`${ws}/bin/bwrap`, 0o755);
    Deno.env.set("PATH", `${ws}/bin:${before}`);
    const seen: string[] = [];
    const spawner: Spawner = (request) => {
      seen.push(request.wrapper?.[0] ?? request.stages[0].program);
      return Promise.resolve({ ok: false, error: "not run in this test" });
    };
    const planned = await planConfinement(
      settingsFrom({ run: { sandbox: "bwrap" } }),
      { workspace: ws, scratch: `${ws}/.s`, hide: [] },
      spawner,
    );
    assert.ok(seen.every((p) => !p.startsWith(ws)), `spawned ${seen.join(", ")}`);
    assert.ok(!planned.ok || !planned.value.confined || !planned.value.wrapper[0].startsWith(ws));
  } finally {
    Deno.env.set("PATH", before);
    await Deno.remove(ws, { recursive: true });
  }
});
