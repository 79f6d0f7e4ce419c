import assert from "node:assert/strict";
import { z } from "zod";
import { parseJsonFile, parseJsonWith } from "./json_schema.ts";

const schema = z.strictObject({ n: z.number().int() });

Deno.test("json with a schema: each step says it refused", () => {
  assert.deepEqual(parseJsonWith('{"n": 2}', schema), { kind: "ok", value: { n: 2 } });
  assert.equal(parseJsonWith("{n: 2}", schema).kind, "not_json");
  const invalid = parseJsonWith('{"n": 2.5}', schema);
  assert.equal(invalid.kind, "invalid");
  // The precheck sees the parsed value before the schema, and its word is the one given.
  const seen: unknown[] = [];
  const precheck = (data: unknown) => (seen.push(data), "no");
  assert.deepEqual(parseJsonWith('{"x": 1}', schema, { precheck }), {
    kind: "refused",
    message: "no",
  });
  assert.deepEqual(seen, [{ x: 1 }]);
  assert.equal(parseJsonWith("[", schema, { precheck }).kind, "not_json", "parsed first");
});

Deno.test("json file: the person's wording, with the parser's quote of the file escaped", () => {
  assert.deepEqual(parseJsonFile('{"n": 1}', schema, "f.json"), { ok: true, value: { n: 1 } });
  const unknown = parseJsonFile('{"n": 1, "m": 2}', schema, "f.json", { hint: "only n" });
  assert.deepEqual(unknown, { ok: false, error: "f.json: unknown field 'm' (only n)" });
  const refused = parseJsonFile('{"m": 2}', schema, "f.json", {
    precheck: () => "m: never here",
    hint: "only n",
  });
  assert.deepEqual(refused, { ok: false, error: "f.json: m: never here" });
  const hostile = parseJsonFile("\u001b]52;c;YQ==\u0007", schema, "f.json");
  assert.ok(!hostile.ok);
  assert.match(hostile.error, /^f\.json is not valid JSON: /);
  assert.ok(![...hostile.error].some((c) => c.charCodeAt(0) < 0x20), JSON.stringify(hostile.error));
  assert.ok(hostile.error.includes("\u27E6U+001B\u27E7"), JSON.stringify(hostile.error));
});
