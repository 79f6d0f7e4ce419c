/**
 * The kernel wall's module cache (module_cache.ts), as an attacker would look at it: a cache the
 * child, a run stage or another user could write is never bound; a bound one is read-only, even
 * to a child holding every Deno permission inside the box; and the children do use it.
 */
import assert from "node:assert/strict";
import {
  CACHE_FOLDER,
  cacheKey,
  moduleCache,
  removeStale,
  STALE_MS,
  usableCache,
} from "./module_cache.ts";
import { childArgv, type KernelPlan, kernelPlan } from "./kernel.ts";
import { EffectWorker, kernelWallStatus } from "./client.ts";
import { effectiveUid } from "./capabilities.ts";

const status = kernelWallStatus();

/** A state folder with a key folder in its cache, all private, and a workspace and scratch. */
async function layout() {
  const top = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-modcache-" }));
  const state = `${top}/state`;
  const dir = `${state}/${CACHE_FOLDER}/0.1.0-abc`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await Deno.chmod(state, 0o700);
  await Deno.chmod(`${state}/${CACHE_FOLDER}`, 0o700);
  await Deno.mkdir(`${top}/ws`);
  await Deno.mkdir(`${top}/scratch`);
  return { top, state, dir, ws: `${top}/ws`, scratch: `${top}/scratch` };
}

const uid = effectiveUid();

Deno.test("module cache: a private key folder of the state directory may be used", async () => {
  const l = await layout();
  try {
    assert.equal(usableCache(l.dir, [l.ws, l.scratch], uid), null);
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});

Deno.test("module cache: not where the child may write, nor holding what it may", async () => {
  const l = await layout();
  try {
    // A state directory inside the workspace: the child writes its cache through the workspace.
    const inWs = `${l.ws}/state/${CACHE_FOLDER}/k`;
    await Deno.mkdir(inWs, { recursive: true, mode: 0o700 });
    assert.match(usableCache(inWs, [l.ws, l.scratch], uid) ?? "", /overlaps/);
    // A workspace inside the cache: the same, the other way round.
    assert.match(usableCache(l.dir, [`${l.dir}/ws`, l.scratch], uid) ?? "", /overlaps/);
    assert.match(usableCache(l.dir, [l.ws, l.dir], uid) ?? "", /overlaps/);
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});

Deno.test("module cache: a link, a folder others may write, another user's: none used", async () => {
  const l = await layout();
  try {
    const link = `${l.state}/${CACHE_FOLDER}/linked`;
    await Deno.symlink(l.dir, link);
    assert.match(usableCache(link, [l.ws, l.scratch], uid) ?? "", /link/);
    for (const d of [l.dir, `${l.state}/${CACHE_FOLDER}`, l.state]) {
      await Deno.chmod(d, 0o770);
      assert.match(usableCache(l.dir, [l.ws, l.scratch], uid) ?? "", /writable by others/, d);
      await Deno.chmod(d, 0o702);
      assert.match(usableCache(l.dir, [l.ws, l.scratch], uid) ?? "", /writable by others/, d);
      await Deno.chmod(d, 0o700);
    }
    assert.match(usableCache(l.dir, [l.ws, l.scratch], uid + 1) ?? "", /another user/);
    assert.match(usableCache(`${l.top}/elsewhere`, [], uid) ?? "", /not a key folder/);
    assert.match(usableCache(`${l.state}/${CACHE_FOLDER}/gone`, [], uid) ?? "", /missing/);
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});

const plan: KernelPlan = {
  bwrap: "/usr/bin/bwrap",
  exec: "/opt/deno",
  module: { entry: "/src/worker/kernel_child.ts", root: "/src" },
  system: [],
};

Deno.test("module cache: the child's argv binds a usable cache read-only, else none", async () => {
  const l = await layout();
  try {
    const places = { workspace: l.ws, scratch: l.scratch, run: false };
    const bound = childArgv(plan, { ...places, moduleCache: l.dir }).join(" ");
    assert.ok(bound.includes(`--ro-bind ${l.dir} /deno-dir`));
    assert.ok(!bound.includes("--dir /deno-dir"));
    await Deno.chmod(l.dir, 0o777);
    const refused = childArgv(plan, { ...places, moduleCache: l.dir }).join(" ");
    assert.ok(!refused.includes(l.dir), "a cache others may write is not bound");
    assert.ok(refused.includes("--dir /deno-dir"));
    await Deno.chmod(l.dir, 0o700);
    const inside = childArgv(plan, { ...places, workspace: l.state, moduleCache: l.dir });
    assert.ok(!inside.includes(l.dir), "a cache inside the workspace is not bound");
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});

Deno.test("module cache: the key follows the child's sources", async () => {
  const top = await Deno.makeTempDir({ prefix: "bb-modkey-" });
  try {
    await Deno.mkdir(`${top}/worker`);
    await Deno.mkdir(`${top}/util`);
    await Deno.writeTextFile(`${top}/worker/a.ts`, "export const a = 1;\n");
    await Deno.writeTextFile(`${top}/worker/a_test.ts`, "// a test\n");
    const first = cacheKey("0.1.0", top);
    assert.equal(cacheKey("0.1.0", top), first);
    assert.notEqual(cacheKey("0.1.1", top), first);
    await Deno.writeTextFile(`${top}/worker/a_test.ts`, "// another test\n");
    assert.equal(cacheKey("0.1.0", top), first, "tests are not the child's sources");
    await Deno.writeTextFile(`${top}/util/b.ts`, "export const b = 2;\n");
    const second = cacheKey("0.1.0", top);
    assert.notEqual(second, first);
    await Deno.mkdir(`${top}/worker/ops`);
    await Deno.writeTextFile(`${top}/worker/ops/c.ts`, "export const c = 3;\n");
    const third = cacheKey("0.1.0", top);
    assert.notEqual(third, second, "a folder's folders are the child's sources too");
    await Deno.writeTextFile(`${top}/worker/ops/c.ts`, "export const c = 4;\n");
    assert.notEqual(cacheKey("0.1.0", top), third, "a file's bytes are in the key");
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});

Deno.test("module cache: other keys unused for a week and abandoned warm-ups are removed", async () => {
  const l = await layout();
  try {
    const base = `${l.state}/${CACHE_FOLDER}`;
    const now = Date.now();
    const at = (ms: number) => new Date(now - ms);
    for (
      const [name, age] of [
        ["old-key", STALE_MS.key + 60_000],
        ["recent-key", STALE_MS.key - 60_000],
        [".warming-old", STALE_MS.warming + 60_000],
        [".warming-now", 1_000],
      ] as const
    ) {
      await Deno.mkdir(`${base}/${name}/gen`, { recursive: true });
      await Deno.utime(`${base}/${name}`, at(age), at(age));
    }
    await Deno.utime(l.dir, at(STALE_MS.key * 2), at(STALE_MS.key * 2));
    await removeStale(base, l.dir, now);
    const left = [...Deno.readDirSync(base)].map((e) => e.name).sort();
    assert.deepEqual(left, [".warming-now", "0.1.0-abc", "recent-key"]);
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});

const found = kernelPlan();
const realModule = found.ok ? found.plan.module : null;

/** Every file under `dir` with its bytes, to see that nothing changed. */
async function contents(dir: string): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else {
        const bytes = e.isSymlink ? await Deno.readLink(p) : await Deno.readFile(p);
        all.set(p, typeof bytes === "string" ? bytes : bytes.join(","));
      }
    }
  };
  await walk(dir);
  return all;
}

Deno.test({
  name: "module cache: warmed once, used by the children, and left as it was",
  ignore: !status.usable || !realModule,
  fn: async () => {
    const l = await layout();
    try {
      const made = await moduleCache({
        stateDir: l.state,
        version: "0.0.0-test",
        module: realModule!,
        uid,
      });
      assert.ok(made.dir, "why" in made ? made.why : "");
      assert.ok((await Deno.readDir(`${made.dir}/gen`)[Symbol.asyncIterator]().next()).value);
      const before = await contents(made.dir);
      const again = await moduleCache({
        stateDir: l.state,
        version: "0.0.0-test",
        module: realModule!,
        uid,
      });
      assert.equal(again.dir, made.dir);
      await Deno.writeTextFile(`${l.ws}/f`, "hello\n");
      const worker = EffectWorker.start(
        { workspace: l.ws, scratch: l.scratch, run: false, moduleCache: made.dir },
        2,
        "kernel",
      );
      try {
        for (const w of worker.pool) {
          const r = await w.call({ op: "read", path: `${l.ws}/f`, maxBytes: 100 });
          assert.ok(r.ok && new TextDecoder().decode(r.value.bytes) === "hello\n");
        }
      } finally {
        await worker.terminate();
      }
      assert.deepEqual(await contents(made.dir), before, "the children changed their cache");
    } finally {
      await Deno.remove(l.top, { recursive: true });
    }
  },
});

Deno.test({
  name: "module cache: a child holding every Deno permission in the box cannot write it",
  ignore: !status.usable || !realModule || !found.ok,
  fn: async () => {
    const l = await layout();
    try {
      await Deno.writeTextFile(`${l.dir}/v8_code_cache_v2`, "the real one\n");
      const argv = childArgv(found.ok ? found.plan : plan, {
        workspace: l.ws,
        scratch: l.scratch,
        run: false,
        moduleCache: l.dir,
      });
      const sep = argv.indexOf("--");
      assert.ok(argv.slice(0, sep).join(" ").includes(`--ro-bind ${l.dir} /deno-dir`));
      // As if the child were taken over: our own program in its place, allowed everything.
      const attack = "for (const p of ['/deno-dir/v8_code_cache_v2', '/deno-dir/gen.js', " +
        `'${l.dir}/v8_code_cache_v2']) { try { Deno.writeTextFileSync(p, 'poison'); ` +
        "console.log('wrote ' + p); } catch (e) { console.log(e.name); } }";
      const out = await new Deno.Command(argv[0], {
        args: [...argv.slice(1, sep + 2), "eval", "-A", "--no-config", attack],
        clearEnv: true,
        env: {},
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(out.stdout);
      assert.ok(!said.includes("wrote"), said);
      assert.match(said, /PermissionDenied|NotCapable|ReadOnly|NotFound/, said);
      assert.equal(await Deno.readTextFile(`${l.dir}/v8_code_cache_v2`), "the real one\n");
      assert.deepEqual([...Deno.readDirSync(l.dir)].map((e) => e.name), ["v8_code_cache_v2"]);
    } finally {
      await Deno.remove(l.top, { recursive: true });
    }
  },
});

Deno.test("module cache: a folder above the state directory that others may write: none used", async () => {
  // Whoever may write the state directory's parent may move the checked cache away between the
  // check and the child's bind, and put theirs in its place (a shared folder, `sudo` with another
  // user's HOME). A sticky folder (/tmp) keeps others from renaming what is not theirs.
  const l = await layout();
  try {
    await Deno.chmod(l.top, 0o777);
    assert.match(usableCache(l.dir, [l.ws, l.scratch], uid) ?? "", /above the state/);
    await Deno.chmod(l.top, 0o1777);
    assert.equal(usableCache(l.dir, [l.ws, l.scratch], uid), null);
    await Deno.chmod(l.top, 0o700);
    if (uid === 0) {
      await Deno.chown(l.top, 1001, 1001);
      assert.match(usableCache(l.dir, [l.ws, l.scratch], uid) ?? "", /above the state/);
    }
  } finally {
    await Deno.remove(l.top, { recursive: true });
  }
});
