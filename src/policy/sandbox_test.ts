/** Run confinement's decisions, without depending on whether bwrap works on this machine. */
import assert from "node:assert/strict";
import {
  bwrapArgs,
  planConfinement,
  readOnlyMount,
  sandboxStatus,
  type Spawner,
  type StageBox,
} from "./sandbox.ts";
import { NO_COVERS } from "./host_sockets.ts";
import { settingsFrom } from "../state/settings.ts";
import type { SpawnResult } from "../worker/protocol.ts";
import { effectiveUid } from "../worker/capabilities.ts";
import { inOwnProcess } from "../../test/support/child_test.ts";

const box: StageBox = {
  workspace: "/ws",
  scratch: "/state/s/scratch",
  hide: ["/state"],
  keep: [],
  covers: NO_COVERS,
};

/** Where `xs` starts in `a`, or -1. */
const at = (a: string[], ...xs: string[]) =>
  a.findIndex((_, i) => xs.every((x, j) => a[i + j] === x));

Deno.test("sandbox: the workspace and scratch are writable, the state hidden, no network", () => {
  const a = bwrapArgs("/usr/bin/bwrap", box);
  assert.equal(a[0], "/usr/bin/bwrap");
  assert.ok(at(a, "--ro-bind", "/", "/") >= 0);
  assert.ok(at(a, "--unshare-net") > 0);
  assert.ok(at(a, "--die-with-parent") > 0);
  // The sandbox's own session and group, apart from bwrap's outer process: what a stop signals.
  assert.ok(at(a, "--new-session") > 0);
  assert.equal(a.at(-1), "--", "the stage's argv follows and is never read as bwrap options");
  // Later mounts cover earlier ones: /tmp, then the workspace, then the hidden state, then
  // scratch (which may lie inside the state directory).
  const ro = at(a, "--ro-bind", "/", "/");
  const tmp = at(a, "--tmpfs", "/tmp");
  const ws = at(a, "--bind", "/ws", "/ws");
  const hide = at(a, "--tmpfs", "/state");
  const scratch = at(a, "--bind", box.scratch, box.scratch);
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
// It sets PATH: in a process of its own, where no other test file's programs are looked up.
inOwnProcess(import.meta.url, {
  name: "sandbox: a bwrap inside the workspace is never the wall's program",
  async fn() {
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
      assert.ok(!planned.ok || !planned.value.confined || !planned.value.bwrap.startsWith(ws));
    } finally {
      Deno.env.set("PATH", before);
      await Deno.remove(ws, { recursive: true });
    }
  },
});

Deno.test("sandbox: no capability, /proc/sys read-only, the host's sockets covered last", () => {
  const covered: StageBox = {
    ...box,
    covers: { sockets: ["/run/user/1000/bus"], folders: ["/run/secret"] },
  };
  const a = bwrapArgs("/usr/bin/bwrap", covered);
  const proc = at(a, "--proc", "/proc");
  const sys = at(a, "--ro-bind", "/proc/sys", "/proc/sys");
  assert.ok(proc > 0 && sys > proc, "bound over the stage's own /proc, after it");
  assert.ok(at(a, "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger") > proc);
  assert.ok(at(a, "--cap-drop", "ALL") > 0);
  assert.equal(a.indexOf("--cap-add"), -1);
  assert.ok(at(a, "--unshare-user-try") > 0, "its own user namespace where the kernel allows");
  const scratch = at(a, "--bind", box.scratch, box.scratch);
  const socket = at(a, "--ro-bind", "/dev/null", "/run/user/1000/bus");
  const folder = at(a, "--tmpfs", "/run/secret");
  assert.ok(scratch < folder && folder < socket, a.join(" "));
  assert.ok(socket < a.indexOf("--"), "before the command");
});

Deno.test("sandbox: a kept capability is added back after ALL is dropped, with no user namespace", () => {
  const a = bwrapArgs("/usr/bin/bwrap", { ...box, keep: ["CAP_DAC_OVERRIDE"] });
  const drop = at(a, "--cap-drop", "ALL");
  assert.ok(drop > 0 && at(a, "--cap-add", "CAP_DAC_OVERRIDE") > drop);
  assert.ok(!a.some((x) => x.startsWith("--unshare-user") || x === "--unshare-all"), a.join(" "));
});

const STATUS_DROPPED = "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n" +
  "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n";
const MOUNTS_RO = "20 19 0:5 / /proc rw,nosuid - proc proc rw\n" +
  "21 20 0:5 /sys /proc/sys ro,nosuid - proc proc rw\n";

/** A spawner whose every run prints `stdout` and exits `code`; it records each wrapper. */
function answering(stdout: string, code = 0, fails?: (wrapper: string[]) => boolean) {
  const wrappers: string[][] = [];
  const spawner: Spawner = (request) => {
    wrappers.push(request.wrapper ?? []);
    const failed = fails?.(request.wrapper ?? []) ?? false;
    const value: SpawnResult = {
      stdout: new TextEncoder().encode(failed ? "" : stdout),
      stderr: new TextEncoder().encode(failed ? "bwrap: Can't mount CANARY-path\n" : ""),
      code: failed ? 1 : code,
      signal: null,
      stages: [{ code: failed ? 1 : code, signal: null }],
      durationMs: 1,
      timedOut: false,
      truncated: false,
      stopSignals: [],
      stdoutBytes: stdout.length,
      stderrBytes: 0,
    };
    return Promise.resolve({ ok: true, value });
  };
  return { spawner, wrappers };
}

const linuxWithBwrap = Deno.build.os === "linux" &&
  (Deno.env.get("PATH") ?? "").split(":").some((d) => {
    try {
      return Deno.statSync(`${d}/bwrap`).isFile;
    } catch {
      return false;
    }
  });

// The probe ran `true` and looked only at its exit status: a box in which root kept every
// capability, or /proc/sys stayed writable, was called confined.
Deno.test({
  name:
    "sandbox: the probe requires the planned capabilities, NoNewPrivs and a read-only /proc/sys",
  ignore: !linuxWithBwrap,
  fn: async () => {
    const good = answering(STATUS_DROPPED + MOUNTS_RO);
    const fine = await planConfinement(settingsFrom({}), box, good.spawner);
    assert.ok(fine.ok && fine.value.confined, JSON.stringify(fine));
    assert.deepEqual(good.wrappers[0].slice(-1), ["--"]);
    const cases: [string, string, RegExp][] = [
      [
        STATUS_DROPPED.replace(/CapEff:\t0+/, "CapEff:\t000001fffeffffff") + MOUNTS_RO,
        "every capability",
        /holds capabilities .*CAP_DAC_OVERRIDE.* where none were planned/,
      ],
      [
        STATUS_DROPPED.replace(/CapPrm:\t0+/, "CapPrm:\t0000000000000002") + MOUNTS_RO,
        "a permitted capability",
        /holds capabilities CAP_DAC_OVERRIDE where none/,
      ],
      [
        STATUS_DROPPED.replace("NoNewPrivs:\t1", "NoNewPrivs:\t0") + MOUNTS_RO,
        "no NoNewPrivs",
        /NoNewPrivs/,
      ],
      [STATUS_DROPPED + MOUNTS_RO.replace("/proc/sys ro,", "/proc/sys rw,"), "rw", /proc\/sys/],
      [STATUS_DROPPED + MOUNTS_RO.split("\n")[0], "no /proc/sys mount", /proc\/sys/],
      ["", "nothing printed", /could not read the capabilities/],
    ];
    for (const [stdout, what, why] of cases) {
      const auto = await planConfinement(settingsFrom({}), box, answering(stdout).spawner);
      assert.ok(auto.ok && !auto.value.confined, `${what}: called confined`);
      if (auto.ok && !auto.value.confined) assert.match(auto.value.why, why, what);
      const strict = await planConfinement(
        settingsFrom({ run: { sandbox: "bwrap" } }),
        box,
        answering(stdout).spawner,
      );
      assert.ok(!strict.ok, `${what}: bwrap configured, yet not refused`);
      assert.match(strict.error, /nothing was run/);
    }
    // As root over a workspace another user owns, CAP_DAC_OVERRIDE (bit 1) is planned: that, and
    // nothing else, passes.
    if (effectiveUid() !== 0) return;
    const ws = await Deno.makeTempDir({ prefix: "bb-sbx-foreign-" });
    try {
      await Deno.chown(ws, 4242, 4242);
      const foreign = { ...box, workspace: ws };
      const kept = STATUS_DROPPED.replace(/CapPrm:\t0+/, "CapPrm:\t0000000000000002")
        .replace(/CapEff:\t0+/, "CapEff:\t0000000000000002");
      const yes = await planConfinement(
        settingsFrom({}),
        foreign,
        answering(kept + MOUNTS_RO).spawner,
      );
      assert.ok(yes.ok && yes.value.confined, JSON.stringify(yes));
      if (yes.ok && yes.value.confined) assert.deepEqual(yes.value.box.keep, ["CAP_DAC_OVERRIDE"]);
      const none = await planConfinement(
        settingsFrom({}),
        foreign,
        answering(STATUS_DROPPED + MOUNTS_RO).spawner,
      );
      assert.ok(none.ok && !none.value.confined);
      if (none.ok && !none.value.confined) {
        assert.match(none.value.why, /holds capabilities none where CAP_DAC_OVERRIDE were planned/);
      }
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});

Deno.test("sandbox: readOnlyMount looks at the top mount of the point, and only at it", () => {
  assert.equal(readOnlyMount(MOUNTS_RO, "/proc/sys"), true);
  assert.equal(
    readOnlyMount(MOUNTS_RO + "22 21 0:5 /sys /proc/sys rw - proc proc rw\n", "/proc/sys"),
    false,
  );
  assert.equal(
    readOnlyMount("21 20 0:5 /sys /proc/system ro - proc proc rw\n", "/proc/sys"),
    false,
  );
  assert.equal(
    readOnlyMount("21 20 0:5 /sys /proc/sys rw,nosuid,ro-ish - p p rw\n", "/proc/sys"),
    false,
  );
});

// With run.sandbox "auto", a box whose hides bwrap cannot mount was run with no confinement at
// all: the one failure that must never make a run less confined.
Deno.test({
  name:
    "sandbox: a hide that cannot be mounted refuses runs, in auto too; bwrap's words to the person",
  ignore: !linuxWithBwrap,
  fn: async () => {
    const hides = (w: string[]) => at(w, "--tmpfs", "/state") >= 0;
    for (const sandbox of ["auto", "bwrap"] as const) {
      const { spawner, wrappers } = answering(STATUS_DROPPED + MOUNTS_RO, 0, hides);
      const planned = await planConfinement(settingsFrom({ run: { sandbox } }), box, spawner);
      assert.ok(!planned.ok, `${sandbox}: ${JSON.stringify(planned)}`);
      assert.match(planned.error, /cannot hide what it must here: bwrap fails here.*CANARY-path/);
      assert.match(planned.error, /nothing was run/);
      assert.equal(wrappers.length, 2, "the full box, then the same without its hides");
      assert.equal(hides(wrappers[1]), false);
    }
    // bwrap failing with and without the hides is bwrap not working: auto runs bare, as before.
    const broken = answering("", 1, () => true);
    const auto = await planConfinement(settingsFrom({}), box, broken.spawner);
    assert.ok(auto.ok && !auto.value.confined);
  },
});
