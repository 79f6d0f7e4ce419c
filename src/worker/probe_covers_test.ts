/**
 * The kernel wall's probe is run with the worker's own command line (kernel.ts `kernelWall` with
 * places): covers of hidden folders that bwrap cannot set up fail the probe with a reason, and the
 * worker falls back to the process wall, whose own checks (ops/wall.ts `isHidden`) still refuse
 * the hidden folder; a hidden state bwrap can cover still probes fine and gets the kernel wall.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EarlyWorker, EffectWorker, kernelWallStatus } from "./client.ts";
import { kernelWall } from "./kernel.ts";
import type { WallOptions } from "./permissions.ts";

const kernel = kernelWallStatus();
const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
if (!kernel.usable && !inCi) console.log(`kernel wall tests skipped: ${kernel.why}`);

/** A workspace, a hidden folder `hidden` (made by `make`) holding a secret, a scratch folder. */
async function places(make: (root: string, ws: string) => Promise<string>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-probe-covers-" }));
  await Deno.chmod(root, 0o755);
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const hidden = await make(root, ws);
  await Deno.writeTextFile(join(hidden, "secret"), "SECRET\n");
  const scratch = join(root, "scratch");
  await Deno.mkdir(scratch);
  const options: WallOptions = { workspace: ws, scratch, run: false, hide: [hidden] };
  return { root, hidden, options };
}

/** Whether the worker reads the hidden folder's secret. */
async function readsSecret(worker: EffectWorker, hidden: string): Promise<boolean> {
  const read = await worker.call({ op: "read", path: join(hidden, "secret"), maxBytes: 64 });
  return read.ok && new TextDecoder().decode(read.value.bytes).includes("SECRET");
}

Deno.test({
  name: "kernel probe: a cover bwrap cannot set up fails the probe, and the process wall is used",
  ignore: !kernel.usable && !inCi,
  fn: async () => {
    // A hidden folder reached through a link out of the workspace: its pin, a bind onto the
    // link, has nowhere to land in the namespace, so bwrap refuses the whole command line.
    const { root, hidden, options } = await places(async (root, ws) => {
      await Deno.mkdir(join(root, "out", "state"), { recursive: true });
      await Deno.symlink(join(root, "out"), join(ws, "far"));
      return join(ws, "far", "state");
    });
    try {
      const probed = kernelWall(options);
      assert.equal(probed.ok, false, "the probe fails on the cover");
      assert.match(probed.ok ? "" : probed.why, /the kernel wall's probe failed/);
      assert.equal(kernelWall().ok, true, "the wall itself still works here");
      const worker = EffectWorker.start(options, 1, "auto");
      try {
        assert.equal(worker.wall, "process", "the worker falls back rather than failing");
        assert.equal(await readsSecret(worker, hidden), false, "the process wall refuses it");
      } finally {
        worker.terminate();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "kernel probe: a hidden state bwrap can cover probes fine and gets the kernel wall",
  ignore: !kernel.usable && !inCi,
  fn: async () => {
    const { root, hidden, options } = await places(async (_root, ws) => {
      const state = join(ws, ".local", "state", "bravebot");
      await Deno.mkdir(state, { recursive: true });
      return state;
    });
    try {
      assert.equal(kernelWall(options).ok, true);
      const worker = EffectWorker.start(options, 1, "auto");
      try {
        assert.equal(worker.wall, "kernel");
        assert.equal(await readsSecret(worker, hidden), false, "the cover hides it");
      } finally {
        worker.terminate();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("process wall: an early Worker started without the hidden folders is not adopted", async () => {
  const { root, hidden, options } = await places(async (_root, ws) => {
    const state = join(ws, "state");
    await Deno.mkdir(state);
    return state;
  });
  try {
    const early = new EarlyWorker({ ...options, hide: [] });
    const worker = EffectWorker.start(options, 1, "process", early);
    try {
      assert.equal(await readsSecret(worker, hidden), false, "its hidden set is the session's");
    } finally {
      worker.terminate();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
