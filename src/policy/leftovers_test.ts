/** The line a closed leftover watch leaves, as a value (the watch itself: test/run_leftovers_test.ts). */
import assert from "node:assert/strict";
import { leftoversLine } from "./leftovers.ts";
import { auditEntryOf, doneLine } from "./verdict.ts";

Deno.test("leftoversLine: what changed after the run, counted, with the run's label, by rule", () => {
  const table: [string, Parameters<typeof leftoversLine>, string][] = [
    [
      "changed and unsure count together; the files take the run's integrity, public",
      ["sh -c x", "U", {
        created: ["a", "b"],
        changed: ["c"],
        unsure: ["d"],
        removed: ["e"],
        blind: [],
      }],
      '{"tool":"run","routing":{"pipeline":"sh -c x"},"labels":{"files":{"integrity":"U",' +
      '"confidentiality":"pub"}},"decision":"files changed after the unconfined run ended",' +
      '"by":"rule","reason":"2 created, 2 changed, 1 removed, 0 folders not seen into, while ' +
      'processes it started may have been running"}',
    ],
    [
      "a trusted run's leftovers: T",
      ["true", "T", { created: [], changed: [], unsure: [], removed: [], blind: ["f"] }],
      '{"tool":"run","routing":{"pipeline":"true"},"labels":{"files":{"integrity":"T",' +
      '"confidentiality":"pub"}},"decision":"files changed after the unconfined run ended",' +
      '"by":"rule","reason":"0 created, 0 changed, 0 removed, 1 folders not seen into, while ' +
      'processes it started may have been running"}',
    ],
  ];
  for (const [name, args, entry] of table) {
    assert.equal(JSON.stringify(auditEntryOf(doneLine(leftoversLine(...args)))), entry, name);
  }
});
