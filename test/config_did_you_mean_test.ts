/**
 * A mistyped key in the user config gets "did you mean" (issue 25, minors): the known name is the
 * schema's own; the typed one is still escaped for the terminal, as every name a file holds is.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfig } from "../src/state/config.ts";
import { runMain } from "./support/run_main.ts";

Deno.test("config: a key one slip from a known one is named with the one meant, at any depth", () => {
  const top = parseConfig('{"endpont": "http://127.0.0.1:1/v1"}', "c.json");
  assert.deepEqual(top, {
    ok: false,
    error: "c.json: unknown field 'endpont' (did you mean 'endpoint'?)",
  });
  const nested = parseConfig('{"run": {"sandbx": "bwrap"}}', "c.json");
  assert.deepEqual(nested, {
    ok: false,
    error: "c.json: run: unknown field 'sandbx' (did you mean 'sandbox'?)",
  });
  // Case and a swap of neighbours are slips too; a key far from every name is only unknown.
  const cased = parseConfig('{"processorendpoint": "http://127.0.0.1:1/v1"}', "c.json");
  assert.match(cased.ok ? "" : cased.error, /did you mean 'processorEndpoint'\?/);
  const far = parseConfig('{"colour": true}', "c.json");
  assert.deepEqual(far, { ok: false, error: "c.json: unknown field 'colour'" });
  // A name of the wrong level is not offered: `sandbox` lives under `run`.
  const level = parseConfig('{"sandbx": "bwrap"}', "c.json");
  assert.deepEqual(level, { ok: false, error: "c.json: unknown field 'sandbx'" });
});

Deno.test("config: the mistyped key is shown escaped, even beside a suggestion", () => {
  const r = parseConfig('{"mode\\u001b": "m"}', "c.json");
  assert.ok(!r.ok);
  assert.match(r.error, /unknown field 'mode⟦U\+001B⟧' \(did you mean 'model'\?\)/);
  assert.ok(![...r.error].some((c) => c.charCodeAt(0) < 0x20), JSON.stringify(r.error));
});

Deno.test("config: bravebot says the key meant, exit 2, before anything is sent", async () => {
  const root = await Deno.makeTempDir({ prefix: "bb-config-dym-" });
  try {
    await Deno.mkdir(join(root, "ws"));
    const config = join(root, "config.json");
    await Deno.writeTextFile(config, JSON.stringify({ modle: "qwen3" }));
    const r = await runMain([
      "-p",
      "hi",
      "-w",
      join(root, "ws"),
      "--state-dir",
      join(root, "s"),
      "--config",
      config,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /config\.json: unknown field 'modle' \(did you mean 'model'\?\)/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
