import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { walk } from "./walk.ts";
import { pathNameShown } from "./reads.ts";

const all = { accept: () => true, limit: 10_000 };

Deno.test("walk: an ignored directory is not entered at all", async () => {
  await withPolicy({
    files: { ".gitignore": "big/\n", "big/a/b/c": "", "x": "" },
    trust: { ".": true },
  }, async (fx) => {
    const r = await walk(fx.policy, ".", all);
    assert.deepEqual(r.entries.map((e) => e.rel), [".gitignore", "x"]);
    const listed = fx.workerCalls.flatMap((c) => c.op === "readDirs" ? c.paths : []);
    assert.ok(!listed.some((p) => p.includes("big")), listed.join(","));
  });
});

Deno.test("walk: a deeper .gitignore overrides a shallower one, as in git", async () => {
  await withPolicy({
    files: {
      ".gitignore": "*.gen\n",
      "a/.gitignore": "!keep.gen\n",
      "a/keep.gen": "",
      "a/drop.gen": "",
      "b/keep.gen": "",
    },
    trust: { ".": true },
  }, async (fx) => {
    const r = await walk(fx.policy, ".", { accept: (e) => e.kind === "file", limit: 100 });
    assert.deepEqual(r.entries.map((e) => e.rel).sort(), [
      ".gitignore",
      "a/.gitignore",
      "a/keep.gen",
    ]);
  });
});

Deno.test("walk: an untrusted .gitignore still hides entries whose names are references anyway", async () => {
  await withPolicy({
    files: { "vendor/.gitignore": "junk/\n", "vendor/junk/x": "", "vendor/y": "" },
    trust: { ".": true, vendor: false },
  }, async (fx) => {
    const r = await walk(fx.policy, ".", all);
    assert.deepEqual(r.entries.map((e) => [e.rel, e.nameShown]), [
      ["vendor", true],
      ["vendor/.gitignore", false],
      ["vendor/y", false],
    ]);
  });
});

Deno.test("walk: entries point at the directory entry holding them", async () => {
  await withPolicy({ files: { "a/b/c": "" }, trust: { ".": true } }, async (fx) => {
    const r = await walk(fx.policy, ".", all);
    assert.deepEqual(r.entries.map((e) => [e.rel, e.parentIndex, e.sub]), [
      ["a", -1, "a"],
      ["a/b", 0, "a/b"],
      ["a/b/c", 1, "a/b/c"],
    ]);
    const sub = await walk(fx.policy, "a", all);
    assert.deepEqual(sub.entries.map((e) => e.sub), ["b", "b/c"]);
  });
});

Deno.test("walk: stops at the limit and says it was truncated", async () => {
  await withPolicy({ files: { "a": "", "b": "", "c": "" }, trust: { ".": true } }, async (fx) => {
    const r = await walk(fx.policy, ".", { accept: () => true, limit: 2 });
    assert.equal(r.entries.length, 2);
    assert.equal(r.truncated, true);
    const exact = await walk(fx.policy, ".", { accept: () => true, limit: 3 });
    assert.equal(exact.truncated, false);
  });
});

Deno.test("walk: Brave Bot's state folder inside the workspace is never walked", async () => {
  await withPolicy({
    files: { "state/refs/0.bin": "QUARANTINED BYTES\n", "src/a.ts": "QUARANTINED? no\n" },
    trust: { ".": true },
    protect: ["state"],
  }, async (fx) => {
    const r = await walk(fx.policy, ".", all);
    assert.deepEqual(r.entries.map((e) => e.rel), ["src", "src/a.ts"]);
  });
});

Deno.test("walk: breadth first, names in code-unit order, the same across many batches in flight", async () => {
  // 150 directories at the first level: more than one readDirs request, several in flight.
  const names = ["B", "a", "a-b", "a.b", "ä", "Z", "_", "a b", "\u{1F600}", "a\u0301"];
  const files: Record<string, string> = {};
  for (let i = 0; i < 150; i++) {
    const top = `${names[i % names.length]}${i}`;
    files[`${top}/${names[(i + 3) % names.length]}`] = "";
    files[`${top}/${names[(i + 5) % names.length]}/deep/${names[i % names.length]}`] = "";
  }
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    // The expected order, from a plain level-by-level walk.
    const expected: string[] = [];
    let level = ["."];
    while (level.length > 0) {
      const next: string[] = [];
      for (const dir of level) {
        const here = [...Deno.readDirSync(`${fx.root}/${dir}`)].map((e) => e.name).sort();
        for (const name of here) {
          const rel = dir === "." ? name : `${dir}/${name}`;
          expected.push(rel);
          if (Deno.statSync(`${fx.root}/${rel}`).isDirectory) next.push(rel);
        }
      }
      level = next;
    }
    const r = await walk(fx.policy, ".", all);
    assert.deepEqual(r.entries.map((e) => e.rel), expected);
    // Split across the pool's workers (as list_files does), the result is the same.
    assert.ok(fx.policy.worker.pool.length > 1);
    const before = fx.workerCalls.length;
    const split = await walk(fx.policy, ".", { ...all, wholePool: true });
    assert.deepEqual(split, r);
    const listings = fx.workerCalls.slice(before).filter((c) => c.op === "readDirs").length;
    assert.ok(listings > 2, `${listings} readDirs requests`);
    for (const [i, e] of r.entries.entries()) {
      const parent = e.parentIndex === -1 ? "." : r.entries[e.parentIndex].rel;
      assert.equal(parent, e.parent, `entry ${i}`);
    }
    for (const limit of [1, 63, 64, 65, 300, expected.length - 1]) {
      const cut = await walk(fx.policy, ".", { accept: () => true, limit });
      assert.deepEqual(cut.entries.map((e) => e.rel), expected.slice(0, limit));
      assert.equal(cut.truncated, true);
    }
    const dirsOnly = await walk(fx.policy, ".", {
      accept: (e) => e.kind === "directory",
      limit: 1e6,
    });
    assert.deepEqual(
      dirsOnly.entries.map((
        e,
      ) => [e.rel, e.parentIndex === -1 ? "." : dirsOnly.entries[e.parentIndex].rel]),
      dirsOnly.entries.map((e) => [e.rel, e.parent]),
    );
  });
});

Deno.test("walk: whether a name is shown is the rule pathNameShown gives along the path", async () => {
  await withPolicy({
    files: {
      "a/b/c.txt": "",
      "vendor/x/y.txt": "",
      "vendor/named/in/z.txt": "",
      "src/deep/w.txt": "",
    },
    trust: { ".": true, vendor: false, "vendor/named/in": true, "src/deep": false },
  }, async (fx) => {
    for (const base of [".", "vendor", "src"]) {
      const r = await walk(fx.policy, base, all);
      assert.ok(r.entries.length > 0);
      for (const e of r.entries) {
        assert.equal(e.nameShown, pathNameShown(fx.policy, e.rel, base), `${base}: ${e.rel}`);
      }
    }
  });
});

/** The names a walk of `base` lists, relative to it. */
async function listed(fx: { policy: Parameters<typeof walk>[0] }, base: string) {
  return (await walk(fx.policy, base, all)).entries.map((e) => e.sub);
}

Deno.test("walk: an ancestor .gitignore that is a link to a file outside the workspace decides nothing", async () => {
  await withPolicy({
    files: { "sub/hidden.txt": "", "sub/shown.txt": "" },
    trust: { ".": true },
    outside: true,
  }, async (fx) => {
    await Deno.writeTextFile(join(fx.outside!, "ig"), "hidden.txt\n");
    await Deno.symlink(join(fx.outside!, "ig"), join(fx.root, ".gitignore"));
    assert.deepEqual(await listed(fx, "sub"), ["hidden.txt", "shown.txt"]);
    const reads = fx.workerCalls.filter((c) => c.op === "readMany");
    assert.ok(
      reads.length > 0 && reads.every((c) => c.op === "readMany" && c.followLinks === false),
    );
  });
});

Deno.test("walk: an ancestor .gitignore that is a link to an untrusted file inside decides nothing", async () => {
  await withPolicy({
    files: { "untrusted/ig": "hidden.txt\n", "sub/hidden.txt": "", "sub/shown.txt": "" },
    trust: { ".": true, untrusted: false },
    symlinks: { ".gitignore": "untrusted/ig", "sub/deeper/.gitignore": "../../untrusted/ig" },
  }, async (fx) => {
    await Deno.writeTextFile(join(fx.root, "sub/deeper/hidden.txt"), "");
    assert.deepEqual(await listed(fx, "sub"), [
      "deeper",
      "hidden.txt",
      "shown.txt",
      "deeper/.gitignore",
      "deeper/hidden.txt",
    ]);
    assert.deepEqual(await listed(fx, "sub/deeper"), [".gitignore", "hidden.txt"]);
  });
});

Deno.test("walk: an ancestor .gitignore in an untrusted directory decides nothing about a trusted directory's names; a trusted one does", async () => {
  await withPolicy({
    files: {
      // Not even by saying the walked directory is itself ignored (which would switch off the
      // trusted a/.gitignore below it).
      ".gitignore": "hidden.txt\na/\n",
      "a/.gitignore": "gone.txt\n",
      "a/b/hidden.txt": "",
      "a/b/gone.txt": "",
      "a/b/x": "",
    },
    trust: { ".": false, a: true },
  }, async (fx) => {
    assert.deepEqual(await listed(fx, "a/b"), ["hidden.txt", "x"]);
  });
});

Deno.test("walk: a pace that holds the walk lets it take no entry until it settles", async () => {
  const files: Record<string, string> = {};
  for (const d of ["a", "b", "c"]) for (const f of ["1", "2"]) files[`${d}/x/${f}`] = "";
  await withPolicy({ files, trust: { ".": true } }, async (fx) => {
    let holding = false;
    let holds = 0;
    const seen: string[] = [];
    const r = await walk(fx.policy, ".", {
      accept: (e) => {
        assert.ok(!holding, `${e.rel} was taken while the walk was held`);
        seen.push(e.rel);
        return true;
      },
      limit: 100,
      pace: () => {
        if (holds++ % 2 === 1) return undefined;
        holding = true;
        // Let the worker answer whatever is in flight meanwhile; then the walk may go on.
        return fx.policy.worker.call({ op: "stat", path: fx.root }).then(() => {
          holding = false;
        });
      },
    });
    assert.ok(holds >= 3, `pace asked ${holds} times`);
    assert.deepEqual(r.entries.map((e) => e.rel), seen);
    assert.equal(r.entries.length, 12);
  });
});
