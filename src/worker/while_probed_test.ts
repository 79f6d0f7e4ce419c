/**
 * A session's pool starts while the kernel wall's probe runs (client.ts
 * `EffectWorker.startWhileProbed`, issue 24): requests made before the probe answers wait for it,
 * in order; passed, they go to the children started with the probed command line; failed, the
 * children are ended unused and the process wall answers them — a child that could not start is
 * not taken for a dead worker.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus } from "./client.ts";
import type { WallOptions } from "./permissions.ts";

const kernel = kernelWallStatus();
const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";

/** A workspace holding `notes.txt`, a hidden folder (made by `make`) with a secret, a scratch. */
async function places(make: (root: string, ws: string) => Promise<string>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-while-probed-" }));
  await Deno.chmod(root, 0o755);
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  await Deno.writeTextFile(join(ws, "notes.txt"), "NOTES\n");
  const hidden = await make(root, ws);
  await Deno.writeTextFile(join(hidden, "secret"), "SECRET\n");
  const scratch = join(root, "scratch");
  await Deno.mkdir(scratch);
  const options: WallOptions = { workspace: ws, scratch, run: false, hide: [hidden] };
  return { root, ws, hidden, options };
}

const text = (r: { ok: boolean; value?: { bytes: Uint8Array } }) =>
  r.ok && r.value ? new TextDecoder().decode(r.value.bytes) : null;

/** Requests made at once, before the probe can have answered, and what each member says. */
async function askAtOnce(worker: EffectWorker, ws: string, hidden: string) {
  const reads = Array.from(
    { length: 4 },
    () => worker.call({ op: "read", path: join(ws, "notes.txt"), maxBytes: 64 }),
  );
  const secret = worker.call({ op: "read", path: join(hidden, "secret"), maxBytes: 64 });
  const helpers = worker.pool.map((w) => w.call({ op: "stat", path: join(ws, "notes.txt") }));
  return {
    reads: (await Promise.all(reads)).map(text),
    secret: text(await secret),
    helpers: (await Promise.all(helpers)).map((r) => r.ok),
  };
}

Deno.test({
  name:
    "while probed: requests made before the probe answers wait for it and go to the kernel children",
  ignore: !kernel.usable && !inCi,
  fn: async () => {
    const { root, ws, hidden, options } = await places(async (_root, ws) => {
      const state = join(ws, ".local", "state", "bravebot");
      await Deno.mkdir(state, { recursive: true });
      return state;
    });
    try {
      const worker = EffectWorker.startWhileProbed(options, 2);
      try {
        assert.equal(worker.wall, "probing", "new places: their probe has only just started");
        const said = await askAtOnce(worker, ws, hidden);
        assert.equal(worker.wall, "kernel");
        assert.deepEqual(worker.pool.map((w) => w.wall), ["kernel", "kernel"]);
        assert.deepEqual(said.reads, ["NOTES\n", "NOTES\n", "NOTES\n", "NOTES\n"]);
        assert.equal(said.secret, null, "the hidden folder is covered");
        assert.deepEqual(said.helpers, [true, true]);
      } finally {
        await worker.terminate();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "while probed: a failed probe ends the children unused, and the process wall answers what waited",
  ignore: !kernel.usable && !inCi,
  fn: async () => {
    // A hidden folder reached through a link out of the workspace: bwrap refuses the command
    // line, so the children started with it end at once, before the probe has said so.
    const { root, ws, hidden, options } = await places(async (root, ws) => {
      await Deno.mkdir(join(root, "out", "state"), { recursive: true });
      await Deno.symlink(join(root, "out"), join(ws, "far"));
      return join(ws, "far", "state");
    });
    try {
      const worker = EffectWorker.startWhileProbed(options, 2);
      try {
        const said = await askAtOnce(worker, ws, hidden);
        assert.equal(worker.wall, "process");
        assert.ok(worker.pool.every((w) => w.alive), "no member was taken for dead");
        assert.deepEqual(said.reads, ["NOTES\n", "NOTES\n", "NOTES\n", "NOTES\n"]);
        assert.equal(said.secret, null, "the process wall's own checks refuse the hidden folder");
        assert.deepEqual(said.helpers, [true, true]);
      } finally {
        await worker.terminate();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "while probed: stopped before the probe answers, the pool still ends",
  ignore: !kernel.usable && !inCi,
  fn: async () => {
    const { root, options } = await places(async (_root, ws) => {
      const state = join(ws, ".state");
      await Deno.mkdir(state);
      return state;
    });
    try {
      const worker = EffectWorker.startWhileProbed(options, 2);
      const pending = worker.call({ op: "stat", path: options.workspace });
      await worker.terminate();
      const answer = await pending;
      assert.equal(answer.ok, false);
      assert.equal(answer.ok ? "" : answer.error.name, "Terminated");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
