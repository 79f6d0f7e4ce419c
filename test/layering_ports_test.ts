/**
 * The ports the policy layer builds hold exactly the members `test/layering_ports_check.ts`
 * lists. The compiler holds each port's type to its list; this holds the objects the factories
 * return, which could carry more than their type says (a spread slice, a member added to the
 * object and not the interface) and so hand a capability to whoever looks past the type.
 */
import assert from "node:assert/strict";
import { driverPolicy, personPolicy, toolPolicy } from "../src/policy/api.ts";
import { skillsPort } from "../src/policy/ports/skills.ts";
import { withPolicy } from "./support/policy_fixture.ts";
import { DRIVER_POLICY, PERSON_POLICY, SKILLS_PORT, TOOL_POLICY } from "./layering_ports_check.ts";

/** Own keys, getters included (listing them calls none). */
function members(port: object): string[] {
  return Reflect.ownKeys(port).map(String).sort();
}

Deno.test("ports: each port the policy layer builds holds exactly its listed members", async () => {
  await withPolicy({}, (fx) => {
    const built: [string, object, object][] = [
      ["ToolPolicy", toolPolicy(fx.policy, fx.ctx.session), TOOL_POLICY],
      ["DriverPolicy", driverPolicy(fx.policy), DRIVER_POLICY],
      ["PersonPolicy", personPolicy(fx.policy), PERSON_POLICY],
      ["SkillsPort", skillsPort(fx.policy), SKILLS_PORT],
    ];
    for (const [name, port, listed] of built) {
      assert.deepEqual(members(port), Object.keys(listed).sort(), `${name}'s members`);
    }
    return Promise.resolve();
  });
});
