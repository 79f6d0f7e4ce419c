/**
 * The person-facing port hands the session the policy layer's own answers: the same rules the
 * planner's tools go through, nothing decided again on the way.
 */
import assert from "node:assert/strict";
import { loggedLine } from "../../../test/support/audit_lines.ts";
import { withRunPolicy } from "../../../test/support/run_fixture.ts";
import { parseShellLine, personPolicy } from "../api.ts";
import { sessionConfinement } from "../runs.ts";
import { formatLabel, UNTRUSTED_PRIVATE } from "../../util/label.ts";

Deno.test("person port: /status's walls are the runs' own plan, in the person's terms", async () => {
  await withRunPolicy({}, async (fx) => {
    const port = personPolicy(fx.policy);
    const none = await port.walls({ ...fx.settings, sandbox: "none" });
    assert.deepEqual(none, {
      ok: true,
      value: { confined: false, why: 'run.sandbox is "none" in the config' },
    });
    const plan = await sessionConfinement(fx.policy, fx.settings);
    const walls = await port.walls(fx.settings);
    assert.equal(walls.ok, plan.ok);
    if (walls.ok && plan.ok) {
      assert.equal(walls.value.confined, plan.value.confined);
      // The bwrap argv stays in the policy layer.
      assert.ok(!("wrapper" in walls.value));
    }
  });
});

Deno.test("person port: a shell line and /show go through the rules, which record them", async () => {
  await withRunPolicy({}, async (fx) => {
    const port = personPolicy(fx.policy);
    const ran = await port.runShellLine(parseShellLine("!echo CANARY-port")!, fx.settings);
    assert.ok(ran.ok, !ran.ok ? ran.error : "");
    assert.equal(fx.policy.audit.entries.at(-1)?.tool, "shell");
    const ref = `ref:${ran.value.ref!.id}`;
    const shown = await port.showToPerson(ref, 10);
    assert.ok(shown.ok, !shown.ok ? shown.error : "");
    assert.match(shown.value.text, /CANARY-port/);
    assert.equal(formatLabel(shown.value.label), formatLabel(UNTRUSTED_PRIVATE));
    assert.equal(
      loggedLine(fx.policy.audit.entries.at(-1)),
      `{"tool":"show","routing":{"ref":"${ref}","kind":"command_output"},` +
        '"labels":{"context":"(T,pub)","shown":"(U,priv)"},' +
        '"decision":"shown to the person, not to the planner","by":"rule"}',
    );
    // The person's view changes nothing the planner holds.
    assert.equal(formatLabel(port.contextLabel), formatLabel(fx.policy.contextLabel));
    const unknown = await port.showToPerson("ref:999", 10);
    assert.deepEqual(unknown, { ok: false, error: "ref:999 names no reference of this session" });
  });
});
