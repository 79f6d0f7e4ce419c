/**
 * `/undo` of one run's file changes (issue 27): before a run, the bytes of the workspace's files
 * are kept (policy/run_keep.ts), so a run that changed, created or removed files is taken back
 * whole; a file the person edited since is refused by name; past the session's budget a file is
 * kept by hash only and `/diff` says it cannot be undone; the kept state survives `--resume`; and
 * each file restored takes back the label it had before the run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { exists, type RunFixture, withRunPolicy } from "./support/run_fixture.ts";
import { undo, undoRefused, undoResumed } from "./support/undo.ts";
import { runTool } from "../src/tools/run.ts";
import type { ToolDef } from "../src/tools/tool.ts";
import type { FileLabels } from "../src/policy/capabilities.ts";
import { planUndo, sessionDiff } from "../src/policy/undo.ts";
import { ChangeLog } from "../src/policy/change_log.ts";
import type { WorkerRequest } from "../src/worker/protocol.ts";
import { sha256 } from "../src/util/hash.ts";
import { inContentStore, keepBeforeRun } from "../src/policy/run_keep.ts";
import { unpackSnapshot } from "../src/policy/run_changes.ts";

const run = runTool as unknown as ToolDef<never>;
const once = { run: { answer: "once" as const } };

async function sh(fx: RunFixture, script: string): Promise<string> {
  const out = await fx.call(run, { pipeline: [{ program: "sh", args: ["-c", script] }] });
  assert.equal(out.isError, false, out.content);
  return out.content;
}

const integrity = (policy: FileLabels, rel: string) =>
  policy.fileLabel(rel).then((l) => l.integrity);

Deno.test("undo runs: a run that changed a file is taken back, and the file is trusted again", async () => {
  await withRunPolicy({ files: { "a.txt": "old\n" }, answers: [once] }, async (fx) => {
    assert.equal(await integrity(fx.policy, "a.txt"), "T");
    assert.match(await sh(fx, "echo new > a.txt"), /0 created, 1 changed/);
    // Not vouched: the run's write made the trusted file untrusted.
    assert.equal(await integrity(fx.policy, "a.txt"), "U");
    const [d] = await sessionDiff(fx.policy);
    assert.equal(d.rel, "a.txt");
    assert.equal(d.byRun, true);
    assert.equal(d.preview?.kind, "diff");
    const record = fx.policy.changes.standing[0];
    assert.deepEqual(record.files[0].labelBefore, { integrity: "T", confidentiality: "pub" });
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "old\n");
    // It had no entry of its own before the run: its rules decide again, and they trust it.
    assert.equal(fx.policy.storedTrust.files.has("a.txt"), false);
    assert.equal(await integrity(fx.policy, "a.txt"), "T");
    assert.match(done.value.forPlanner.text, /a run's files \(a\.txt\)/);
  });
});

Deno.test("undo runs: a run that changed one file and created another: restored and removed", async () => {
  await withRunPolicy({ files: { "a.txt": "old\n" }, answers: [once] }, async (fx) => {
    await sh(fx, "echo new > a.txt && echo made > n.txt");
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "old\n");
    assert.equal(await exists(join(fx.root, "n.txt")), false);
    assert.deepEqual(await sessionDiff(fx.policy), []);
  });
});

Deno.test("undo runs: files a run removed come back, a removed folder with them", async () => {
  await withRunPolicy(
    { files: { "b.txt": "bee\n", "d/c.txt": "sea\n" }, answers: [once] },
    async (fx) => {
      assert.match(await sh(fx, "rm b.txt && rm -r d"), /3 removed/);
      const diff = await sessionDiff(fx.policy);
      assert.deepEqual(diff.map((f) => [f.rel, f.note]), [
        ["b.txt", "the file is removed"],
        ["d/c.txt", "the file is removed"],
      ]);
      const done = await undo(fx.policy);
      assert.ok(done.ok, done.ok ? "" : done.error);
      assert.equal(await Deno.readTextFile(join(fx.root, "b.txt")), "bee\n");
      assert.equal(await Deno.readTextFile(join(fx.root, "d/c.txt")), "sea\n");
      assert.equal(await integrity(fx.policy, "b.txt"), "T");
    },
  );
});

Deno.test("undo runs: a removed file the person put back meanwhile is not overwritten", async () => {
  await withRunPolicy({ files: { "b.txt": "bee\n" }, answers: [once] }, async (fx) => {
    await sh(fx, "rm b.txt");
    await Deno.writeTextFile(join(fx.root, "b.txt"), "the person's own\n");
    const refused = await planUndo(fx.policy, 1);
    assert.ok(!refused.ok);
    assert.match(refused.error, /b\.txt changed since/);
    assert.equal(await Deno.readTextFile(join(fx.root, "b.txt")), "the person's own\n");
  });
});

Deno.test("undo runs: a file the person edited since the run is refused, named, and left", async () => {
  await withRunPolicy(
    { files: { "a.txt": "old\n", "b.txt": "b\n" }, answers: [once] },
    async (fx) => {
      await sh(fx, "echo new > a.txt && echo new > b.txt");
      await Deno.writeTextFile(join(fx.root, "a.txt"), "the person's work\n");
      const refused = await planUndo(fx.policy, 1);
      assert.ok(!refused.ok);
      assert.match(refused.error, /a\.txt changed since this session left it/);
      assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "the person's work\n");
      // Nothing of the run was taken back: not the other file either.
      assert.equal(await Deno.readTextFile(join(fx.root, "b.txt")), "new\n");
      assert.equal(fx.policy.changes.standing.length, 1);
    },
  );
});

Deno.test("undo runs: past the session's budget a file is not read; /diff says it is not kept", async () => {
  const reads: string[] = [];
  const beforeCall = (r: WorkerRequest) => {
    if (r.op === "readMany") reads.push(...r.paths);
  };
  await withRunPolicy(
    {
      files: { "small.txt": "s\n", "big.txt": "more than the budget\n" },
      answers: [once],
      beforeCall,
    },
    async (fx) => {
      fx.policy.changes.budget = 4;
      await sh(fx, "echo new > big.txt");
      assert.equal(fx.policy.changes.storedBytes <= 4, true);
      const before = fx.policy.changes.standing[0].files[0].before;
      assert.deepEqual(before, { kind: "unknown", why: "budget" });
      // Nothing would use its hash: it was neither read nor hashed.
      assert.ok(!reads.includes(join(fx.root, "big.txt")), reads.join(","));
      const [d] = await sessionDiff(fx.policy);
      assert.equal(d.preview, null);
      assert.match(
        d.note ?? "",
        /kept 4 bytes of files: its bytes before were not kept; no diff, not undoable/,
      );
      const refused = await planUndo(fx.policy, 1);
      assert.ok(!refused.ok);
      assert.match(refused.error, /big\.txt was changed by a run after the session had kept/);
      assert.equal(await Deno.readTextFile(join(fx.root, "big.txt")), "new\n");
    },
  );
});

Deno.test("undo runs: after a resume with the budget spent, bytes kept before are found by hash", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-undo-spent-" });
  const files = { "a.txt": "old\n", "other.txt": "of another size\n" };
  try {
    const first = await ChangeLog.open(dir);
    // Only a.txt's bytes fit the first session's budget.
    first.log.budget = 4;
    await first.log.keepAllWithinBudget([new TextEncoder().encode("old\n")]);
    const hashed: string[] = [];
    const beforeCall = (r: WorkerRequest) => {
      if (r.op === "readMany" && r.hashOnly) hashed.push(...r.paths);
    };
    // The session resumed: its folder opened again by the fixture, the budget as small.
    await withRunPolicy(
      { files, answers: [once], sessionDir: dir, beforeCall },
      async (fx) => {
        fx.policy.changes.budget = 4;
        await sh(fx, "echo new > a.txt");
        // a.txt has the size of bytes kept: hashed in the worker, and found kept; other.txt,
        // of another size, cannot be kept already and is not read.
        assert.deepEqual(hashed, [join(fx.root, "a.txt")]);
        const a = fx.policy.changes.standing[0].files[0].before;
        assert.ok(a.kind === "bytes" && a.kept && a.sha256 === sha256("old\n"), JSON.stringify(a));
        const done = await undo(fx.policy);
        assert.ok(done.ok, done.ok ? "" : done.error);
        assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "old\n");
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("undo runs: the kept bytes survive a resume, and the run is undone after it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-undo-runs-" });
  try {
    let storedFirst = -1;
    await withRunPolicy(
      { files: { "a.txt": "old\n", "gone.txt": "g\n" }, answers: [once], sessionDir: dir },
      async (fx) => {
        await sh(fx, "echo new > a.txt && rm gone.txt");
        storedFirst = fx.policy.changes.storedBytes;
      },
    );
    const resumed = await ChangeLog.open(dir);
    assert.deepEqual(resumed.problems, []);
    assert.equal(resumed.log.standing.length, 1);
    // What the first open kept counts against the budget of the resumed session too.
    assert.equal(resumed.log.storedBytes, storedFirst);
    await undoResumed(dir, { "a.txt": "new\n" }, { "a.txt": "old\n", "gone.txt": "g\n" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("undo runs: an untrusted file a run changed is restored untrusted; a vouched entry comes back", async () => {
  await withRunPolicy(
    {
      files: { "vendor/v.txt": "vendored\n", "a.txt": "a\n" },
      trust: { ".": true, vendor: false },
      answers: [once],
    },
    async (fx) => {
      await fx.policy.vouchFile("a.txt", sha256("a\n"));
      const vouched = fx.policy.storedTrust.files.get("a.txt");
      await sh(fx, "echo x > vendor/v.txt && echo y > a.txt");
      const files = fx.policy.changes.standing[0].files;
      assert.equal(files.find((f) => f.rel === "vendor/v.txt")?.labelBefore?.integrity, "U");
      const done = await undo(fx.policy);
      assert.ok(done.ok, done.ok ? "" : done.error);
      assert.equal(await integrity(fx.policy, "vendor/v.txt"), "U");
      assert.deepEqual(fx.policy.storedTrust.files.get("a.txt"), vouched);
      assert.equal(await integrity(fx.policy, "a.txt"), "T");
    },
  );
});

Deno.test("undo runs: a file unchanged since the last run's read is not read again", async () => {
  const reads: string[][] = [];
  const beforeCall = (r: WorkerRequest) => {
    if (r.op === "readMany") reads.push(r.paths);
  };
  await withRunPolicy(
    { files: { "a.txt": "a\n", "b.txt": "b\n" }, answers: [once, once], beforeCall },
    async (fx) => {
      // The reads must fall in a second after the files' change time (run_keep.ts): wait for
      // the clock to pass it, bounded.
      const ctime = (await Deno.lstat(join(fx.root, "b.txt"))).ctime!.getTime();
      for (let i = 0; i < 300 && Math.floor(Date.now() / 1000) * 1000 <= ctime; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      await sh(fx, "echo changed > a.txt");
      const first = reads.flat();
      assert.ok(first.includes(join(fx.root, "b.txt")), first.join(","));
      reads.length = 0;
      await sh(fx, "echo again > a.txt");
      const second = reads.flat();
      assert.ok(!second.includes(join(fx.root, "b.txt")), second.join(","));
      assert.ok(second.includes(join(fx.root, "a.txt")), "the changed file is read again");
      // Both runs can be undone, newest first, back to the bytes before the first.
      const done = await undo(fx.policy, 2);
      assert.ok(done.ok, done.ok ? "" : done.error);
      assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "a\n");
    },
  );
});

Deno.test("undo runs: bytes kept in one pack are read back after a resume, never once altered", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-undo-pack-" });
  try {
    const { log } = await ChangeLog.open(dir);
    log.budget = 10;
    const [a, b, c] = ["aaaa", "bbbb", "cccc"].map((t) => new TextEncoder().encode(t));
    const kept = await log.keepAllWithinBudget([a, b, a, c]);
    // Within the budget: a and b (a twice, kept once); c does not fit.
    assert.deepEqual(kept.map((k) => k.kept), [true, true, true, false]);
    assert.equal(log.storedBytes, 8);
    const again = await ChangeLog.open(dir);
    assert.deepEqual(again.problems, []);
    assert.equal(again.log.storedBytes, 8);
    assert.deepEqual(await again.log.kept(sha256("bbbb")), b);
    assert.equal(await again.log.kept(sha256("cccc")), null);
    const pack = [...Deno.readDirSync(join(dir, "changes"))].find((e) => e.name.endsWith(".pack"))!;
    await Deno.writeTextFile(join(dir, "changes", pack.name), "aaaaBBBB");
    assert.equal(await again.log.kept(sha256("bbbb")), null, "altered bytes are never restored");
    assert.deepEqual(await again.log.kept(sha256("aaaa")), a);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("undo runs: a file that changed between the snapshot and its read is not kept: refused", async () => {
  let once = false;
  const beforeCall = async (r: WorkerRequest) => {
    if (r.op !== "readMany" || once) return;
    once = true;
    await Deno.writeTextFile(r.paths.find((p) => p.endsWith("/a.txt"))!, "typed meanwhile!\n");
  };
  await withRunPolicy(
    { files: { "a.txt": "old\n" }, answers: [{ run: { answer: "once" } }], beforeCall },
    async (fx) => {
      await sh(fx, "echo new > a.txt");
      assert.deepEqual(fx.policy.changes.standing[0].files[0].before, { kind: "unknown" });
      const refused = await planUndo(fx.policy, 1);
      assert.ok(!refused.ok);
      assert.match(refused.error, /a\.txt was changed by a run: its bytes before were not kept/);
    },
  );
});

Deno.test("undo runs: a run that put back bytes a vouch is bound to is still recorded and undone", async () => {
  await withRunPolicy({ files: { "a.txt": "mine\n" }, answers: [once] }, async (fx) => {
    // The vouch is for other bytes than the file holds now; the run writes those bytes.
    await fx.policy.vouchFile("a.txt", sha256("vouched\n"));
    await sh(fx, "printf 'vouched\\n' > a.txt");
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    assert.equal(await Deno.readTextFile(join(fx.root, "a.txt")), "mine\n");
  });
});

Deno.test("undo runs: what one session read before its runs is its own: another log reads again", async () => {
  const reads: string[][] = [];
  const beforeCall = (r: WorkerRequest) => {
    if (r.op === "readMany") reads.push(r.paths);
  };
  await withRunPolicy({ files: { "a.txt": "a\n" }, beforeCall }, async (fx) => {
    // The reads must fall in a second after the file's change time (run_keep.ts), bounded.
    const ctime = (await Deno.lstat(join(fx.root, "a.txt"))).ctime!.getTime();
    for (let i = 0; i < 300 && Math.floor(Date.now() / 1000) * 1000 <= ctime; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const snap = await fx.policy.worker.call({
      op: "snapshot",
      root: fx.root,
      skip: [],
      maxEntries: 1000,
    });
    assert.ok(snap.ok);
    const before = unpackSnapshot(snap.value);
    const [one, two] = [ChangeLog.inMemory(), ChangeLog.inMemory()];
    const keep = (changes: ChangeLog) =>
      keepBeforeRun({ changes, worker: fx.policy.worker, workspace: fx.policy.workspace }, before);
    await keep(one);
    await keep(one);
    assert.equal(reads.flat().filter((p) => p.endsWith("/a.txt")).length, 1, "one log reads once");
    const kept = await keep(two);
    assert.equal(reads.flat().filter((p) => p.endsWith("/a.txt")).length, 2, "the other reads");
    assert.equal(kept.get("a.txt")?.kind, "bytes");
    assert.equal(one.runReads.size, 1);
    assert.equal(two.runReads.size, 1);
    assert.notEqual(one.runReads, two.runReads);
  });
});

Deno.test("undo runs: git's objects are not kept: the budget is not spent on them", () => {
  for (
    const rel of [
      ".git/objects/ab/cdef",
      "sub/.git/objects/pack/pack-1.pack",
      ".git/modules/lib/objects/ab/cdef",
      ".git/lfs/objects/ab/cd/abcd",
      ".pnpm-store/v3/files/ab/cdef",
    ]
  ) assert.equal(inContentStore(rel), true, rel);
  for (
    const rel of [
      ".git/refs/heads/main",
      ".git/index",
      "src/objects/a.ts",
      ".gitobjects/a",
      "git/objects/a",
    ]
  ) assert.equal(inContentStore(rel), false, rel);
});

Deno.test("undo runs: a run that adds git objects is undone; one that rewrites an object is refused", async () => {
  const reads: string[] = [];
  const beforeCall = (r: WorkerRequest) => {
    if (r.op === "readMany") reads.push(...r.paths);
  };
  const files = {
    ".git/objects/ab/cdef": "blob\n",
    ".git/objects/12/old": "older blob\n",
    ".git/refs/heads/main": "1111\n",
  };
  await withRunPolicy({ files, answers: [once, once], beforeCall }, async (fx) => {
    await sh(fx, "echo 2222 > .git/refs/heads/main && echo new > .git/objects/12/3456");
    assert.ok(!reads.some((p) => p.includes("/.git/objects/")), reads.join(","));
    assert.ok(reads.includes(join(fx.root, ".git/refs/heads/main")), "the ref is kept");
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    assert.equal(await Deno.readTextFile(join(fx.root, ".git/refs/heads/main")), "1111\n");
    assert.equal(await exists(join(fx.root, ".git/objects/12/3456")), false);
    await sh(fx, "echo altered > .git/objects/ab/cdef");
    const refused = await planUndo(fx.policy, 1);
    assert.ok(!refused.ok);
    assert.match(refused.error, /cdef was changed by a run in a content-addressed store/);
    const [d] = await sessionDiff(fx.policy);
    assert.match(d.note ?? "", /content-addressed store .*; no diff, not undoable/);
  });
});

const modeOf = async (path: string) => (await Deno.lstat(path)).mode! & 0o7777;

Deno.test("undo runs: a removed executable comes back with its mode; a removed empty folder is made again", async () => {
  await withRunPolicy({ files: { "tool.sh": "#!/bin/sh\n" }, answers: [once] }, async (fx) => {
    await Deno.chmod(join(fx.root, "tool.sh"), 0o750);
    await Deno.mkdir(join(fx.root, "empty/inner"), { recursive: true });
    assert.match(await sh(fx, "rm tool.sh && rm -r empty"), /3 removed/);
    const diff = await sessionDiff(fx.policy);
    assert.deepEqual(
      new Map(diff.map((f) => [f.rel, f.note])),
      new Map([["empty/inner", "an empty folder, removed"], ["tool.sh", "the file is removed"]]),
    );
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    assert.equal(await modeOf(join(fx.root, "tool.sh")), 0o750);
    assert.ok((await Deno.lstat(join(fx.root, "empty/inner"))).isDirectory);
  });
});

Deno.test("undo runs: a run that makes a file setuid is undone to its mode before, never a setuid one", async () => {
  await withRunPolicy(
    { files: { "tool.sh": "#!/bin/sh\n", "was.sh": "#!/bin/sh\n" }, answers: [once] },
    async (fx) => {
      await Deno.chmod(join(fx.root, "tool.sh"), 0o640);
      // A file setuid before the run: its permission bits come back, the setuid bit never.
      await Deno.chmod(join(fx.root, "was.sh"), 0o4755);
      await sh(fx, "chmod 6755 tool.sh && echo changed >> was.sh && chmod 4755 was.sh");
      assert.equal(await modeOf(join(fx.root, "tool.sh")), 0o6755, "the run made it setuid");
      const done = await undo(fx.policy);
      assert.ok(done.ok, done.ok ? "" : done.error);
      assert.equal(await modeOf(join(fx.root, "tool.sh")), 0o640);
      assert.equal(await modeOf(join(fx.root, "was.sh")), 0o755);
      assert.equal(await Deno.readTextFile(join(fx.root, "was.sh")), "#!/bin/sh\n");
    },
  );
});

Deno.test("undo runs: a mode with more than permission bits in the session's state is not read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-undo-mode-" });
  try {
    const forged = {
      type: "change",
      seq: 0,
      by: "run",
      files: [{
        rel: "tool.sh",
        before: { kind: "bytes", sha256: sha256("x"), size: 1, kept: true, mode: 0o4755 },
        after: sha256("y"),
        trustBefore: null,
      }],
    };
    await Deno.mkdir(join(dir, "changes"), { recursive: true });
    await Deno.writeTextFile(join(dir, "changes.jsonl"), JSON.stringify(forged) + "\n");
    const { log, problems } = await ChangeLog.open(dir);
    assert.equal(log.records.length, 0);
    assert.equal(problems.length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("undo runs: a removed folder a run then made a link is not written through", async () => {
  await withRunPolicy(
    { files: { "d/c.txt": "sea\n", "e/keep.txt": "e\n" }, answers: [once] },
    async (fx) => {
      // The run removes d/c.txt and leaves d a link to another folder of the workspace: the undo
      // would put c.txt back at e/c.txt, a file the person was never shown, under d/c.txt's label.
      await sh(fx, "rm -r d && ln -s e d");
      const plan = await planUndo(fx.policy, 1);
      if (plan.ok) {
        const done = await undo(fx.policy);
        assert.equal(done.ok, false, "an undo through a link went ahead");
      }
      assert.equal(await exists(join(fx.root, "e/c.txt")), false);
      assert.equal(await Deno.readTextFile(join(fx.root, "e/keep.txt")), "e\n");
    },
  );
});

Deno.test("undo runs: a removed file whose folder became a link to the state folder since is not put back there", async () => {
  await withRunPolicy(
    {
      files: { "d/c.txt": "sea\n", ".bravebot/keep": "s\n" },
      protect: [".bravebot"],
      answers: [once],
    },
    async (fx) => {
      assert.match(await sh(fx, "rm d/c.txt"), /1 removed/);
      // Outside any run (the person, another process): d becomes a link to the state folder.
      await Deno.remove(join(fx.root, "d"));
      await Deno.symlink(".bravebot", join(fx.root, "d"));
      const refused = await undoRefused(fx.policy);
      assert.match(refused, /d\/c\.txt/);
      assert.equal(await exists(join(fx.root, ".bravebot/c.txt")), false);
    },
  );
});

Deno.test("undo runs: a removed empty folder whose parent became a link since is not made through it", async () => {
  await withRunPolicy(
    {
      files: { "d/x/": "", "d/keep.txt": "k\n", ".bravebot/keep": "s\n" },
      protect: [".bravebot"],
      answers: [once],
    },
    async (fx) => {
      assert.match(await sh(fx, "rmdir d/x"), /1 removed/);
      await Deno.rename(join(fx.root, "d"), join(fx.root, ".bravebot/d"));
      await Deno.symlink(".bravebot/d", join(fx.root, "d"));
      const refused = await undoRefused(fx.policy);
      assert.match(refused, /d\/x/);
      assert.equal(await exists(join(fx.root, ".bravebot/d/x")), false);
    },
  );
});

/** Waits (bounded) until the clock is early in a second: at least 50 ms, at most 300 ms into it. */
async function earlyInSecond(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ms = Date.now() % 1000;
    if (ms >= 50 && ms < 300) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits (bounded) until the clock is past the second `ms` falls in. */
async function pastSecondOf(ms: number): Promise<void> {
  const next = Math.floor(ms / 1000) * 1000 + 1000;
  for (let i = 0; i < 300 && Date.now() < next + 20; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

// docs/decisions.md ("A keep's second is taken before its read"): a file read before a run is
// not read again while its key is what it was and its change time fell in a second before the
// read's. A rewrite in the second the file last changed, after the read, with its size and
// modification time kept, keeps its key: the second must be the one the read started in, not the
// one its answer came back in, or the bytes read before the rewrite would stand for the file
// afterwards (and /undo would restore them).
Deno.test("undo runs: a file rewritten after its read, in its own second, is read again: the bytes before the rewrite never stand for it", async () => {
  const OLD = "the bytes at the read\n";
  const NEW = "THE BYTES AFTER IT!!!\n";
  await withRunPolicy({ files: { "src/a.ts": "a\n" } }, async (fx) => {
    const path = join(fx.root, "f.txt");
    const snapshot = async () => {
      const snap = await fx.policy.worker.call({
        op: "snapshot",
        root: fx.root,
        skip: [],
        maxEntries: 1000,
      });
      assert.ok(snap.ok);
      return unpackSnapshot(snap.value);
    };
    const workspace = fx.policy.workspace;
    for (let attempt = 0; attempt < 5; attempt++) {
      await earlyInSecond();
      Deno.writeTextFileSync(path, OLD);
      const { mtime, ctime } = Deno.lstatSync(path);
      const changes = ChangeLog.inMemory();
      const before = await snapshot();
      // The worker reads the file; then it is rewritten, its size and modification time kept,
      // in the second it was written in; and the read's answer comes back in the next second.
      const racing = {
        call: async (request: WorkerRequest) => {
          const got = await fx.policy.worker.call(request);
          if (request.op === "readMany" && request.paths.includes(path)) {
            Deno.writeTextFileSync(path, NEW);
            Deno.utimeSync(path, mtime!, mtime!);
            await pastSecondOf(ctime!.getTime());
          }
          return got;
        },
      } as unknown as typeof fx.policy.worker;
      const first = await keepBeforeRun({ changes, worker: racing, workspace }, before);
      const read = first.get("f.txt");
      assert.equal(read?.kind === "bytes" && read.sha256, sha256(OLD), "the read's bytes");
      const now = await snapshot();
      // The rewrite fell in the next second (its key moved, which the rule sees): again.
      if (now.entries.get("f.txt")!.key !== before.entries.get("f.txt")!.key) continue;
      const again = await keepBeforeRun({ changes, worker: fx.policy.worker, workspace }, now);
      const state = again.get("f.txt");
      assert.equal(
        state?.kind === "bytes" && state.sha256,
        sha256(NEW),
        "the bytes read before the rewrite stood for the file after it",
      );
      return;
    }
    assert.fail("in 5 attempts no rewrite fell in the second of the file's read");
  });
});
