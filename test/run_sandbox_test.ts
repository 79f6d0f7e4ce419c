/**
 * Confinement of run stages with bwrap (design.md §13): with `run.sandbox: "bwrap"`, a stage
 * cannot write outside the workspace and scratch folder, cannot reach the network and cannot
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
import { sandboxStatus } from "../src/policy/sandbox.ts";
import { settingsFrom } from "../src/state/settings.ts";

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

/** Whether the run's output (kept as a reference, or shown) holds `text`. */
async function printed(fx: RunFixture, out: ToolOutput, text: string): Promise<boolean> {
  if (out.content.includes(text)) return true;
  const found = fx.policy.refs.lookup(`ref:${refOf(out)}`);
  return found.ok &&
    new TextDecoder().decode(await fx.policy.refs.bytes(found.value)).includes(text);
}

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
      assert.deepEqual(asked.confinement, { confined: true });
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
      const marker = join(fx.root, "late.txt");
      const tmpName = `/tmp/bb-private-${crypto.randomUUID()}`;
      const out = await fx.call(run, {
        pipeline: [{
          program: "sh",
          args: [
            "-c",
            `echo x > ${tmpName}; (sleep 1; touch "${marker}") > /dev/null 2>&1 & echo started`,
          ],
        }],
      });
      assert.match(out.content, /\[confined\]/);
      assert.ok(await printed(fx, out, "started"));
      assert.equal(await exists(tmpName), false, "the run's /tmp is not the machine's");
      // Bounded: the background child would have made the marker after one second.
      await new Promise((r) => setTimeout(r, 2_000));
      assert.equal(await exists(marker), false, "the PID namespace ended with the run");
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

Deno.test({
  name:
    "bwrap: a configured wall that cannot stand refuses in our words; bwrap's own go to the person",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    // A bwrap first on PATH that fails as a broken one does, naming a path.
    const bin = await Deno.makeTempDir({ prefix: "bb-fake-bwrap-" });
    const canary = "CANARY-bwrap-said-/home/someone/secret";
    await Deno.writeTextFile(
      join(bin, "bwrap"),
      `#!/bin/sh\necho 'bwrap: ${canary}' >&2\nexit 1\n`,
    );
    await Deno.chmod(join(bin, "bwrap"), 0o755);
    const path = Deno.env.get("PATH") ?? "";
    Deno.env.set("PATH", `${bin}:${path}`);
    try {
      await withRunPolicy({ config }, async (fx) => {
        const out = await fx.call(run, { pipeline: [{ program: "true", args: [] }] });
        assert.equal(out.isError, true, out.content);
        assert.match(out.content, /bwrap cannot confine commands here; nothing was run/);
        assert.ok(
          !out.content.includes("CANARY"),
          `the planner was given bwrap's words: ${out.content}`,
        );
        assert.ok(
          fx.scripted!.notices.some((n) => n.includes(canary)),
          "the person was not told why",
        );
      });
    } finally {
      Deno.env.set("PATH", path);
      await Deno.remove(bin, { recursive: true });
    }
  },
});
