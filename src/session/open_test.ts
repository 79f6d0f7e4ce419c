import assert from "node:assert/strict";
import { join } from "node:path";
import { openSession } from "./open.ts";
import { settingsFrom } from "../state/settings.ts";
import { statePaths } from "../state/session_paths.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import type { FirstUseAnswer } from "../person/person.ts";
import { TranscriptWriter } from "../state/transcript.ts";
import { AuditLog } from "../policy/audit.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";
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

async function openNew(ws: string, state: string, resume?: string) {
  return await openSession({
    workspaceDir: ws,
    stateDir: state,
    settings: settingsFrom({}),
    person: new ScriptedPerson([{ firstUse: { choice: "workspace" } }]),
    approvals: null,
    oneShot: false,
    resume,
  });
}

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

Deno.test("sessions: one closed without a message or an audit entry leaves nothing behind", async () => {
  await withDirs(async (ws, state) => {
    const session = await openNew(ws, state);
    // As the runtime starts one: the transcript's first line only.
    await new TranscriptWriter(session.paths.transcript).start({
      id: session.paths.id,
      workspace: ws,
      started: new Date().toISOString(),
    });
    assert.ok(await exists(session.paths.dir));
    assert.equal(session.holds(), "nothing");
    session.close();
    assert.equal(await exists(session.paths.dir), false);
  });
});

Deno.test("sessions: a message, or an audit entry alone, keeps the session at its close", async () => {
  await withDirs(async (ws, state) => {
    const talked = await openNew(ws, state);
    const t = new TranscriptWriter(talked.paths.transcript);
    await t.start({ id: talked.paths.id, workspace: ws, started: new Date().toISOString() });
    // Written before the first request is sent: a crash mid-first-turn keeps it too.
    await t.message({ role: "user", content: "hello" }, TRUSTED_PUBLIC);
    assert.equal(talked.holds(), "messages");
    talked.close();
    assert.ok(await exists(talked.paths.transcript));

    // A shell line at the first prompt is audited, and no message is written: the log stays.
    const shell = await openNew(ws, state);
    await new TranscriptWriter(shell.paths.transcript).start({
      id: shell.paths.id,
      workspace: ws,
      started: new Date().toISOString(),
    });
    await new AuditLog(shell.paths.audit, shell.paths.id).append({
      tool: "shell",
      routing: { command: "ls" },
      labels: {},
      decision: "ran",
      by: "person",
    });
    assert.equal(shell.holds(), "audit");
    shell.close();
    assert.match(await Deno.readTextFile(shell.paths.audit), /"tool":"shell"/);

    // A resumed session is never removed, whatever its transcript holds.
    const resumed = await openNew(ws, state, talked.paths.id);
    resumed.close();
    assert.ok(await exists(talked.paths.transcript));
  });
});

Deno.test("sessions: a /clear or a damaged line is no message; a message after them is one", async () => {
  await withDirs(async (ws, state) => {
    const session = await openNew(ws, state);
    const t = new TranscriptWriter(session.paths.transcript);
    await t.start({ id: session.paths.id, workspace: ws, started: new Date().toISOString() });
    await t.clear();
    await Deno.writeTextFile(session.paths.transcript, '{"type":"message","time":\n', {
      append: true,
    });
    assert.equal(session.holds(), "nothing");
    await t.message({ role: "user", content: "x".repeat(200_000) }, TRUSTED_PUBLIC);
    assert.equal(session.holds(), "messages");
    session.close();
    assert.ok(await exists(session.paths.transcript));
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
