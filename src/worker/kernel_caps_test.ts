/**
 * The kernel wall's child holds no capability (kernel.ts): as root, bwrap kept every one
 * (CapEff 000001fffeffffff) in the child's namespace. And as root over a workspace another user
 * owns, the child keeps CAP_DAC_OVERRIDE and nothing else, so it can write there. Skipped where
 * bwrap does not work, except in CI (kernel_test.ts fails there).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus } from "./client.ts";
import { childArgv, type KernelPlan, kernelWall, probeKernelWall } from "./kernel.ts";
import { effectiveUid, parseStatus } from "./capabilities.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

const skip = !kernelWallStatus().usable;
const root = Deno.build.os === "linux" && effectiveUid() === 0;

async function tempDir(prefix: string): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix }));
}

/**
 * What the child of `plan` holds, for these places: the same bwrap box, with the child's own
 * /proc/self/status bound into the workspace and printed by the same executable.
 */
function heldBy(plan: KernelPlan, workspace: string, scratch: string) {
  const argv = childArgv(plan, { workspace, scratch, run: false });
  const box = argv.slice(0, argv.indexOf("--"));
  const status = join(workspace, ".status");
  Deno.writeTextFileSync(status, "");
  const out = new Deno.Command(box[0], {
    args: [
      ...box.slice(1),
      "--ro-bind",
      "/proc/self/status",
      status,
      "--",
      plan.exec,
      "eval",
      `console.log(Deno.readTextFileSync(${JSON.stringify(status)}))`,
    ],
    clearEnv: true,
    env: {},
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return { held: parseStatus(text), uidLine: /^Uid:.*$/m.exec(text)?.[0] ?? "" };
}

Deno.test({
  name: "kernel wall: its child holds no capability and cannot gain one",
  ignore: skip,
  fn: async () => {
    const wall = kernelWall();
    assert.ok(wall.ok);
    const ws = await tempDir("bb-kc-ws-");
    const scratch = await tempDir("bb-kc-scratch-");
    try {
      const { held } = heldBy(wall.plan, ws, scratch);
      assert.deepEqual(held, { effective: 0n, permitted: 0n, noNewPrivs: true });
    } finally {
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(scratch, { recursive: true });
    }
  },
});

// A bwrap that leaves out --cap-drop and adds CAP_SYS_ADMIN: its child holds capabilities (as
// root, every one; as an ordinary user, that one inside its user namespace), and the probe must
// not pass it.
Deno.test({
  name: "kernel wall: the probe refuses a child that holds capabilities",
  ignore: skip,
  fn: async () => {
    const wall = kernelWall();
    assert.ok(wall.ok);
    const bin = await tempDir("bb-kc-bwrap-");
    try {
      const fake = join(bin, "bwrap");
      await Deno.writeTextFile(
        fake,
        `#!/bin/sh\n# every argument but --cap-drop ALL, and CAP_SYS_ADMIN added\n` +
          `for a; do shift; ` +
          `if [ "$a" = --cap-drop ]; then skip=1; continue; fi; ` +
          `if [ "$skip" = 1 ]; then skip=; continue; fi; set -- "$@" "$a"; done\n` +
          `exec ${wall.plan.bwrap} --cap-add CAP_SYS_ADMIN "$@"\n`,
      );
      await Deno.chmod(fake, 0o755);
      const probed = probeKernelWall({ ...wall.plan, bwrap: fake });
      assert.equal(probed.ok, false);
      if (!probed.ok) assert.match(probed.why, /holds capabilities/);
      assert.equal(probeKernelWall(wall.plan).ok, true, "the real bwrap passes the same probe");
    } finally {
      await Deno.remove(bin, { recursive: true });
    }
  },
});

// As root over another user's workspace the kernel wall could not write at all (its user
// namespace maps only root, so files of uid 4242 were out of reach: PermissionDenied).
Deno.test({
  name:
    "kernel wall: as root over another user's workspace it writes, keeping only CAP_DAC_OVERRIDE",
  ignore: skip || !root,
  fn: async () => {
    const wall = kernelWall();
    assert.ok(wall.ok);
    const ws = await tempDir("bb-kc-foreign-");
    const scratch = await tempDir("bb-kc-scratch-");
    await Deno.writeTextFile(join(ws, "theirs.txt"), "theirs\n");
    await Deno.chown(join(ws, "theirs.txt"), 4242, 4242);
    await Deno.chown(ws, 4242, 4242);
    const worker = EffectWorker.start({ workspace: ws, scratch, run: false }, 1, "kernel");
    try {
      const { held, uidLine } = heldBy(wall.plan, ws, scratch);
      assert.deepEqual(held, { effective: 2n, permitted: 2n, noNewPrivs: true });
      assert.match(uidLine, /^Uid:\s+0\s+0\s+0\s+0$/, "the machine's root, no user namespace");
      const bytes = new TextEncoder().encode("mine\n");
      for (const name of ["new.txt", "theirs.txt"]) {
        const wrote = await worker.call({
          op: "write",
          path: join(ws, name),
          within: await folderOf(join(ws, name)),
          bytes,
          makeParents: false,
        });
        assert.ok(wrote.ok, `${name}: ${JSON.stringify(wrote)}`);
        assert.equal(await Deno.readTextFile(join(ws, name)), "mine\n");
      }
    } finally {
      await worker.terminate();
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(scratch, { recursive: true });
    }
  },
});
