/**
 * Brave Bot's state directory inside the workspace (a home-folder workspace with the state in
 * `~/.local/state/bravebot`, a test fixture): the policy layer refuses its paths, but the effect
 * worker must not reach it either, on both walls — neither through its own operations (a policy
 * bug, or a request the policy layer never made) nor, behind the kernel wall, as a taken-over
 * child that writes the state or renames a folder above it and plants its own.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus } from "./client.ts";
import { childArgv, kernelPlan } from "./kernel.ts";
import type { WallOptions } from "./permissions.ts";
import { CHILD_RUN } from "./module_cache.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";

const kernel = kernelWallStatus();
const inCi = Deno.env.get("CI") === "true" && Deno.build.os === "linux";
if (!kernel.usable && !inCi) console.log(`kernel wall tests skipped: ${kernel.why}`);

/** A home folder as the workspace, the state under it, the session's scratch in the state. */
async function homeWithState() {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-hidden-home-" }));
  const state = join(home, ".local", "state", "bravebot");
  const scratch = join(state, "sessions", "s1", "scratch");
  await Deno.mkdir(scratch, { recursive: true });
  await Deno.mkdir(join(state, "kernel-modules"), { recursive: true });
  await Deno.writeTextFile(join(state, "trust.json"), "REAL\n");
  await Deno.writeTextFile(join(home, "notes.txt"), "mine\n");
  // As the person runs it: an ordinary user's home is theirs (a test run as root makes the
  // fixture root's), and the folders must be reachable by whoever runs the test.
  await Deno.chmod(home, 0o755);
  const options: WallOptions = { workspace: home, scratch, run: false, hide: [state] };
  return { home, state, scratch, options };
}

/** Whether anything is at `path` (a link counts). */
const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);
const bytes = (s: string) => new TextEncoder().encode(s);

for (const wall of ["kernel", "process"] as const) {
  Deno.test({
    name: `${wall} wall: the worker's own operations do not reach the state inside the workspace`,
    ignore: wall === "kernel" && !kernel.usable && !inCi,
    fn: async () => {
      const { home, state, scratch, options } = await homeWithState();
      const worker = EffectWorker.start(options, 1, wall);
      try {
        assert.equal(worker.wall, wall);
        const trust = join(state, "trust.json");
        const write = await worker.call({
          op: "write",
          path: trust,
          within: await folderOf(trust),
          bytes: bytes("PLANTED\n"),
          makeParents: false,
        });
        assert.equal(write.ok, false, "a write over the trust map is refused");
        const planted = await worker.call({
          op: "write",
          path: join(state, "kernel-modules", "k1", "planted.js"),
          within: await folderOf(join(state, "kernel-modules", "k1", "planted.js")),
          bytes: bytes("PLANTED\n"),
          makeParents: true,
        });
        assert.equal(planted.ok, false, "a module cache of the worker's making is refused");
        const read = await worker.call({ op: "read", path: trust, maxBytes: 1024 });
        assert.ok(
          !read.ok || !new TextDecoder().decode(read.value.bytes).includes("REAL"),
          "the state is not read",
        );
        // Many files in a row: the folder is checked once, each file in it must be checked too.
        const many = await worker.call({
          op: "readMany",
          paths: [join(home, "notes.txt"), join(state, "trust.json")],
          maxBytes: 1024,
        });
        assert.ok(
          !many.ok || !many.value.some((item) => item.path === trust && item.bytes),
          "the state is not read among other files",
        );
        const inState = await worker.call({
          op: "readMany",
          paths: [trust],
          maxBytes: 1024,
        });
        assert.ok(!inState.ok || inState.value.every((item) => !item.bytes), "nor alone");
        const made = await worker.call({
          op: "makeDir",
          path: join(state, "vouches.d"),
          within: await folderOf(join(state, "vouches.d")),
        });
        assert.equal(made.ok, false, "no folder is made in the state");
        // The workspace and the scratch folder (inside the state) still work.
        const ok1 = await worker.call({
          op: "write",
          path: join(home, "notes.txt"),
          within: await folderOf(join(home, "notes.txt")),
          bytes: bytes("changed\n"),
          makeParents: false,
        });
        assert.ok(ok1.ok, JSON.stringify(ok1));
        const ok2 = await worker.call({
          op: "write",
          path: join(scratch, "out.txt"),
          within: await folderOf(join(scratch, "out.txt")),
          bytes: bytes("scratch\n"),
          makeParents: false,
        });
        assert.ok(ok2.ok, JSON.stringify(ok2));
        const back = await worker.call({
          op: "read",
          path: join(scratch, "out.txt"),
          maxBytes: 64,
        });
        assert.ok(back.ok && new TextDecoder().decode(back.value.bytes) === "scratch\n");
      } finally {
        await worker.terminate();
      }
      try {
        assert.equal(await Deno.readTextFile(join(state, "trust.json")), "REAL\n");
        assert.equal(await exists(join(state, "kernel-modules", "k1")), false);
        assert.equal(await exists(join(state, "vouches.d")), false);
        assert.equal(await Deno.readTextFile(join(scratch, "out.txt")), "scratch\n");
        assert.equal(await Deno.readTextFile(join(home, "notes.txt")), "changed\n");
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "kernel wall: a taken-over child can neither write the state nor move its parent away",
  ignore: (!kernel.usable && !inCi) || Deno.build.standalone,
  fn: async () => {
    const { home, state, scratch, options } = await homeWithState();
    const found = kernelPlan();
    assert.ok(found.ok);
    // The child's program is ours here: what a child that was taken over would run, with the
    // same box and the same Deno flags as the worker's.
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-hidden-prog-" }));
    await Deno.chmod(dir, 0o755);
    const entry = join(dir, "attack.ts");
    const local = join(home, ".local");
    await Deno.writeTextFile(
      entry,
      `const tries: string[] = [];
const attempt = (what: string, fn: () => void) => {
  try { fn(); tries.push(what + ": done"); } catch (e) { tries.push(what + ": " + (e as Error).name); }
};
attempt("scratch", () => Deno.writeTextFileSync(${
        JSON.stringify(join(scratch, "out.txt"))
      }, "ok\\n"));
attempt("read", () => { if (Deno.readTextFileSync(${
        JSON.stringify(join(state, "trust.json"))
      }).includes("REAL")) throw new Error("seen"); });
attempt("write", () => Deno.writeTextFileSync(${
        JSON.stringify(join(state, "trust.json"))
      }, "PLANTED\\n"));
attempt("cache", () => Deno.mkdirSync(${JSON.stringify(join(state, "kernel-modules", "k1"))}));
attempt("move-state", () => Deno.renameSync(${JSON.stringify(join(local, "state"))}, ${
        JSON.stringify(join(local, "moved"))
      }));
attempt("move-local", () => Deno.renameSync(${JSON.stringify(local)}, ${
        JSON.stringify(join(home, "moved"))
      }));
attempt("plant", () => {
  Deno.mkdirSync(${JSON.stringify(state)}, { recursive: true });
  Deno.writeTextFileSync(${JSON.stringify(join(state, "trust.json"))}, "PLANTED\\n");
});
console.log(JSON.stringify(tries));
`,
    );
    try {
      const argv = childArgv({ ...found.plan, module: { entry, root: dir } }, options);
      assert.ok(argv.includes(CHILD_RUN[0]));
      const out = await new Deno.Command(argv[0], {
        args: argv.slice(1),
        clearEnv: true,
        env: {},
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.match(said, /"scratch: done"/, "the scratch folder stays writable");
      assert.equal(await Deno.readTextFile(join(state, "trust.json")), "REAL\n", said);
      assert.equal(await exists(join(state, "kernel-modules", "k1")), false, said);
      assert.equal(await exists(join(local, "moved")), false, said);
      assert.equal(await exists(join(home, "moved")), false, said);
      assert.match(said, /"read: NotFound"/, "the state is not there to read");
      assert.equal(await Deno.readTextFile(join(scratch, "out.txt")), "ok\n");
    } finally {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** A file system where every path is a folder but `/h/missing`. */
const folderAt = (path: string) =>
  path === "/h/missing" ? null : { isDirectory: true } as Deno.FileInfo;

Deno.test("kernel argv: a hidden folder inside the workspace is pinned and covered before the scratch", () => {
  const plan = {
    bwrap: "/usr/bin/bwrap",
    exec: "/opt/deno",
    module: null,
    system: [],
  };
  const argv = childArgv(
    plan,
    {
      workspace: "/h",
      scratch: "/h/.local/state/bb/s/scratch",
      run: false,
      hide: ["/h/.local/state/bb", "/elsewhere/state", "/h/missing"],
    },
    [],
    [],
    folderAt,
  );
  const box = argv.slice(0, argv.indexOf("--")).join(" ");
  const order = [
    "--bind /h /h",
    "--bind /h/.local /h/.local",
    "--bind /h/.local/state /h/.local/state",
    "--tmpfs /h/.local/state/bb",
    "--bind /h/.local/state/bb/s/scratch /h/.local/state/bb/s/scratch",
    "--remount-ro /",
  ].map((part) => box.indexOf(part));
  assert.ok(order.every((at) => at >= 0), `${order} in ${box}`);
  assert.deepEqual([...order].sort((a, b) => a - b), order, box);
  assert.ok(!box.includes("/elsewhere"), "a folder the namespace does not hold needs no cover");
  assert.ok(!box.includes("/h/missing"), "bwrap would make a missing one on the host");

  // Read only: nothing is writable, the pins too (a mount point stays where it is anyway).
  const ro = childArgv(
    plan,
    {
      workspace: "/h",
      scratch: "/h/.local/state/bb/s/scratch",
      run: false,
      readOnly: true,
      hide: ["/h/.local/state/bb"],
    },
    [],
    [],
    folderAt,
  ).join(" ");
  assert.ok(!/--bind /.test(ro), ro);
  assert.ok(ro.includes("--tmpfs /h/.local/state/bb"), ro);
});
