/**
 * The folder an act lands in must be the folder the policy layer resolved (ops/wall.ts
 * `asResolved`): `write`, `remove` and `makeDir` carry it (protocol.ts `ResolvedFolder`), and the
 * worker refuses when the real folder it opens is another one. Here the swap happens exactly
 * where the policy layer's last look ends and the worker's first begins: the place is taken, then
 * the folder is replaced (by a link to another workspace folder, or by another folder renamed
 * into its place), then the request is sent. On both walls; nothing lands in the other folder.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus, type Wall } from "./client.ts";
import type { ResolvedFolder, WorkerRequest } from "./protocol.ts";
import { sha256 } from "../util/hash.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
const kernel = kernelWallStatus();
if (!kernel.usable && !inCi) {
  console.log(`resolved folder: kernel wall tests skipped: ${kernel.why}`);
}

const BYTES = new TextEncoder().encode("the same bytes in both folders\n");
const HASH = sha256(BYTES);

/** Every entry below `dir` with its bytes (files) or kind: to show nothing changed there. */
async function contents(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const at = join(dir, e.name);
    if (e.isDirectory) {
      found.push(
        `${e.name}/`,
        ...(await contents(at)).map((n) => `${e.name}/${n}`),
      );
    } else found.push(`${e.name}=${e.isFile ? await Deno.readTextFile(at) : "?"}`);
  }
  return found.sort();
}

/** How the folder `d` is replaced once its place is taken. */
const SWAPS = {
  "a link to another workspace folder": async (ws: string) => {
    await Deno.rename(join(ws, "d"), join(ws, "d.gone"));
    await Deno.symlink(join(ws, "e"), join(ws, "d"));
  },
  "another workspace folder renamed into its place": async (ws: string) => {
    await Deno.rename(join(ws, "d"), join(ws, "d.gone"));
    await Deno.mkdir(join(ws, "e2"));
    await Deno.writeFile(join(ws, "e2", "f.txt"), BYTES);
    await Deno.rename(join(ws, "e2"), join(ws, "d"));
  },
};

/** The acts, each given the place of the folder it happens in (`d`, or `d` itself). */
const ACTS: Record<string, (ws: string, within: ResolvedFolder) => WorkerRequest> = {
  "a new file's write": (ws, within) => ({
    op: "write",
    path: join(ws, "d", "new.txt"),
    bytes: BYTES,
    expectSha256: null,
    makeParents: false,
    within,
  }),
  "a write over a file": (ws, within) => ({
    op: "write",
    path: join(ws, "d", "f.txt"),
    bytes: new TextEncoder().encode("planted\n"),
    expectSha256: HASH,
    makeParents: false,
    within,
  }),
  "a write making its folders": (ws, within) => ({
    op: "write",
    path: join(ws, "d", "n", "m", "new.txt"),
    bytes: BYTES,
    expectSha256: null,
    makeParents: true,
    within,
  }),
  "a remove": (ws, within) => ({
    op: "remove",
    path: join(ws, "d", "f.txt"),
    expectSha256: HASH,
    within,
  }),
  "a makeDir": (ws, within) => ({ op: "makeDir", path: join(ws, "d", "sub", "deeper"), within }),
};

async function withWall(wall: Wall, fn: (w: EffectWorker, ws: string) => Promise<void>) {
  const real = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const ws = await real("bb-resolved-ws-");
  const scratch = await real("bb-resolved-scratch-");
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false }, 1, wall);
  try {
    assert.equal(worker.wall, wall);
    await fn(worker, ws);
  } finally {
    await worker.terminate();
    for (const d of [ws, scratch]) await Deno.remove(d, { recursive: true });
  }
}

/** A workspace with `d/f.txt` and `e/f.txt`, the same bytes in both, and nothing else. */
async function freshFolders(ws: string): Promise<void> {
  for await (const e of Deno.readDir(ws)) await Deno.remove(join(ws, e.name), { recursive: true });
  for (const dir of ["d", "e"]) {
    await Deno.mkdir(join(ws, dir));
    await Deno.writeFile(join(ws, dir, "f.txt"), BYTES);
  }
}

for (const wall of ["kernel", "process"] as const) {
  const ignore = wall === "kernel" && !kernel.usable && !inCi;

  Deno.test({
    name:
      `resolved folder (${wall} wall): an act whose folder is replaced after the policy layer resolved it is refused; nothing lands in the other folder`,
    ignore,
    fn: () =>
      withWall(wall, async (w, ws) => {
        // Every case is tried and every failure kept, so that one run shows them all.
        const done: string[] = [];
        for (const [swapName, swap] of Object.entries(SWAPS)) {
          for (const [actName, act] of Object.entries(ACTS)) {
            const what = `${actName}, its folder replaced by ${swapName}`;
            await freshFolders(ws);
            const within = await folderOf(join(ws, "d"));
            await swap(ws);
            const other = await contents(join(ws, "d"));
            const gone = await contents(join(ws, "d.gone"));
            const r = await w.call(act(ws, within));
            if (r.ok) done.push(`${what}: done`);
            else if (r.error.name !== "OutsideWall") done.push(`${what}: ${r.error.name}`);
            // The refusal names no file: neither the path asked nor the folder found there.
            else if (r.error.message.includes(ws)) done.push(`${what}: the message names a path`);
            const [otherNow, goneNow] = [
              await contents(join(ws, "d")),
              await contents(join(ws, "d.gone")),
            ];
            if (JSON.stringify(otherNow) !== JSON.stringify(other)) {
              done.push(`${what}: the other folder changed`);
            }
            if (JSON.stringify(goneNow) !== JSON.stringify(gone)) {
              done.push(`${what}: the folder changed`);
            }
          }
        }
        assert.deepEqual(done, []);
      }),
  });

  Deno.test({
    name: `resolved folder (${wall} wall): with the folder as resolved, every act is done`,
    ignore,
    fn: () =>
      withWall(wall, async (w, ws) => {
        for (const [actName, act] of Object.entries(ACTS)) {
          await freshFolders(ws);
          const r = await w.call(act(ws, await folderOf(join(ws, "d"))));
          assert.ok(r.ok, `${actName}: ${r.ok ? "" : r.error.message}`);
        }
        // makeDir of a folder already there: its place is the folder itself.
        const there = join(ws, "d", "sub");
        const r = await w.call({ op: "makeDir", path: there, within: await folderOf(there) });
        assert.ok(r.ok, r.ok ? "" : r.error.message);
      }),
  });

  Deno.test({
    name:
      `resolved folder (${wall} wall): an act that names no resolved folder is refused, not done with only the containment check`,
    ignore,
    fn: () =>
      withWall(wall, async (w, ws) => {
        const done: string[] = [];
        for (const [actName, act] of Object.entries(ACTS)) {
          await freshFolders(ws);
          const before = await contents(ws);
          // The type requires the folder; a message across the wall is not type-checked.
          const { within: _, ...unplaced } = act(ws, await folderOf(join(ws, "d"))) as {
            within: unknown;
          };
          const r = await w.call(unplaced as unknown as WorkerRequest);
          if (r.ok) done.push(`${actName}: done`);
          else if (r.error.name !== "OutsideWall") done.push(`${actName}: ${r.error.name}`);
          if (JSON.stringify(await contents(ws)) !== JSON.stringify(before)) {
            done.push(`${actName}: the workspace changed`);
          }
        }
        assert.deepEqual(done, []);
      }),
  });
}
