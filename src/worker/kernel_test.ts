/**
 * The kernel wall (kernel.ts): links inside the workspace to places outside, read and written
 * through the worker with the policy layer skipped, and a process racing the worker. Where bwrap
 * does not work these skip and say why — except in CI, which installs bwrap: there they fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus } from "./client.ts";
import { childArgv, KERNEL_CHILD_ARG, KernelChild, type KernelPlan } from "./kernel.ts";
import { startFlipper } from "../../test/support/flipper.ts";
import { READ_ONLY_ARG } from "./permissions.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
const status = kernelWallStatus();
const skip = !status.usable;
if (skip && !inCi) console.log(`kernel wall tests skipped: ${status.why}`);

Deno.test({
  name: "kernel wall: in CI it works, so its tests run rather than skip",
  ignore: !inCi,
  fn: () => assert.ok(status.usable, `CI installs bubblewrap, but: ${status.why}`),
});

const plan = (module: KernelPlan["module"]): KernelPlan => ({
  bwrap: "/usr/bin/bwrap",
  exec: "/opt/deno",
  module,
  system: ["--ro-bind", "/usr/lib", "/usr/lib"],
});
const places = { workspace: "/w/ws", scratch: "/s/scratch", run: true };

Deno.test("kernel argv: under deno run, deno run with the narrowed flags and the entry module", () => {
  const argv = childArgv(plan({ entry: "/src/worker/kernel_child.ts", root: "/src" }), places);
  const sep = argv.indexOf("--");
  const box = argv.slice(0, sep).join(" ");
  assert.equal(argv[0], "/usr/bin/bwrap");
  for (
    const part of [
      "--unshare-all --cap-drop ALL --as-pid-1 --die-with-parent --new-session",
      "--ro-bind /opt/deno /opt/deno",
      "--ro-bind /src /src",
      "--ro-bind /proc/self/maps /proc/self/maps",
      "--bind /w/ws /w/ws --bind /s/scratch /s/scratch --remount-ro /",
    ]
  ) assert.ok(box.includes(part), part);
  assert.ok(!box.includes("--proc") && !box.includes("--dev "), "no /proc, no /dev");
  assert.deepEqual(argv.slice(sep + 1), [
    "/opt/deno",
    "run",
    "--no-prompt",
    "--no-config",
    "--no-lock",
    "--no-npm",
    "--no-remote",
    "--allow-read=/w/ws,/s/scratch",
    "--allow-write=/w/ws,/s/scratch",
    "/src/worker/kernel_child.ts",
  ]);
  assert.ok(!argv.some((a) => /allow-(net|env|run|all)|^-A$/.test(a)), "no net, env or run");
});

Deno.test("kernel argv: compiled, the binary itself with the hidden argument first", () => {
  const argv = childArgv(plan(null), places);
  const sep = argv.indexOf("--");
  assert.deepEqual(argv.slice(sep + 1), ["/opt/deno", KERNEL_CHILD_ARG, "/w/ws", "/s/scratch"]);
  assert.ok(!argv.slice(0, sep).join(" ").includes("/deno-dir"), "no cache folder needed");
});

Deno.test("kernel argv: a read-only worker's places are mounted read-only, with no write flag", () => {
  const readOnly = { ...places, run: false, readOnly: true };
  const argv = childArgv(plan({ entry: "/src/worker/kernel_child.ts", root: "/src" }), readOnly);
  const sep = argv.indexOf("--");
  const box = argv.slice(0, sep).join(" ");
  assert.ok(box.includes("--ro-bind /w/ws /w/ws --ro-bind /s/scratch /s/scratch"), box);
  assert.ok(!box.includes("--bind /w/ws"), box);
  assert.ok(argv.includes("--allow-read=/w/ws,/s/scratch"));
  assert.ok(!argv.some((a) => a.startsWith("--allow-write")), argv.join(" "));
  const compiled = childArgv(plan(null), readOnly);
  assert.deepEqual(compiled.slice(compiled.indexOf("--") + 1), [
    "/opt/deno",
    KERNEL_CHILD_ARG,
    "/w/ws",
    "/s/scratch",
    READ_ONLY_ARG,
  ]);
});

Deno.test("kernel child: a child that dies is reported once, with how it ended", async () => {
  let why = "";
  const child = new KernelChild(["/bin/sh", "-c", "exit 3"], () => {}, (w) => why = w);
  for (let i = 0; i < 100 && !why; i++) await new Promise((r) => setTimeout(r, 20));
  await child.stop();
  assert.match(why, /exit 3/);
});

interface Box {
  ws: string;
  scratch: string;
  outside: string;
}

async function withKernel(fn: (w: EffectWorker, box: Box) => Promise<void>, pool = 1) {
  const real = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const box = {
    ws: await real("bb-kw-ws-"),
    scratch: await real("bb-kw-scratch-"),
    outside: await real("bb-kw-outside-"),
  };
  await Deno.writeTextFile(join(box.outside, "secret.txt"), "OUTSIDE SECRET\n");
  const worker = EffectWorker.start({ workspace: box.ws, scratch: box.scratch, run: false }, pool);
  try {
    assert.equal(worker.wall, "kernel");
    await fn(worker, box);
  } finally {
    await worker.terminate();
    for (const d of Object.values(box)) await Deno.remove(d, { recursive: true });
  }
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test({
  name: "kernel wall: a link to a file or a folder outside reads as nothing at all",
  ignore: skip,
  fn: () =>
    withKernel(async (w, { ws, outside }) => {
      await Deno.writeTextFile(join(ws, "inside.txt"), "inside\n");
      await Deno.symlink(join(outside, "secret.txt"), join(ws, "file-link"));
      await Deno.symlink(outside, join(ws, "dir-link"));
      await Deno.symlink("/etc/hostname", join(ws, "etc-link"));
      const inside = await w.call({ op: "read", path: join(ws, "inside.txt"), maxBytes: 100 });
      assert.ok(inside.ok && text(inside.value.bytes) === "inside\n");
      for (const path of ["file-link", "dir-link/secret.txt", "etc-link"].map((p) => join(ws, p))) {
        const r = await w.call({ op: "read", path, maxBytes: 100 });
        assert.ok(!r.ok, path);
        assert.equal(r.error.name, "NotFound", path);
        const s = await w.call({ op: "stat", path });
        assert.ok(!s.ok && s.error.name === "NotFound", path);
        const h = await w.call({ op: "hash", path });
        assert.ok(!h.ok, path);
      }
      const many = await w.call({
        op: "readMany",
        paths: [join(ws, "file-link"), join(ws, "dir-link/secret.txt")],
        maxBytes: 100,
      });
      assert.ok(many.ok);
      assert.ok(many.value.every((item) => !item.bytes), "nothing outside read");
      const dirs = await w.call({ op: "readDirs", paths: [join(ws, "dir-link")] });
      assert.ok(dirs.ok && "error" in dirs.value[0], "the folder outside is not listed");
    }),
});

Deno.test({
  name: "kernel wall: a write through a link is refused and nothing outside is written",
  ignore: skip,
  fn: () =>
    withKernel(async (w, { ws, outside }) => {
      await Deno.symlink(outside, join(ws, "dir-link"));
      await Deno.symlink(join(outside, "secret.txt"), join(ws, "file-link"));
      const bytes = new TextEncoder().encode("PWNED\n");
      const through = await w.call({
        op: "write",
        path: join(ws, "dir-link", "new.txt"),
        within: await folderOf(join(ws, "dir-link", "new.txt")),
        bytes,
        makeParents: true,
      });
      assert.ok(!through.ok, "a write into the folder behind the link is refused");
      // The file link: the atomic write replaces the link inside, never the file it named.
      await w.call({
        op: "write",
        path: join(ws, "file-link"),
        within: await folderOf(join(ws, "file-link")),
        bytes,
        makeParents: false,
      });
      const left = [...Deno.readDirSync(outside)].map((e) => e.name);
      assert.deepEqual(left, ["secret.txt"]);
      assert.equal(await Deno.readTextFile(join(outside, "secret.txt")), "OUTSIDE SECRET\n");
    }),
});

Deno.test({
  name: "kernel wall: the doctor's probes are refused by Deno inside the box",
  ignore: skip,
  fn: () =>
    withKernel(async (w, { outside }) => {
      for (
        const [what, target] of [
          ["read", "/etc/passwd"],
          ["write", join(outside, "probe.txt")],
          ["net", "127.0.0.1:9"],
          ["env", "HOME"],
        ] as const
      ) {
        const r = await w.call({ op: "probe", what, target });
        assert.ok(r.ok && r.value.refused, `${what} ${target}`);
      }
    }),
});

Deno.test({
  name: "kernel wall: a process swapping a folder for a link outside never gets outside bytes read",
  ignore: skip,
  fn: () =>
    withKernel(async (w, { ws, outside }) => {
      await Deno.mkdir(join(ws, "d"));
      await Deno.writeTextFile(join(ws, "d", "secret.txt"), "inside\n");
      const { done } = startFlipper(ws, outside);
      let finished = false;
      done.then(() => finished = true);
      let reads = 0, inside = 0;
      const path = join(ws, "d", "secret.txt");
      while (!finished) {
        const batch = await Promise.all([
          w.call({ op: "read", path, maxBytes: 100 }),
          w.call({ op: "read", path, withStat: true, maxBytes: 100 }),
          w.call({ op: "readMany", paths: [path, path], maxBytes: 100 }),
        ]);
        const seen: Uint8Array[] = [];
        if (batch[0].ok) seen.push(batch[0].value.bytes);
        if (batch[1].ok && batch[1].value.bytes) seen.push(batch[1].value.bytes);
        if (batch[2].ok) {
          for (const item of batch[2].value) if (item.bytes) seen.push(item.bytes);
        }
        for (const b of seen) {
          assert.notEqual(text(b), "OUTSIDE SECRET\n", "read outside bytes");
          inside++;
        }
        reads += 4;
      }
      const flips = await done;
      console.log(`race: ${flips} flips, ${reads} reads, ${inside} read the folder's own file`);
      assert.ok(flips > 0 && reads > 0);
    }),
});

Deno.test({
  name: "kernel wall: a pool of kernel workers answers in any order, each its own child",
  ignore: skip,
  fn: () =>
    withKernel(async (w, { ws }) => {
      assert.equal(w.pool.length, 2);
      for (let i = 0; i < 20; i++) await Deno.writeTextFile(join(ws, `f${i}`), `file ${i}\n`);
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          w.pool[i % 2].call({ op: "read", path: join(ws, `f${i % 20}`), maxBytes: 100 })),
      );
      replies.forEach((r, i) =>
        assert.ok(r.ok && text(r.value.bytes) === `file ${i % 20}\n`)
      );
      assert.ok(w.pool.every((m) => m.wall === "kernel" && m.alive));
    }, 2),
});

Deno.test({
  name: "kernel wall: terminate fails every pending call with an error value",
  ignore: skip,
  fn: async () => {
    const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-kw-term-" }));
    const worker = EffectWorker.start({ workspace: ws, scratch: ws, run: false });
    const pending = worker.call({ op: "snapshot", root: ws, skip: [], maxEntries: 10 });
    const stopped = worker.terminate();
    const r = await pending;
    await stopped;
    assert.ok(!r.ok && r.error.name === "Terminated");
    const after = await worker.call({ op: "stat", path: ws });
    assert.ok(!after.ok && after.error.name === "Terminated");
    await Deno.remove(ws, { recursive: true });
  },
});
