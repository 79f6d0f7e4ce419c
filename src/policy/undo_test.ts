import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { undo, undoRefused, undoResumed } from "../../test/support/undo.ts";
import { writeFile } from "./writes.ts";
import { editFile } from "./edits.ts";
import { recordRunChanges, type RunChanges } from "./run_changes.ts";
import { applyUndo, planUndo, sessionDiff } from "./undo.ts";
import { ChangeLog, KEEP_MAX_BYTES } from "./change_log.ts";
import { sha256 } from "../util/hash.ts";
import { loggedLine } from "../../test/support/audit_lines.ts";

const yes = { write: { approved: true } };

function runChanges(partial: Partial<RunChanges>): RunChanges {
  return {
    created: [],
    changed: [],
    unsure: [],
    removed: [],
    blind: [],
    complete: true,
    seen: new Map(),
    ...partial,
  };
}

Deno.test("undo: a write over a file is taken back, bytes and label; the planner is told", async () => {
  await withPolicy(
    { files: { "a.txt": "old\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      const wrote = await writeFile(fx.policy, { path: "a.txt", contents: "new\n" });
      assert.equal(wrote.status, "written");
      assert.equal(fx.policy.storedTrust.files.get("a.txt")?.sha256, sha256("new\n"));
      const diff = await sessionDiff(fx.policy);
      assert.equal(diff.length, 1);
      assert.equal(diff[0].rel, "a.txt");
      assert.equal(diff[0].preview?.kind, "diff");
      const done = await undo(fx.policy);
      assert.ok(done.ok, done.ok ? "" : done.error);
      assert.equal(await fx.read("a.txt"), "old\n");
      // The file had no entry of its own before: the rules decide its label again.
      assert.equal(fx.policy.storedTrust.files.has("a.txt"), false);
      assert.match(done.value.forPlanner.text, /undid 1 change: your write_file \(a\.txt\)/);
      assert.equal(done.value.forPlanner.label.integrity, "T");
      assert.equal(done.value.forPlanner.label.confidentiality, "priv");
      assert.deepEqual(await sessionDiff(fx.policy), []);
      const again = await planUndo(fx.policy, 1);
      assert.ok(!again.ok);
    },
  );
});

Deno.test("undo: a created file is removed again", async () => {
  await withPolicy({ trust: { ".": true }, answers: [yes] }, async (fx) => {
    assert.equal((await writeFile(fx.policy, { path: "n.txt", contents: "x" })).status, "written");
    const done = await undo(fx.policy);
    assert.ok(done.ok);
    await assert.rejects(Deno.lstat(join(fx.root, "n.txt")), Deno.errors.NotFound);
    assert.equal(fx.policy.storedTrust.files.has("n.txt"), false);
  });
});

Deno.test("undo: two edits, /undo 2 takes both back in order; an untrusted file's label comes back", async () => {
  await withPolicy(
    { files: { "a.txt": "one two\n" }, trust: { ".": true }, answers: [yes, yes] },
    async (fx) => {
      // The file was untrusted by a run before the session's edits: that entry comes back.
      await fx.policy.changeTrust((m) => m.setFile("a.txt", { integrity: "U", why: "run" }));
      await fx.policy.vouchFile("a.txt", sha256("one two\n"));
      const before = fx.policy.storedTrust.files.get("a.txt");
      const e1 = await editFile(fx.policy, { path: "a.txt", old_text: "one", new_text: "1" });
      assert.equal(e1.status, "edited");
      const e2 = await editFile(fx.policy, { path: "a.txt", old_text: "two", new_text: "2" });
      assert.equal(e2.status, "edited");
      assert.equal(await fx.read("a.txt"), "1 2\n");
      const plan = await planUndo(fx.policy, 2);
      assert.ok(plan.ok);
      assert.equal(plan.value.shown.length, 1, "one file, shown once");
      const done = await applyUndo(fx.policy, plan.value);
      assert.ok(done.ok);
      assert.equal(await fx.read("a.txt"), "one two\n");
      assert.deepEqual(fx.policy.storedTrust.files.get("a.txt"), before);
      assert.equal((await fx.policy.fileLabel("a.txt")).integrity, "T");
    },
  );
});

Deno.test("undo: a file changed since by someone else is refused by name and left alone", async () => {
  await withPolicy(
    { files: { "a.txt": "old\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      await writeFile(fx.policy, { path: "a.txt", contents: "new\n" });
      await Deno.writeTextFile(join(fx.root, "a.txt"), "the person's work\n");
      const plan = await planUndo(fx.policy, 1);
      assert.ok(!plan.ok);
      assert.match(plan.error, /a\.txt changed since/);
      assert.equal(await fx.read("a.txt"), "the person's work\n");
      assert.equal(fx.policy.changes.standing.length, 1);
    },
  );
});

Deno.test("undo: a change made between the plan and its act is not overwritten (checked by hash)", async () => {
  await withPolicy(
    { files: { "a.txt": "old\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      await writeFile(fx.policy, { path: "a.txt", contents: "new\n" });
      const plan = await planUndo(fx.policy, 1);
      assert.ok(plan.ok);
      await Deno.writeTextFile(join(fx.root, "a.txt"), "typed meanwhile\n");
      const done = await applyUndo(fx.policy, plan.value);
      assert.ok(!done.ok);
      assert.match(done.error, /a\.txt changed since/);
      assert.equal(await fx.read("a.txt"), "typed meanwhile\n");
    },
  );
});

Deno.test("undo: a run's created files are removed; a run's changed file is refused, named", async () => {
  await withPolicy({ files: { "b.txt": "b\n" }, trust: { ".": true } }, async (fx) => {
    await Deno.writeTextFile(join(fx.root, "made.txt"), "by the run\n");
    await recordRunChanges(fx.policy, runChanges({ created: ["made.txt"] }), "U");
    assert.equal(fx.policy.storedTrust.files.get("made.txt")?.nameChosen, true);
    const diff = await sessionDiff(fx.policy);
    assert.equal(diff[0].byRun, true);
    const plan = await planUndo(fx.policy, 1);
    assert.ok(plan.ok);
    // A name the run chose is not named to the planner.
    const done = await applyUndo(fx.policy, plan.value);
    assert.ok(done.ok);
    assert.doesNotMatch(done.value.forPlanner.text, /made\.txt/);
    assert.match(done.value.forPlanner.text, /1 file not named/);
    await assert.rejects(Deno.lstat(join(fx.root, "made.txt")), Deno.errors.NotFound);
    assert.equal(fx.policy.storedTrust.files.has("made.txt"), false);

    await Deno.writeTextFile(join(fx.root, "b.txt"), "changed by a run\n");
    await recordRunChanges(fx.policy, runChanges({ changed: ["b.txt"] }), "U");
    const shown = await sessionDiff(fx.policy);
    assert.match(shown[0].note ?? "", /changed by a run/);
    const refused = await planUndo(fx.policy, 1);
    assert.ok(!refused.ok);
    assert.match(refused.error, /b\.txt was changed by a run/);
    assert.equal(await fx.read("b.txt"), "changed by a run\n");
  });
});

Deno.test("undo: a file over the kept bound is recorded by hash only: /diff says so, /undo refuses", async () => {
  const big = "x".repeat(KEEP_MAX_BYTES + 1);
  await withPolicy(
    { files: { "big.txt": big }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      await writeFile(fx.policy, { path: "big.txt", contents: "small\n" });
      const [d] = await sessionDiff(fx.policy);
      assert.match(d.note ?? "", /recorded by hash only/);
      const plan = await planUndo(fx.policy, 1);
      assert.ok(!plan.ok);
      assert.match(plan.error, /big\.txt was over 1 MiB/);
    },
  );
});

Deno.test("undo: the kept bytes survive a resume, and undo works after it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-undo-session-" });
  try {
    await withPolicy(
      { files: { "a.txt": "old\n" }, trust: { ".": true }, answers: [yes], sessionDir: dir },
      async (fx) => {
        await writeFile(fx.policy, { path: "a.txt", contents: "new\n" });
      },
    );
    // The same session folder opened again, as --resume does, on the workspace as it was left.
    const resumed = await ChangeLog.open(dir);
    assert.deepEqual(resumed.problems, []);
    assert.equal(resumed.log.standing.length, 1);
    await undoResumed(dir, { "a.txt": "new\n" }, { "a.txt": "old\n" });
    // The undo is kept too: opened once more, nothing is left to undo.
    assert.equal((await ChangeLog.open(dir)).log.standing.length, 0);
    // Bytes altered in the state folder are never restored.
    await Deno.writeTextFile(join(dir, "changes", `${sha256("old\n")}.bin`), "tampered");
    assert.equal(await resumed.log.kept(sha256("old\n")), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("undo: each file taken back leaves its audit line, by the person, with the bytes' hash", async () => {
  await withPolicy(
    { files: { "a.txt": "old\n" }, trust: { ".": true }, answers: [yes, yes] },
    async (fx) => {
      await writeFile(fx.policy, { path: "a.txt", contents: "new\n" });
      await writeFile(fx.policy, { path: "n.txt", contents: "x" });
      const done = await undo(fx.policy, 2);
      assert.ok(done.ok, done.ok ? "" : done.error);
      const lines = fx.policy.audit.entries.filter((e) => e.tool === "undo").map(loggedLine);
      assert.deepEqual(lines, [
        '{"tool":"undo","routing":{"path":"n.txt"},"decision":"file removed","by":"person",' +
        '"labels":{"context":"(T,pub)"}}',
        '{"tool":"undo","routing":{"path":"a.txt"},"decision":"file restored","by":"person",' +
        `"sha256":"${sha256("old\n")}","labels":{"context":"(T,pub)"}}`,
      ]);
    },
  );
});

/** Replaces the folder `dir` of the workspace by a link to `target`, as someone outside does. */
async function linkedOutside(root: string, dir: string, target: string): Promise<void> {
  await Deno.remove(join(root, dir), { recursive: true });
  await Deno.symlink(target, join(root, dir));
}

Deno.test("undo: a folder made a link to the state folder since is not written through: refused by name", async () => {
  await withPolicy(
    {
      files: { "d/c.txt": "old\n", ".bravebot/keep": "s\n" },
      protect: [".bravebot"],
      trust: { ".": true },
      answers: [yes],
    },
    async (fx) => {
      assert.equal(
        (await writeFile(fx.policy, { path: "d/c.txt", contents: "new\n" })).status,
        "written",
      );
      // Outside the session, d moves into the state folder and a link takes its place: d/c.txt
      // still holds what the session left, but it lies in Brave Bot's state now.
      await Deno.rename(join(fx.root, "d"), join(fx.root, ".bravebot/d"));
      await Deno.symlink(".bravebot/d", join(fx.root, "d"));
      const refused = await undoRefused(fx.policy);
      assert.match(refused, /d\/c\.txt/);
      assert.equal(await Deno.readTextFile(join(fx.root, ".bravebot/d/c.txt")), "new\n");
      assert.equal(fx.policy.changes.standing.length, 1);
    },
  );
});

Deno.test("undo: a created file whose folder is now a link to another folder is not removed there", async () => {
  await withPolicy(
    { files: { "e/keep.txt": "e\n" }, trust: { ".": true }, answers: [yes] },
    async (fx) => {
      assert.equal(
        (await writeFile(fx.policy, { path: "d/n.txt", contents: "x" })).status,
        "written",
      );
      // The same bytes under another folder, and d a link to it: removing d/n.txt would remove
      // e/n.txt, a file the person was never shown.
      await Deno.writeTextFile(join(fx.root, "e/n.txt"), "x");
      await linkedOutside(fx.root, "d", "e");
      const refused = await undoRefused(fx.policy);
      assert.match(refused, /d\/n\.txt/);
      assert.equal(await Deno.readTextFile(join(fx.root, "e/n.txt")), "x");
    },
  );
});

Deno.test("undo: a link set between the plan and its act is not written through", async () => {
  await withPolicy(
    {
      files: { "d/c.txt": "old\n", ".bravebot/keep": "s\n" },
      protect: [".bravebot"],
      trust: { ".": true },
      answers: [yes],
    },
    async (fx) => {
      await writeFile(fx.policy, { path: "d/c.txt", contents: "new\n" });
      const plan = await planUndo(fx.policy, 1);
      assert.ok(plan.ok, plan.ok ? "" : plan.error);
      await Deno.rename(join(fx.root, "d"), join(fx.root, ".bravebot/d"));
      await Deno.symlink(".bravebot/d", join(fx.root, "d"));
      const done = await applyUndo(fx.policy, plan.value);
      assert.ok(!done.ok, "the undo went ahead");
      assert.match(done.error, /d\/c\.txt/);
      assert.equal(await Deno.readTextFile(join(fx.root, ".bravebot/d/c.txt")), "new\n");
    },
  );
});

Deno.test("undo: a folder replaced by a link to another folder between the last resolve and the worker's act: nothing restored or removed there", async () => {
  // The swap runs in the hook between the policy layer's call and the worker's first look.
  for (const act of ["write", "remove"] as const) {
    let armed = false, swapped = false;
    let root = "";
    await withPolicy({
      files: { "d/c.txt": "old\n", "e/c.txt": "new\n" },
      trust: { ".": true },
      answers: [yes],
      beforeCall: async (request) => {
        if (!armed || swapped || request.op !== act) return;
        swapped = true;
        await Deno.rename(join(root, "d"), join(root, "d.gone"));
        await Deno.symlink("e", join(root, "d"));
      },
    }, async (fx) => {
      root = fx.root;
      // A write over d/c.txt is undone by a write; a created d/n.txt, by a remove.
      const path = act === "write" ? "d/c.txt" : "d/c2.txt";
      if (act === "remove") await Deno.writeTextFile(join(root, "e/c2.txt"), "new\n");
      const wrote = await writeFile(fx.policy, { path, contents: "new\n" });
      assert.equal(wrote.status, "written");
      const plan = await planUndo(fx.policy, 1);
      assert.ok(plan.ok, plan.ok ? "" : plan.error);
      armed = true;
      const done = await applyUndo(fx.policy, plan.value);
      assert.ok(swapped, "the hook ran");
      assert.ok(!done.ok, `the undo's ${act} went ahead`);
      assert.match(done.error, new RegExp(path.replace(".", "\\.")));
      assert.equal(await Deno.readTextFile(join(root, "e/c.txt")), "new\n");
      if (act === "remove") assert.equal(await Deno.readTextFile(join(root, "e/c2.txt")), "new\n");
      assert.equal(await Deno.readTextFile(join(root, `d.gone/${path.slice(2)}`)), "new\n");
      assert.equal(fx.policy.changes.standing.length, 1, "the change was marked undone");
    });
  }
});
