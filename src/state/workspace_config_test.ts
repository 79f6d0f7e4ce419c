import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { settingsFrom } from "./settings.ts";
import { narrowSettings, parseWorkspaceConfig } from "./workspace_config.ts";
import { isControl, isInvisible } from "../util/escape.ts";

const user = settingsFrom({ run: { programs: ["/usr/bin/git", "/usr/bin/deno"] } });

function narrowed(text: string) {
  const parsed = parseWorkspaceConfig(text, "ws.json");
  if (!parsed.ok) return parsed;
  return narrowSettings(user, parsed.value, "ws.json");
}

Deno.test("workspace config: narrowing fields apply", () => {
  const r = narrowed(JSON.stringify({
    privatePatterns: ["*.sqlite"],
    timeouts: { runMs: 5000, requestMs: 60_000 },
    limits: { readLines: 100, askQuestions: 1 },
    run: { sandbox: "bwrap", programs: ["/usr/bin/git"] },
    endpointLocal: false,
    maxTurns: 10,
  }));
  assert.ok(r.ok, !r.ok ? r.error : "");
  assert.deepEqual(r.value.privatePatterns, ["*.sqlite"]);
  assert.equal(r.value.limits.runTimeoutMs, 5000);
  assert.equal(r.value.requestTimeoutMs, 60_000);
  assert.equal(r.value.limits.readLines, 100);
  assert.equal(r.value.limits.askQuestions, 1);
  assert.equal(r.value.sandbox, "bwrap");
  assert.deepEqual(r.value.runPrograms, ["/usr/bin/git"]);
  assert.equal(r.value.planner.local, false);
  assert.equal(r.value.maxTurns, 10);
  // The user's settings are untouched.
  assert.equal(user.limits.readLines, 2000);
});

Deno.test("workspace config: never trust, vouch, approve or change endpoints — the field is named", () => {
  const cases: [unknown, RegExp][] = [
    [{ endpoint: "http://evil.example/v1" }, /endpoint: .*may not change endpoints/],
    [{ processorEndpoint: "http://x/v1" }, /processorEndpoint: .*endpoints/],
    [{ model: "other" }, /model: .*may not change the model/],
    [{ trust: ["."] }, /trust: .*never trust/],
    [{ vouch: [{ argv: ["curl"] }] }, /vouch: .*never vouch/],
    [{ writes: ["**"] }, /writes: .*never approve/],
    [{ quarantinedRead: "untrusted" }, /quarantinedRead/],
    [{ endpointLocal: true }, /endpointLocal/],
    [{ somethingElse: 1 }, /unknown field 'somethingElse'/],
    [{ run: { allow: ["x"] } }, /run: unknown field 'allow'/],
    [{ limits: { readLines: "many" } }, /limits\.readLines/],
    [{ timeouts: { runMs: 900_000 } }, /timeouts\.runMs: 900000 is above the user's 120000/],
    [{ limits: { readLines: 5000 } }, /limits\.readLines: 5000 is above/],
    [{ contextWindow: 1_000_000 }, /contextWindow: .*above/],
    [{ run: { programs: ["/usr/bin/curl"] } }, /run\.programs: '\/usr\/bin\/curl' is not allowed/],
    [[], /top level/],
  ];
  for (const [data, why] of cases) {
    const r = narrowed(JSON.stringify(data));
    assert.ok(!r.ok, JSON.stringify(data));
    assert.match(r.error, why, JSON.stringify(data));
    assert.match(r.error, /^ws\.json: /);
  }
  const bad = narrowed("{ not json");
  assert.ok(!bad.ok && /ws\.json is not valid JSON/.test(bad.error));
});

Deno.test("workspace config: a user sandbox cannot be turned off from the workspace", () => {
  const parsed = parseWorkspaceConfig('{"run":{"sandbox":"none"}}', "ws.json");
  assert.ok(parsed.ok);
  const r = narrowSettings(settingsFrom({ run: { sandbox: "bwrap" } }), parsed.value);
  assert.ok(!r.ok && /run\.sandbox/.test(r.error));
  const auto = narrowSettings(settingsFrom({}), parsed.value);
  assert.ok(!auto.ok && /less confined/.test(auto.error), "auto is the default: none is lower");
  const fine = narrowSettings(settingsFrom({ run: { sandbox: "none" } }), parsed.value);
  assert.ok(fine.ok && fine.value.sandbox === "none");
  const up = parseWorkspaceConfig('{"run":{"sandbox":"bwrap"}}', "ws.json");
  assert.ok(up.ok);
  const raised = narrowSettings(settingsFrom({}), up.value);
  assert.ok(raised.ok && raised.value.sandbox === "bwrap", "a workspace may confine more");
});

Deno.test("workspace config: run.writable and run.network are the user's alone", () => {
  for (const text of ['{"run":{"writable":["/tmp"]}}', '{"run":{"network":true}}']) {
    const parsed = parseWorkspaceConfig(text, "ws.json");
    assert.ok(!parsed.ok && /only the user config/.test(parsed.error), text);
  }
});

Deno.test("workspace config: whatever it says, nothing ends up wider than the user's", () => {
  fc.assert(fc.property(
    fc.record({
      limits: fc.record({ readLines: fc.nat(10_000), askQuestions: fc.nat(10) }, {
        requiredKeys: [],
      }),
      timeouts: fc.record({ runMs: fc.integer({ min: 100, max: 1_000_000 }) }, {
        requiredKeys: [],
      }),
      privatePatterns: fc.array(fc.string({ minLength: 1 }), { maxLength: 3 }),
    }, { requiredKeys: [] }),
    (ws) => {
      const r = narrowed(JSON.stringify(ws));
      if (!r.ok) return;
      assert.ok(r.value.limits.readLines <= user.limits.readLines);
      assert.ok(r.value.limits.askQuestions <= user.limits.askQuestions);
      assert.ok(r.value.limits.runTimeoutMs <= user.limits.runTimeoutMs);
      for (const p of user.privatePatterns) assert.ok(r.value.privatePatterns.includes(p));
      assert.equal(r.value.planner.url, user.planner.url);
    },
  ));
});

Deno.test("workspace config (adversarial): what the error quotes of the file is escaped and bounded", () => {
  const error = (text: string) => {
    const r = narrowed(text);
    assert.ok(!r.ok, text);
    for (const ch of r.error) {
      assert.ok(!isControl(ch) && !isInvisible(ch), JSON.stringify(r.error));
    }
    return r.error;
  };
  const osc = "\x1b]52;c;cm0=\x07";
  assert.match(
    error(JSON.stringify({ [`k${osc}`]: 1 })),
    /unknown field 'k⟦U\+001B⟧\]52;c;cm0=⟦U\+0007⟧'/,
  );
  // Thousands of keys, each long: five named, each cut, the rest counted.
  const many = Object.fromEntries(
    Array.from({ length: 2000 }, (_, i) => [`${i}${"x".repeat(5000)}`, 1]),
  );
  const named = error(JSON.stringify(many));
  assert.match(named, /'0x{79}…', '1x{79}…', .* and 1995 more/);
  assert.ok(named.length < 1000, `${named.length} characters`);
  // The parser's message quotes the text around the error.
  assert.match(error(`{"a": ${osc}\u202e}`), /not valid JSON: .*⟦U\+001B⟧/);
  assert.match(
    error(JSON.stringify({ run: { programs: [`/bin/x${osc}`] } })),
    /run\.programs: '\/bin\/x⟦U\+001B⟧\]52;c;cm0=⟦U\+0007⟧' is not allowed/,
  );
});
