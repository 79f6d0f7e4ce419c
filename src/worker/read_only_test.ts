/**
 * A read-only effect worker (`WallOptions.readOnly`, issue 27): what `bravebot diff` reads the
 * workspace through. These tests skip the policy layer and ask the worker itself to write,
 * remove and run; the worker's own permissions (and, behind the kernel wall, its read-only
 * mounts) refuse each, while reading still works.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker } from "./client.ts";
import { kernelWallStatus } from "./client.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

/** How the worker refuses: its containment check, or Deno's permission. */
const REFUSED = /^(OutsideWall|NotCapable)$/;

for (const wall of ["kernel", "process"] as const) {
  Deno.test({
    name: `read-only worker (${wall} wall): a write, a remove and a run are refused by the worker`,
    ignore: wall === "kernel" && !kernelWallStatus().usable,
    async fn() {
      const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-ro-ws-" }));
      const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-ro-scratch-" }));
      await Deno.writeTextFile(join(ws, "kept.txt"), "kept\n");
      const worker = EffectWorker.start(
        { workspace: ws, scratch, run: false, readOnly: true },
        1,
        wall,
      );
      try {
        assert.equal(worker.wall, wall);
        const read = await worker.call({ op: "read", path: join(ws, "kept.txt"), maxBytes: 100 });
        assert.equal(read.ok && new TextDecoder().decode(read.value.bytes), "kept\n");
        for (const path of [join(ws, "new.txt"), join(ws, "kept.txt"), join(scratch, "s.txt")]) {
          const wrote = await worker.call({
            op: "write",
            path,
            within: await folderOf(path),
            bytes: new TextEncoder().encode("x"),
            makeParents: false,
          });
          assert.equal(wrote.ok, false, path);
          // Its containment check finds no place it may write (its roots are its own Deno
          // permissions, wall.ts); past that check, Deno itself would refuse.
          if (!wrote.ok) assert.match(wrote.error.name, REFUSED, wrote.error.message);
        }
        await assert.rejects(Deno.lstat(join(ws, "new.txt")), Deno.errors.NotFound);
        await assert.rejects(Deno.lstat(join(scratch, "s.txt")), Deno.errors.NotFound);
        const removed = await worker.call({
          op: "remove",
          path: join(ws, "kept.txt"),
          within: await folderOf(join(ws, "kept.txt")),
          expectSha256: (await worker.call({ op: "hash", path: join(ws, "kept.txt") }) as {
            value: string;
          }).value,
        });
        assert.equal(removed.ok, false);
        if (!removed.ok) assert.match(removed.error.name, REFUSED, removed.error.message);
        assert.equal(await Deno.readTextFile(join(ws, "kept.txt")), "kept\n");
        // A write that skips the containment check entirely: Deno's permission refuses it.
        const probe = await worker.call({ op: "probe", what: "write", target: join(ws, "p") });
        assert.ok(probe.ok && probe.value.refused, "a write probe is refused");
        assert.match(probe.value.error ?? "", /^NotCapable/);
        await assert.rejects(Deno.lstat(join(ws, "p")), Deno.errors.NotFound);
        const ran = await worker.call({
          op: "spawn",
          request: {
            stages: [{ program: "/bin/sh", args: ["-c", `echo x > ${join(ws, "ran.txt")}`] }],
            stdin: null,
            cwd: ws,
            env: {},
            timeoutMs: 5000,
            maxOutputBytes: 1000,
          },
        });
        assert.equal(ran.ok, false);
        await assert.rejects(Deno.lstat(join(ws, "ran.txt")), Deno.errors.NotFound);
      } finally {
        await worker.terminate();
        await Deno.remove(ws, { recursive: true });
        await Deno.remove(scratch, { recursive: true });
      }
    },
  });
}
