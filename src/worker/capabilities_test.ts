/** Which capabilities a box keeps, and the probe's reading of /proc/self/status (capabilities.ts). */
import assert from "node:assert/strict";
import { capabilityMask, checkHeld, keptCapabilities, parseStatus } from "./capabilities.ts";

Deno.test("capabilities: kept only as root over a place another user owns", () => {
  const owners: Record<string, number> = { "/ws": 1000, "/scratch": 0, "/mine": 0 };
  const ownerOf = (p: string) => owners[p] ?? null;
  assert.deepEqual(keptCapabilities(["/ws", "/scratch"], 0, ownerOf), ["CAP_DAC_OVERRIDE"]);
  assert.deepEqual(keptCapabilities(["/mine", "/scratch"], 0, ownerOf), []);
  assert.deepEqual(keptCapabilities(["/missing"], 0, ownerOf), [], "unreadable keeps nothing");
  // An ordinary user has nothing to keep, whoever owns the workspace.
  assert.deepEqual(keptCapabilities(["/ws", "/mine"], 1000, ownerOf), []);
  assert.deepEqual(keptCapabilities(["/mine"], 1001, ownerOf), []);
});

const status = (eff: string, prm: string, nnp: string) =>
  `Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t${prm}\nCapEff:\t${eff}\n` +
  `CapBnd:\t000001ffffffffff\nNoNewPrivs:\t${nnp}\n`;

Deno.test("capabilities: the probe wants exactly the planned sets and NoNewPrivs", () => {
  const none = "0000000000000000";
  const dac = "0000000000000002";
  assert.equal(capabilityMask(["CAP_DAC_OVERRIDE"]), 2n);
  assert.deepEqual(parseStatus(status(dac, none, "1")), {
    effective: 2n,
    permitted: 0n,
    noNewPrivs: true,
  });
  assert.equal(parseStatus("Name:\tcat\n"), null);
  assert.equal(parseStatus(status("zz", none, "1")), null);
  assert.ok(checkHeld(status(none, none, "1"), []).ok);
  assert.ok(checkHeld(status(dac, dac, "1"), ["CAP_DAC_OVERRIDE"]).ok);
  const cases: [string, readonly "CAP_DAC_OVERRIDE"[], RegExp][] = [
    [
      status("000001fffeffffff", "000001fffeffffff", "1"),
      [],
      /CAP_CHOWN, .* and \d+ more where none/,
    ],
    [status(none, "0000000000200000", "1"), [], /holds capabilities CAP_SYS_ADMIN where none/],
    [status(none, none, "1"), ["CAP_DAC_OVERRIDE"], /none where CAP_DAC_OVERRIDE were planned/],
    [status(none, none, "0"), [], /NoNewPrivs/],
    ["", [], /could not read/],
  ];
  for (const [text, planned, why] of cases) {
    const held = checkHeld(text, planned);
    assert.ok(!held.ok);
    assert.match(held.error, why);
  }
});
