/**
 * Confinement of run stages with bwrap (docs/contract.md §13.4): with `run.sandbox: "bwrap"`, a
 * stage cannot write outside the workspace and scratch folder, cannot reach the network and cannot
 * read Brave Bot's state. Where bwrap is missing or does not work (some containers), these tests
 * are skipped and say why — except in CI, which installs bwrap: there a skip would let CI pass
 * with confinement untested, so it fails instead.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  exists,
  refOf,
  type RunFixture,
  runRequests,
  withRunPolicy,
} from "./support/run_fixture.ts";
import { PolicyFilePerson } from "../src/person/policy_file.ts";
import { runTool } from "../src/tools/run.ts";
import type { ToolDef, ToolOutput } from "../src/tools/tool.ts";
import { bwrapArgs, sandboxStatus } from "../src/policy/sandbox.ts";
import { settingsFrom } from "../src/state/settings.ts";
import { effectiveUid } from "../src/worker/capabilities.ts";
import { MAX_ENTRIES } from "../src/policy/host_sockets.ts";
import { inOwnProcess } from "./support/child_test.ts";
import { leftRunning } from "./support/signal_log.ts";

const run = runTool as unknown as ToolDef<never>;

const status = await sandboxStatus(settingsFrom({ run: { sandbox: "bwrap" } }));
const skip = !status.inUse;
const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
if (skip) console.log(`bwrap confinement tests skipped: ${status.detail}`);

Deno.test({
  name: "bwrap: in CI confinement works, so its tests run rather than skip",
  ignore: !inCi,
  fn: () => {
    assert.ok(!skip, `CI installs bubblewrap, but confinement does not work: ${status.detail}`);
  },
});

const config = { run: { sandbox: "bwrap" as const } };

/** The run's whole output, from the reference it was kept as. */
async function outputOf(fx: RunFixture, out: ToolOutput): Promise<string> {
  const found = fx.policy.refs.lookup(`ref:${refOf(out)}`);
  assert.ok(found.ok, out.content);
  return new TextDecoder().decode(await fx.policy.refs.bytes(found.value));
}

/** Whether the run's output (kept as a reference, or shown) holds `text`. */
async function printed(fx: RunFixture, out: ToolOutput, text: string): Promise<boolean> {
  return out.content.includes(text) || (await outputOf(fx, out)).includes(text);
}

/**
 * A folder outside the workspace that a stage sees as the machine's: not under /tmp, which a
 * stage sees as its own empty one, so a write that escapes lands here and can be seen.
 */
async function visibleOutside(prefix: string): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix }));
}

/** The capability sets a stage's /proc/self/status shows. */
function capabilities(text: string): { eff: string; prm: string; noNewPrivs: string } {
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(text)?.[1] ?? "?";
  return { eff: field("CapEff"), prm: field("CapPrm"), noNewPrivs: field("NoNewPrivs") };
}

const NO_CAPABILITY = "0000000000000000";
const root = Deno.build.os === "linux" && effectiveUid() === 0;

Deno.test({
  name: "bwrap: a confined stage writes in the workspace but not outside it",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({
      config,
      answers: [{ run: { answer: "once" } }],
    }, async (fx) => {
      const escaped = join(fx.outside, "escaped.txt");
      const out = await fx.call(run, {
        pipeline: [{
          program: "sh",
          args: [
            "-c",
            `echo in > inside.txt; echo out > "${escaped}" || echo REFUSED; echo y > /etc/bb-escaped || echo REFUSED-ETC`,
          ],
        }],
      });
      assert.equal(out.isError, false, out.content);
      assert.match(out.content, /\[confined\]/);
      assert.equal(await exists(join(fx.root, "inside.txt")), true);
      assert.equal(await exists(escaped), false);
      const found = fx.policy.refs.lookup(`ref:${refOf(out)}`);
      assert.ok(found.ok);
      const text = new TextDecoder().decode(await fx.policy.refs.bytes(found.value));
      assert.match(text, /^REFUSED$/m);
      assert.match(text, /^REFUSED-ETC$/m);
      assert.equal(await exists("/etc/bb-escaped"), false);
    });
  },
});

Deno.test({
  name: "bwrap: a confined stage cannot reach the network, an unconfined one can",
  ignore: skip,
  fn: async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const accepting = (async () => {
      for await (const conn of listener) conn.close();
    })().catch(() => {});
    const probe = [
      "-e",
      `require("net").connect(${port}, "127.0.0.1")` +
      `.on("connect", () => { console.log("CONNECTED"); process.exit(0); })` +
      `.on("error", (e) => { console.log("NO-NETWORK " + e.code); process.exit(0); });`,
    ];
    try {
      for (const confined of [false, true]) {
        await withRunPolicy({
          config: confined ? config : { run: { sandbox: "none" } },
          answers: [{ run: { answer: "vouch" } }],
        }, async (fx) => {
          const out = await fx.call(run, { pipeline: [{ program: "node", args: probe }] });
          assert.equal(out.isError, false, out.content);
          if (confined) {
            assert.match(out.content, /NO-NETWORK/);
            assert.ok(!out.content.includes("CONNECTED"));
          } else assert.match(out.content, /CONNECTED/, "the control run reaches the listener");
        });
      }
    } finally {
      listener.close();
      await accepting;
    }
  },
});

Deno.test({
  name: "bwrap: a confined stage cannot read Brave Bot's state directory",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({ config, answers: [{ run: { answer: "vouch" } }] }, async (fx) => {
      const secret = join(fx.stateDir, "trust.json");
      await Deno.writeTextFile(secret, "CANARY-state");
      const out = await fx.call(run, {
        pipeline: [{ program: "sh", args: ["-c", `cat "${secret}" || echo HIDDEN`] }],
      });
      assert.match(out.content, /HIDDEN/);
      assert.ok(!out.content.includes("CANARY-state"));
    });
  },
});

Deno.test({
  name: "bwrap: runs are confined by default, and the approval says so",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({ answers: [{ run: { answer: "once" } }] }, async (fx) => {
      const escaped = join(fx.outside, "escaped.txt");
      const out = await fx.call(run, {
        pipeline: [{ program: "sh", args: ["-c", `echo out > "${escaped}" || echo REFUSED`] }],
      });
      assert.match(out.content, /\[confined\]/);
      assert.equal(await exists(escaped), false);
      const [asked] = runRequests(fx);
      assert.equal(asked.confinement.confined, true);
      assert.match(JSON.stringify(asked.confinement), /no network.*no capabilities/);
    });
  },
});

Deno.test({
  name: "bwrap: the person may run one command unconfined; it is never stored in a vouch",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({
      answers: [{ run: { answer: "once", unconfined: true } }, { run: { answer: "vouch" } }],
    }, async (fx) => {
      const escaped = join(fx.outside, "escaped.txt");
      const args = ["-c", `echo out > "${escaped}" && echo WROTE || echo REFUSED`];
      const out = await fx.call(run, { pipeline: [{ program: "sh", args }] });
      assert.ok(!out.content.includes("[confined]"), out.content);
      assert.equal(await exists(escaped), true, "run unconfined, as the person chose");
      const entry = fx.policy.audit.entries.find((e) => e.decision === "ran once, unconfined");
      assert.equal(entry?.routing.unconfined, true);
      await Deno.remove(escaped);
      // The next run of it asks again and, vouched now, runs confined: no vouch unconfines.
      const again = await fx.call(run, { pipeline: [{ program: "sh", args }] });
      assert.match(again.content, /\[confined\]/);
      assert.equal(await exists(escaped), false);
      assert.equal(JSON.stringify(await fx.policy.vouches.list()).includes("unconfined"), false);
    });
  },
});

Deno.test({
  name: 'bwrap: a policy-file entry with "unconfined": true runs outside; without, inside',
  ignore: skip,
  fn: async () => {
    for (const unconfined of [true, false]) {
      const approvals = { run: [{ prefix: ["touch"], ...(unconfined ? { unconfined } : {}) }] };
      await withRunPolicy(
        { approvals, person: new PolicyFilePerson(approvals) },
        async (fx) => {
          const target = join(fx.outside, "made");
          await fx.call(run, { pipeline: [{ program: "touch", args: [target] }] });
          assert.equal(await exists(target), unconfined);
        },
      );
    }
  },
});

Deno.test({
  name: "bwrap: nothing a confined command starts outlives the run, and /tmp is its own",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({ answers: [{ run: { answer: "once" } }] }, async (fx) => {
      // On the background child's command line (the `:` keeps sh from becoming the sleep).
      const marker = `bb-outlives-${crypto.randomUUID()}`;
      const tmpName = `/tmp/bb-private-${crypto.randomUUID()}`;
      const out = await fx.call(run, {
        pipeline: [{
          program: "sh",
          args: [
            "-c",
            `echo x > ${tmpName}; sh -c 'sleep 30; :' ${marker} > /dev/null 2>&1 & echo started`,
          ],
        }],
      });
      assert.match(out.content, /\[confined\]/);
      assert.ok(await printed(fx, out, "started"));
      assert.equal(await exists(tmpName), false, "the run's /tmp is not the machine's");
      assert.equal(await leftRunning(marker), "", "the PID namespace ended with the run");
    });
  },
});

Deno.test({
  name: "bwrap: git, deno test and npm test on a small project pass confined",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({
      files: {
        "a_test.ts": 'Deno.test("adds", () => { if (1 + 1 !== 2) throw new Error("no"); });\n',
        "package.json": JSON.stringify({
          name: "fixture",
          version: "1.0.0",
          scripts: { test: "node -e \"require('assert').equal(1 + 1, 2); console.log('npm-ok')\"" },
        }),
      },
      answers: [
        { run: { answer: "vouch" } },
        { run: { answer: "vouch" } },
        { run: { answer: "vouch" } },
        { run: { answer: "vouch" } },
      ],
    }, async (fx) => {
      const stages = [
        { program: "git", args: ["init", "-q", "."] },
        { program: "git", args: ["status", "--short"] },
        { program: "deno", args: ["test", "--no-check", "a_test.ts"] },
        { program: "npm", args: ["test"] },
      ];
      const outs = [];
      for (const stage of stages) {
        const out = await fx.call(run, { pipeline: [stage] });
        assert.equal(out.isError, false, out.content);
        assert.match(out.content, /\[confined\]/, out.content);
        assert.match(out.content, /exit 0|exit status 0|exited 0/, out.content);
        outs.push(out.content);
      }
      assert.match(outs[2], /1 passed/);
      assert.match(outs[3], /npm-ok/);
    });
  },
});

/**
 * Runs `fn` with a `bwrap` first on PATH whose shell script is `body`. PATH is the process's:
 * a test using this runs in a process of its own (inOwnProcess), not beside other test files.
 */
async function withFakeBwrap(body: string, fn: () => Promise<void>): Promise<void> {
  const bin = await Deno.makeTempDir({ prefix: "bb-fake-bwrap-" });
  await Deno.writeTextFile(join(bin, "bwrap"), `#!/bin/sh\n${body}\n`);
  await Deno.chmod(join(bin, "bwrap"), 0o755);
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  try {
    await fn();
  } finally {
    Deno.env.set("PATH", path);
    await Deno.remove(bin, { recursive: true });
  }
}

/**
 * With `run.sandbox: "bwrap"`, a run is refused: the planner gets our sentence and never
 * `unsaid`, the person a notice that `told` accepts.
 */
async function refusedInOurWords(unsaid: string, told: (notice: string) => boolean) {
  await withRunPolicy({ config }, async (fx) => {
    const out = await fx.call(run, { pipeline: [{ program: "true", args: [] }] });
    assert.equal(out.isError, true, out.content);
    assert.match(out.content, /bwrap cannot confine commands here; nothing was run/);
    assert.ok(!out.content.includes(unsaid), `the planner was given bwrap's words: ${out.content}`);
    assert.ok(
      fx.scripted!.notices.some(told),
      `the person was not told why: ${fx.scripted!.notices.join(" | ")}`,
    );
  });
}

inOwnProcess(import.meta.url, {
  name:
    "bwrap: a configured wall that cannot stand refuses in our words; bwrap's own go to the person",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    // A bwrap first on PATH that fails as a broken one does, naming a path.
    const canary = "CANARY-bwrap-said-/home/someone/secret";
    await withFakeBwrap(
      `echo 'bwrap: ${canary}' >&2\nexit 1`,
      () => refusedInOurWords("CANARY", (n) => n.includes(canary)),
    );
  },
});

// The probe looked only at bwrap's exit status: a bwrap that leaves a stage capabilities (as
// root, every one) was called confined. Here one that drops none and adds CAP_SYS_ADMIN.
inOwnProcess(import.meta.url, {
  name: "bwrap: a box that leaves a stage capabilities is never called confined",
  ignore: skip,
  fn: async () => {
    const real = status.detail.match(/confined by (\S+) /)?.[1];
    assert.ok(real, status.detail);
    const script = `for a; do shift; if [ "$a" = --cap-drop ]; then skip=1; continue; fi; ` +
      `if [ "$skip" = 1 ]; then skip=; continue; fi; set -- "$@" "$a"; done\n` +
      `exec ${real} --cap-add CAP_SYS_ADMIN "$@"`;
    await withFakeBwrap(script, async () => {
      await refusedInOurWords(
        "CAP_SYS_ADMIN",
        (n) => /holds capabilities (CAP_SYS_ADMIN|CAP_CHOWN)/.test(n),
      );
      // With "auto" it runs, but unconfined, and the approval says why.
      await withRunPolicy({ answers: [{ run: { answer: "once" } }] }, async (fx) => {
        const out = await fx.call(run, { pipeline: [{ program: "true", args: [] }] });
        assert.ok(!out.content.includes("[confined]"), out.content);
        const [asked] = runRequests(fx);
        assert.equal(asked.confinement.confined, false);
        assert.match(JSON.stringify(asked.confinement), /holds capabilities/);
      });
    });
  },
});

// As root, a stage kept every capability (CapEff 000001fffeffffff): it remounted / writable and
// wrote outside the workspace. Capabilities are dropped, for root and for anyone else.
Deno.test({
  name: "bwrap: a confined stage holds no capability, so it cannot remount / and write outside",
  ignore: skip,
  fn: async () => {
    const outside = await visibleOutside("bb-remount-");
    try {
      await withRunPolicy({ config, answers: [{ run: { answer: "once" } }] }, async (fx) => {
        const target = join(outside, "escaped.txt");
        const out = await fx.call(run, {
          pipeline: [{
            program: "sh",
            args: [
              "-c",
              `cat /proc/self/status; mount -o remount,bind,rw / 2>/dev/null && echo REMOUNTED; ` +
              `echo x > "${target}" 2>/dev/null && echo ESCAPED || echo REFUSED`,
            ],
          }],
        });
        assert.match(out.content, /\[confined\]/);
        const text = await outputOf(fx, out);
        assert.deepEqual(capabilities(text), {
          eff: NO_CAPABILITY,
          prm: NO_CAPABILITY,
          noNewPrivs: "1",
        });
        assert.ok(!text.includes("REMOUNTED"), text);
        assert.match(text, /^REFUSED$/m);
        assert.equal(await exists(target), false, "a stage wrote outside the workspace");
      });
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
});

// Without capabilities uid 0 can still write the host's sysctls through /proc/sys
// (kernel.core_pattern included). Opening for append writes nothing: it only asks.
Deno.test({
  name: "bwrap: a confined stage cannot open /proc/sys or /proc/sysrq-trigger for writing",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({ config, answers: [{ run: { answer: "once" } }] }, async (fx) => {
      const out = await fx.call(run, {
        pipeline: [{
          program: "sh",
          args: [
            "-c",
            "(exec 3>>/proc/sys/kernel/core_pattern) 2>/dev/null && echo SYSCTL-WRITABLE; " +
            "[ ! -e /proc/sysrq-trigger ] || " +
            "{ (exec 3>>/proc/sysrq-trigger) 2>/dev/null && echo SYSRQ-WRITABLE; }; echo DONE",
          ],
        }],
      });
      const text = await outputOf(fx, out);
      assert.match(text, /DONE/);
      assert.ok(!text.includes("WRITABLE"), text);
    });
  },
});

// As root, `umount -l` of the tmpfs hiding Brave Bot's state, and a remount, let a stage read
// and rewrite trust.json.
Deno.test({
  name: "bwrap: a confined stage cannot unmount the tmpfs over the state and reach trust.json",
  ignore: skip,
  fn: async () => {
    await withRunPolicy({ config, answers: [{ run: { answer: "once" } }] }, async (fx) => {
      const trust = join(fx.stateDir, "trust.json");
      await Deno.writeTextFile(trust, '{"CANARY-trust":true}\n');
      const s = fx.stateDir;
      const out = await fx.call(run, {
        pipeline: [{
          program: "sh",
          args: [
            "-c",
            `for i in 1 2 3 4; do umount -l "${s}" 2>/dev/null; umount -l /tmp 2>/dev/null; done; ` +
            `cat "${trust}" 2>/dev/null; ` +
            `mount -o remount,bind,rw / 2>/dev/null; ` +
            `mount -o remount,bind,rw "$(findmnt -no TARGET -T "${s}")" 2>/dev/null; ` +
            `echo '{"pwned":true}' > "${trust}" 2>/dev/null; echo DONE`,
          ],
        }],
      });
      const text = await outputOf(fx, out);
      assert.match(text, /DONE/);
      // A write lands in the stage's own tmpfs at best: the file on the machine is unchanged.
      assert.equal(await Deno.readTextFile(trust), '{"CANARY-trust":true}\n');
      assert.ok(!text.includes("CANARY-trust"), "the stage read trust.json");
    });
  },
});

/** A listener on a Unix socket at `path` that answers each connection with one line. */
function socketListener(path: string): { close(): Promise<void> } {
  const listener = Deno.listen({ transport: "unix", path });
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.write(new TextEncoder().encode("DAEMON-ANSWERED\n")).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  return {
    close: async () => {
      listener.close();
      await serving;
    },
  };
}

/** A node program that connects to each socket and prints `REACHED name` or `REFUSED name`. */
function connectEach(paths: Record<string, string>): string[] {
  return [
    "-e",
    `const net = require("net");
const paths = ${JSON.stringify(paths)};
let left = Object.keys(paths).length;
for (const [name, path] of Object.entries(paths)) {
  const done = (word) => { console.log(word + " " + name); if (--left === 0) process.exit(0); };
  const c = net.connect(path);
  c.on("data", (d) => { if (String(d).includes("DAEMON-ANSWERED")) { c.destroy(); done("REACHED"); } });
  c.on("error", () => done("REFUSED"));
}`,
  ];
}

// `--ro-bind / /` does not stop connect(): a confined stage reached a host daemon's socket (the
// session bus, docker, an ssh or gpg agent). Sockets named by the environment and found under
// $XDG_RUNTIME_DIR are covered; the control run, unconfined, reaches every one.
inOwnProcess(import.meta.url, {
  name: "bwrap: a confined stage cannot connect to the host's Unix sockets; unconfined it can",
  ignore: skip,
  fn: async () => {
    const dir = await visibleOutside("bb-sockets-");
    const runtimeDir = join(dir, "runtime");
    await Deno.mkdir(join(runtimeDir, "gnupg"), { recursive: true });
    const paths = {
      ssh: join(dir, "agent.sock"),
      dbus: join(dir, "bus.sock"),
      docker: join(dir, "docker.sock"),
      runtime: join(runtimeDir, "gnupg", "S.gpg-agent"),
    };
    const listeners = Object.values(paths).map(socketListener);
    const env = {
      SSH_AUTH_SOCK: paths.ssh,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${paths.dbus},guid=0123`,
      DOCKER_HOST: `unix://${paths.docker}`,
      XDG_RUNTIME_DIR: runtimeDir,
    };
    try {
      await withEnv(env, async () => {
        for (const confined of [false, true]) {
          await withRunPolicy({
            config: confined ? config : { run: { sandbox: "none" } },
            answers: [{ run: { answer: "once" } }],
          }, async (fx) => {
            const out = await fx.call(run, {
              pipeline: [{ program: "node", args: connectEach(paths) }],
            });
            const text = await outputOf(fx, out);
            for (const name of Object.keys(paths)) {
              assert.match(
                text,
                new RegExp(`^${confined ? "REFUSED" : "REACHED"} ${name}$`, "m"),
                `${confined ? "confined" : "unconfined"}: ${text}`,
              );
            }
          });
        }
      });
    } finally {
      for (const l of listeners) await l.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

// Root over a workspace another user owns (a container over a host checkout): without
// CAP_DAC_OVERRIDE root cannot write it, so that one capability is kept, and said.
Deno.test({
  name: "bwrap: as root over another user's workspace, git works and only CAP_DAC_OVERRIDE is kept",
  ignore: skip || !root,
  fn: async () => {
    await withRunPolicy({
      files: { "a.txt": "a\n" },
      config,
      answers: Array.from({ length: 3 }, () => ({ run: { answer: "once" as const } })),
      owner: 4242,
    }, async (fx) => {
      const outside = await visibleOutside("bb-foreign-");
      try {
        // git as stages of its own (the guard refuses git started by a shell line), with the
        // workspace marked safe on the line, as root over another user's checkout needs.
        const git = (...args: string[]) =>
          fx.call(run, {
            pipeline: [{ program: "git", args: ["-c", "safe.directory=*", ...args] }],
          });
        const out = await fx.call(run, {
          pipeline: [{
            program: "sh",
            args: [
              "-c",
              "cat /proc/self/status; echo b > b.txt && echo WROTE; " +
              "mount -o remount,bind,rw / 2>/dev/null && echo REMOUNTED; " +
              `echo x > "${outside}/escaped" 2>/dev/null && echo ESCAPED; echo DONE`,
            ],
          }],
        });
        const text = await outputOf(fx, out);
        assert.match(text, /^WROTE$/m, text);
        for (const args of [["init", "-q", "."], ["add", "a.txt", "b.txt"]]) {
          const ran = await git(...args);
          assert.match(ran.content, /exit status 0\b/, ran.content);
        }
        // CAP_DAC_OVERRIDE is bit 1.
        assert.deepEqual(capabilities(text), {
          eff: "0000000000000002",
          prm: "0000000000000002",
          noNewPrivs: "1",
        });
        assert.ok(!/REMOUNTED|ESCAPED/.test(text), text);
        const [asked] = runRequests(fx);
        assert.ok(asked.confinement.confined);
        assert.match(JSON.stringify(asked.confinement), /CAP_DAC_OVERRIDE/);
      } finally {
        await Deno.remove(outside, { recursive: true });
      }
    });
  },
});

/**
 * Sets `vars` for the length of `fn` (the socket search reads them at each run). They are the
 * process's: a test using this runs in a process of its own (inOwnProcess).
 */
async function withEnv(vars: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

// An agent started after the session planned its confinement (gpg-agent starts on demand) was
// not covered if the sockets were found once: they are found again for every run.
inOwnProcess(import.meta.url, {
  name: "bwrap: a socket that appears during the session is covered at the next run",
  ignore: skip,
  fn: async () => {
    const dir = await visibleOutside("bb-late-socket-");
    const path = join(dir, "agent.sock");
    let listener: { close(): Promise<void> } | null = null;
    try {
      await withEnv({ SSH_AUTH_SOCK: path }, () =>
        withRunPolicy({
          config,
          answers: [{ run: { answer: "vouch" } }],
        }, async (fx) => {
          const args = connectEach({ ssh: path });
          const first = await fx.call(run, { pipeline: [{ program: "node", args }] });
          assert.match(await outputOf(fx, first), /^REFUSED ssh$/m, "nothing listens yet");
          listener = socketListener(path);
          const second = await fx.call(run, { pipeline: [{ program: "node", args }] });
          assert.match(second.content, /\[confined\]/);
          assert.match(await outputOf(fx, second), /^REFUSED ssh$/m);
        }));
    } finally {
      await (listener as { close(): Promise<void> } | null)?.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

// Where the sockets cannot all be found, "auto" ran with no confinement at all: a hide that
// fails must never make a run less confined. Refused instead, in our words to the planner.
inOwnProcess(import.meta.url, {
  name: "bwrap: sockets that cannot all be found refuse the run, in auto too",
  ignore: skip,
  fn: async () => {
    const big = await visibleOutside("bb-many-entries-");
    try {
      const made = await new Deno.Command("sh", {
        args: ["-c", `seq 0 ${MAX_ENTRIES} | sed 's/^/f/' | xargs touch`],
        cwd: big,
      }).output();
      assert.equal(made.code, 0);
      const refusedHere = async (fx: RunFixture) => {
        const out = await fx.call(run, { pipeline: [{ program: "true", args: [] }] });
        assert.equal(out.isError, true, out.content);
        assert.match(out.content, /bwrap cannot confine commands here; nothing was run/);
        assert.ok(fx.scripted!.notices.some((n) => /more than \d+ entries/.test(n)));
      };
      // Found too many at a run of a session that planned without them.
      await withRunPolicy({ answers: [{ run: { answer: "vouch" } }] }, async (fx) => {
        const ran = await fx.call(run, { pipeline: [{ program: "true", args: [] }] });
        assert.match(ran.content, /\[confined\]/);
        await withEnv({ XDG_RUNTIME_DIR: big }, () => refusedHere(fx));
      });
      // And when planning: auto does not fall back to running unconfined.
      await withEnv(
        { XDG_RUNTIME_DIR: big },
        () => withRunPolicy({ answers: [{ run: { answer: "once" } }] }, refusedHere),
      );
    } finally {
      await Deno.remove(big, { recursive: true });
    }
  },
});

// Abstract Unix sockets have no path to cover: they belong to the network namespace, so a stage
// reaches them exactly when it keeps the network (docs/trust.md says so). Here: without it, not.
Deno.test({
  name:
    "bwrap: without run.network a confined stage cannot reach an abstract socket; with it, it can",
  ignore: skip,
  fn: async () => {
    const name = `bb-abstract-${crypto.randomUUID()}`;
    const daemon = new Deno.Command("node", {
      args: [
        "-e",
        `require("net").createServer((c) => c.end("DAEMON-ANSWERED\\n"))` +
        `.listen("\\0${name}", () => console.log("LISTENING"));`,
      ],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const reader = daemon.stdout.getReader();
      const { value } = await reader.read();
      assert.match(new TextDecoder().decode(value), /LISTENING/);
      reader.releaseLock();
      for (const network of [true, false]) {
        await withRunPolicy({
          config: { run: { sandbox: "bwrap", network } },
          answers: [{ run: { answer: "once" } }],
        }, async (fx) => {
          const out = await fx.call(run, {
            pipeline: [{ program: "node", args: connectEach({ abstract: `\0${name}` }) }],
          });
          assert.match(
            await outputOf(fx, out),
            new RegExp(`^${network ? "REACHED" : "REFUSED"} abstract$`, "m"),
          );
        });
      }
    } finally {
      daemon.kill();
      await daemon.status;
      await daemon.stdout.cancel().catch(() => {});
    }
  },
});

Deno.test({
  name: "bwrap: a stage cannot move a hidden folder's parent away and plant its own in its place",
  ignore: skip,
  fn: async () => {
    // The state directory inside a writable folder (the workspace is a home folder, or
    // run.writable names ~/.local): the stage sees an empty tmpfs there, but renaming the folder
    // above it moved the real one on the host, and a state (or a kernel wall module cache) of the
    // stage's making took its place. The same for a covered host socket.
    const home = await visibleOutside("bb-pin-");
    const ws = join(home, "ws");
    const writable = join(home, "dot-local");
    const state = join(writable, "state", "bravebot");
    const sock = join(ws, ".gnupg", "S.agent");
    // A cover beside the state, under the same folder: its pin must not bring the state back.
    const beside = join(writable, "state", "S.other");
    const scratch = join(state, "scratch");
    await Deno.mkdir(scratch, { recursive: true });
    await Deno.mkdir(join(ws, ".gnupg"), { recursive: true });
    await Deno.writeTextFile(join(state, "trust.json"), "REAL\n");
    await Deno.writeTextFile(sock, "SOCKET\n");
    await Deno.writeTextFile(beside, "BESIDE\n");
    try {
      const args = bwrapArgs("bwrap", {
        workspace: ws,
        scratch,
        hide: [state],
        writable: [writable],
        keep: [],
        covers: { sockets: [sock, beside], folders: [] },
      });
      const script =
        `cat "${state}/trust.json" 2>/dev/null; mv "${writable}/state" "${writable}/moved" 2>/dev/null; ` +
        `mkdir -p "${state}" 2>/dev/null && echo PLANTED > "${state}/trust.json"; ` +
        `mv "${ws}/.gnupg" "${ws}/moved" 2>/dev/null; cat "${ws}/moved/S.agent" 2>/dev/null; true`;
      const out = await new Deno.Command(args[0], {
        args: [...args.slice(1), "sh", "-c", script],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.equal(await Deno.readTextFile(join(state, "trust.json")), "REAL\n");
      assert.equal(await exists(join(writable, "moved")), false);
      assert.equal(await exists(join(ws, "moved")), false);
      const seen = new TextDecoder().decode(out.stdout);
      assert.ok(!/SOCKET|REAL|BESIDE/.test(seen), seen);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});
