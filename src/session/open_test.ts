import assert from "node:assert/strict";
import { join } from "node:path";
import { openSession } from "./open.ts";
import { settingsFrom } from "../state/settings.ts";
import { statePaths } from "../state/session_paths.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import type { FirstUseAnswer } from "../person/person.ts";
import { holdLock } from "../../test/support/lock_holder.ts";

async function withDirs(fn: (ws: string, state: string) => Promise<void>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-open-" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(join(ws, "src"), { recursive: true });
    await fn(ws, join(root, "state"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function open(ws: string, state: string, answer: FirstUseAnswer) {
  const person = new ScriptedPerson([{ firstUse: answer }]);
  const session = await openSession({
    workspaceDir: ws,
    stateDir: state,
    settings: settingsFrom({}),
    person,
    approvals: null,
    oneShot: false,
  });
  session.close();
  return { session, person };
}

Deno.test("first use: an interrupted answer stores nothing; the question comes again next time", async () => {
  await withDirs(async (ws, state) => {
    const first = await open(ws, state, { choice: "unanswered" });
    assert.equal(first.person.asked.filter((a) => a.kind === "firstUse").length, 1);
    assert.equal(first.session.policy.storedTrust.firstUse, null);
    assert.equal(first.session.policy.storedTrust.ruleIntegrity("src/a.ts"), "U");
    assert.match(first.session.problems.join("\n"), /not answered: this session trusts nothing/);
    await assert.rejects(Deno.stat(statePaths(state, ws).trustFile), Deno.errors.NotFound);

    const second = await open(ws, state, { choice: "workspace" });
    assert.equal(second.person.asked.filter((a) => a.kind === "firstUse").length, 1);
    assert.equal(second.session.policy.storedTrust.firstUse, "workspace");
    assert.equal(second.session.policy.storedTrust.ruleIntegrity("src/a.ts"), "T");
  });
});

Deno.test("first use: chosen directories to trust must exist; the others are left out and said", async () => {
  await withDirs(async (ws, state) => {
    const { session } = await open(ws, state, {
      choice: "custom",
      trusted: ["src/", "nosuchdir", "../out"],
      untrusted: ["src/vendor"],
    });
    const map = session.policy.storedTrust;
    assert.deepEqual(
      map.rules.map((r) => [r.dir, r.trusted]),
      [["src", true], ["src/vendor", false]],
    );
    const said = session.problems.join("\n");
    assert.match(said, /there is no directory nosuchdir\/ in the workspace/);
    assert.match(said, /'\.\.\/out'/);
  });
});

Deno.test("first use: a trust map locked past the bound stores nothing, says who holds it, asks again", async () => {
  await withDirs(async (ws, state) => {
    const trustFile = statePaths(state, ws).trustFile;
    const held = await holdLock(trustFile);
    const safety = setTimeout(held.release, 3_000);
    let session;
    try {
      session = await openSession({
        workspaceDir: ws,
        stateDir: state,
        settings: settingsFrom({}),
        person: new ScriptedPerson([{ firstUse: { choice: "workspace" } }]),
        approvals: null,
        oneShot: false,
        trustWait: { fail: true, boundMs: 100, onWait: () => {} },
      });
    } finally {
      clearTimeout(safety);
      held.release();
      await held.done;
    }
    session.close();
    assert.equal(session.policy.storedTrust.firstUse, null);
    assert.equal(session.policy.storedTrust.ruleIntegrity("src/a.ts"), "U");
    const said = session.problems.join("\n");
    assert.match(said, new RegExp(`process ${Deno.pid}`));
    assert.match(said, /this session trusts nothing, and the question is asked again/);
    const again = await open(ws, state, { choice: "workspace" });
    assert.equal(again.person.asked.filter((a) => a.kind === "firstUse").length, 1);
  });
});
