/**
 * Vouched commands (docs/contract.md §8): exact argv or program plus prefix, keyed by resolved
 * path, a workspace program bound to its hash; the store is read afresh at each decision.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../../test/support/fast_check.ts";
import { describeVouch, type Vouch, vouchCovers, vouchHolds, VouchStore } from "./vouches.ts";

const base: Vouch = {
  id: "v1",
  program: "/usr/bin/git",
  match: "exact",
  args: ["status"],
  created: "2026-01-01T00:00:00.000Z",
};

Deno.test("vouch: an exact vouch covers only the identical argv of the same program", () => {
  assert.equal(vouchCovers(base, { resolved: "/usr/bin/git", args: ["status"] }), true);
  assert.equal(vouchCovers(base, { resolved: "/usr/bin/git", args: ["status", "-s"] }), false);
  assert.equal(vouchCovers(base, { resolved: "/usr/bin/git", args: [] }), false);
  assert.equal(vouchCovers(base, { resolved: "/opt/evil/git", args: ["status"] }), false);
  fc.assert(
    fc.property(fc.array(fc.string()), fc.array(fc.string()), (a, b) => {
      const v = { ...base, args: a };
      const same = a.length === b.length && a.every((x, i) => x === b[i]);
      return vouchCovers(v, { resolved: base.program, args: b }) === same;
    }),
  );
});

Deno.test("vouch: a prefix vouch covers argv starting with its arguments, nothing shorter", () => {
  const v: Vouch = { ...base, match: "prefix", args: ["diff"] };
  assert.equal(vouchCovers(v, { resolved: base.program, args: ["diff"] }), true);
  assert.equal(vouchCovers(v, { resolved: base.program, args: ["diff", "--stat"] }), true);
  assert.equal(vouchCovers(v, { resolved: base.program, args: ["difftool"] }), false);
  assert.equal(vouchCovers(v, { resolved: base.program, args: ["push", "diff"] }), false);
  fc.assert(
    fc.property(fc.array(fc.string()), fc.array(fc.string()), (prefix, rest) => {
      const p: Vouch = { ...base, match: "prefix", args: prefix };
      return vouchCovers(p, { resolved: base.program, args: [...prefix, ...rest] });
    }),
  );
});

Deno.test("vouch: a workspace program's vouch holds only while its hash is the same", () => {
  const h1 = "a".repeat(64);
  const h2 = "b".repeat(64);
  const v: Vouch = { ...base, program: "/ws/tool.sh", args: [], sha256: h1 };
  assert.equal(vouchHolds(v, { resolved: "/ws/tool.sh", args: [], sha256: h1 }), true);
  assert.equal(vouchHolds(v, { resolved: "/ws/tool.sh", args: [], sha256: h2 }), false);
  // A vouch given without a hash never covers a program that now lies in the workspace.
  assert.equal(vouchHolds(base, { resolved: base.program, args: ["status"], sha256: h1 }), false);
  assert.equal(vouchHolds(base, { resolved: base.program, args: ["status"], sha256: null }), true);
});

Deno.test("vouch store: add, list, remove, persisted; a second reader sees changes at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-vouch-" });
  try {
    const file = join(dir, "vouches.json");
    const a = VouchStore.at(file, "/ws");
    const b = VouchStore.at(file, "/ws");
    const v1 = await a.add({ program: "/usr/bin/git", match: "exact", args: ["status"] });
    const v2 = await a.add({ program: "/usr/bin/git", match: "prefix", args: ["diff"] });
    assert.deepEqual([v1.id, v2.id], ["v1", "v2"]);
    const again = await a.add({ program: "/usr/bin/git", match: "exact", args: ["status"] });
    assert.equal(again.id, "v1", "an identical vouch is not stored twice");
    assert.deepEqual((await b.list()).map((v) => v.id), ["v1", "v2"]);
    const stage = { resolved: "/usr/bin/git", args: ["diff", "x"], sha256: null };
    assert.equal((await a.lookup(stage)).status, "vouched");
    assert.equal((await b.remove("v2"))?.id, "v2");
    assert.equal((await a.lookup(stage)).status, "none", "removed elsewhere: gone here too");
    assert.equal(await b.remove("v2"), null);
    const v3 = await a.add({ program: "/bin/ls", match: "exact", args: [] });
    assert.equal(v3.id, "v3", "ids are never reused");
    const mode = (await Deno.stat(file)).mode! & 0o777;
    assert.equal(mode, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vouch store: a void vouch is reported as such, not as none", async () => {
  const store = VouchStore.inMemory("/ws");
  await store.add({ program: "/ws/t.sh", match: "exact", args: [], sha256: "c".repeat(64) });
  const r = await store.lookup({ resolved: "/ws/t.sh", args: [], sha256: "d".repeat(64) });
  assert.equal(r.status, "void");
});

Deno.test("vouch store: a corrupt or foreign file grants nothing and is reported", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-vouch-" });
  try {
    const file = join(dir, "vouches.json");
    await Deno.writeTextFile(file, '{"version":1,"vouches":"everything"}');
    const store = VouchStore.at(file, "/ws");
    assert.deepEqual(await store.list(), []);
    assert.match(store.problems.join("\n"), /corrupt/);
    const other = VouchStore.at(join(dir, "other.json"), "/elsewhere");
    await other.add({ program: "/bin/rm", match: "prefix", args: [] });
    await Deno.rename(join(dir, "other.json"), file);
    const mine = VouchStore.at(file, "/ws");
    const r = await mine.lookup({ resolved: "/bin/rm", args: ["-rf", "/"], sha256: null });
    assert.equal(r.status, "none");
    assert.match(mine.problems.join("\n"), /belongs to \/elsewhere/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vouch: described with every argument escaped", () => {
  const line = describeVouch({ ...base, args: ["a\u202Eb", "x y"] });
  assert.ok(line.includes("⟦U+202E⟧"));
  assert.ok(line.includes("'x y'"));
  assert.ok(!line.includes("\u202E"));
});

Deno.test("vouch store: two stores on one file, thirty vouches each at once: none lost, ids unique", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-vouch-" });
  try {
    const file = join(dir, "vouches.json");
    const stores = [VouchStore.at(file, "/ws"), VouchStore.at(file, "/ws")];
    const adds = stores.flatMap((store, s) =>
      Array.from(
        { length: 30 },
        (_, i) => store.add({ program: "/usr/bin/git", match: "exact", args: [`s${s}-${i}`] }),
      )
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("60 vouches: not done within 20 s")), 20_000);
    });
    const added = await Promise.race([Promise.all(adds), late]).finally(() => clearTimeout(timer));
    assert.equal(new Set(added.map((v) => v.id)).size, 60, "an id was handed out twice");
    const listed = await stores[0].list();
    assert.equal(listed.length, 60);

    // A vouch removed through one store stays removed when the other adds after it.
    const gone = added[0];
    assert.equal((await stores[1].remove(gone.id))?.id, gone.id);
    await stores[0].add({ program: "/bin/ls", match: "exact", args: [] });
    const after = await stores[0].list();
    assert.equal(after.length, 60);
    assert.ok(!after.some((v) => v.id === gone.id), "the removed vouch came back");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
