/**
 * A session's own state lives in objects the session owns (session_memory.ts), not in module
 * globals: two sessions in one process share no egress answer and no run plan.
 */
import assert from "node:assert/strict";
import { mayLeave } from "./egress.ts";
import { sessionConfinement } from "./runs.ts";
import { withPolicy } from "../../test/support/policy_fixture.ts";
import { TRUSTED_PRIVATE } from "../util/label.ts";
import { sha256 } from "../util/hash.ts";

const REMOTE = { url: "https://models.example/v1", model: "m", local: false };
const SEND = { ask: { kind: "options" as const, chosen: ["send"] } };
const KEEP = { ask: { kind: "options" as const, chosen: ["do not send"] } };
const VALUE = { what: "The result of run", label: TRUSTED_PRIVATE, sha256: sha256("TOKEN=1") };

Deno.test("session memory: two sessions in one process do not share egress answers", async () => {
  await withPolicy({ answers: [SEND] }, async (a) => {
    await withPolicy({ answers: [KEEP] }, async (b) => {
      assert.equal(await mayLeave(a.policy, REMOTE, "planner", "run", VALUE), true);
      // The same bytes in the other session: its person is asked, and their answer holds there.
      assert.equal(await mayLeave(b.policy, REMOTE, "planner", "run", VALUE), false);
      assert.equal(b.scripted!.asked.length, 1, "the second session asked its own person");
      // Each session remembers its own answer: neither is asked again.
      assert.equal(await mayLeave(a.policy, REMOTE, "planner", "run", VALUE), true);
      assert.equal(await mayLeave(b.policy, REMOTE, "planner", "run", VALUE), false);
      assert.equal(a.scripted!.asked.length, 1);
      assert.equal(b.scripted!.asked.length, 1);
    });
  });
});

Deno.test("session memory: two sessions in one process do not share run plans", async () => {
  await withPolicy({ run: true, workers: 1 }, async (a) => {
    await withPolicy({ run: true, workers: 1 }, async (b) => {
      const planA = sessionConfinement(a.policy, a.settings);
      assert.equal(sessionConfinement(a.policy, a.settings), planA, "planned once a session");
      const spawnsOf = (calls: { op: string }[]) => calls.filter((c) => c.op === "spawn").length;
      await planA;
      const bBefore = spawnsOf(b.workerCalls);
      const planB = sessionConfinement(b.policy, b.settings);
      assert.notEqual(planB, planA, "the other session plans for itself");
      const [madeB, madeA] = [await planB, await planA];
      assert.ok(madeB.ok && madeA.ok, "both planned");
      const [made, other] = [madeB.value, madeA.value];
      assert.equal(made.confined, other.confined, "on the same machine, the same wall");
      if (made.confined && other.confined) {
        assert.equal(made.box.workspace, b.root, "planned for its own workspace");
        assert.equal(other.box.workspace, a.root);
      }
      // Its probes (where there are any) went through its own effect worker.
      assert.equal(spawnsOf(b.workerCalls) - bBefore, spawnsOf(a.workerCalls));
    });
  });
});
