import assert from "node:assert/strict";
import { join } from "node:path";
import { type NewRef, refName, RefTable } from "./refs.ts";
import { label } from "../util/label.ts";

const OUTPUT: NewRef = {
  kind: "command_output",
  label: label("U", "priv"),
  tool: "run",
  size: 5,
  lines: 1,
};
const FILE: NewRef = {
  kind: "file",
  label: label("U", "pub"),
  path: "vendor/x.js",
  tool: "read_file",
};

async function tempDir(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "bb-refs-" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function errorOf(r: { ok: boolean; error?: string }): string {
  assert.equal(r.ok, false);
  return r.error!;
}

Deno.test("refs: numbered per session from 0, looked up by ref:N", async () => {
  const t = RefTable.inMemory();
  const a = await t.add(FILE);
  const b = await t.add(OUTPUT, new TextEncoder().encode("hello"));
  assert.equal(refName(a), "ref:0");
  assert.equal(refName(b), "ref:1");
  const found = t.lookup("ref:1");
  assert.ok(found.ok);
  assert.equal(found.value, b);
  assert.equal(new TextDecoder().decode(await t.bytes(b)), "hello");
  assert.equal(a.hasBytes, false);
  await assert.rejects(t.bytes(a), /holds no bytes/);
});

Deno.test("refs: an invented reference is an error that says it does not exist", async () => {
  const empty = RefTable.inMemory();
  assert.match(
    errorOf(empty.lookup("ref:0")),
    /ref:0 does not exist; this session has no references yet/,
  );
  const t = RefTable.inMemory();
  await t.add(FILE);
  await t.add(FILE);
  assert.match(errorOf(t.lookup("ref:2")), /ref:2 does not exist; this session has ref:0 to ref:1/);
  assert.match(errorOf(t.lookup("ref:99999999999999999999")), /does not exist/);
});

Deno.test("refs: a mistyped reference is an error that shows the expected form", () => {
  const t = RefTable.inMemory();
  for (
    const bad of [
      "ref0",
      "ref:",
      "ref:-1",
      "ref:1.5",
      "REF:0",
      "ref: 0",
      "#0",
      "0",
      "ref:0x1",
      "ref:a",
      "",
    ]
  ) {
    assert.match(
      errorOf(t.lookup(bad)),
      /is not a reference; references are written ref:N, e\.g\. ref:0/,
      bad,
    );
  }
  assert.match(
    errorOf(t.lookup("ref:01")),
    /mistyped: reference numbers have no leading zeros \(ref:1\)/,
  );
  for (const bad of [0, null, undefined, { ref: 0 }, ["ref:0"]]) {
    assert.match(errorOf(t.lookup(bad)), /a reference must be a string such as ref:0/);
  }
});

Deno.test("refs: records and bytes persist across RefTable.open", async () => {
  await using d = await tempDir();
  const { table, problems } = await RefTable.open(d.dir);
  assert.deepEqual(problems, []);
  await table.add(FILE);
  await table.add({ ...OUTPUT, sha256: "f".repeat(64) }, new TextEncoder().encode("hello"));
  await table.add({
    kind: "processor_answer",
    label: label("U", "priv"),
    about: null,
    tool: "spawn_processor",
  }, new Uint8Array([1, 2]));
  const again = await RefTable.open(d.dir);
  assert.deepEqual(again.problems, []);
  assert.equal(again.table.size, 3);
  assert.deepEqual(again.table.all(), table.all());
  const out = again.table.lookup("ref:1");
  assert.ok(out.ok);
  assert.deepEqual(out.value.label, label("U", "priv"));
  assert.equal(new TextDecoder().decode(await again.table.bytes(out.value)), "hello");
  const file = again.table.lookup("ref:0");
  assert.ok(file.ok);
  assert.equal(file.value.path, "vendor/x.js");
  // New references go on numbering after the resumed ones.
  assert.equal((await again.table.add(FILE)).id, 3);
  if (Deno.build.os !== "windows") {
    assert.equal((await Deno.stat(join(d.dir, "refs", "1.bin"))).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(join(d.dir, "refs"))).mode! & 0o777, 0o700);
  }
});

Deno.test("refs: a torn last line of refs.jsonl is dropped and reported; the next record is whole", async () => {
  await using d = await tempDir();
  const { table } = await RefTable.open(d.dir);
  await table.add(FILE);
  await table.add(FILE);
  const jsonl = join(d.dir, "refs.jsonl");
  await Deno.writeTextFile(jsonl, '{"id":2,"kind":"fi', { append: true });
  const torn = await RefTable.open(d.dir);
  assert.equal(torn.table.size, 2);
  assert.equal(torn.problems.length, 1);
  assert.match(torn.problems[0], /refs\.jsonl: line 3 was cut off \(dropped\)/);
  assert.ok(torn.problems[0].includes(jsonl), "the problem names the file");
  const added = await torn.table.add(OUTPUT, new Uint8Array([7]));
  assert.equal(added.id, 2);
  const after = await RefTable.open(d.dir);
  assert.equal(after.table.size, 3, "the record added after the torn line survives");
  const found = after.table.lookup("ref:2");
  assert.ok(found.ok);
  assert.equal(found.value.kind, "command_output");
  assert.match(after.problems.join("\n"), /line 3 is not JSON \(skipped\)/);
});

Deno.test("refs: a record that does not fit, or whose bytes are gone, is reported", async () => {
  await using d = await tempDir();
  const { table } = await RefTable.open(d.dir);
  await table.add(FILE);
  await table.add(OUTPUT, new Uint8Array([1]));
  await Deno.remove(join(d.dir, "refs", "1.bin"));
  await Deno.writeTextFile(
    join(d.dir, "refs.jsonl"),
    JSON.stringify({ id: 2, kind: "nonsense", label: "(T,pub)", hasBytes: false, tool: "x" }) +
      "\n",
    { append: true },
  );
  const again = await RefTable.open(d.dir);
  assert.equal(again.table.size, 2, "the bad record is not taken");
  assert.match(again.problems.join("\n"), /refs\.jsonl: a record does not fit/);
  assert.match(again.problems.join("\n"), /ref:1: its stored bytes \(refs\/1\.bin\) are gone/);
});

Deno.test("refs: an assertion persists as a past decision, bound to the bytes' hash, never counted again", async () => {
  await using d = await tempDir();
  const { table } = await RefTable.open(d.dir);
  const out = await table.add({ ...OUTPUT, sha256: "a".repeat(64), stdin: 0 }, new Uint8Array([1]));
  const other = await table.add({ ...OUTPUT, sha256: "b".repeat(64) }, new Uint8Array([2]));
  await table.recordAssertion({
    ref: out.id,
    by: "policy-file",
    shape: "version",
    sha256: "a".repeat(64),
  });
  assert.equal(table.assertedByShapeThisRun(), 1);
  // An assertion whose hash is not its reference's is not kept.
  await table.recordAssertion({ ref: other.id, by: "person", shape: null, sha256: "c".repeat(64) });
  const again = await RefTable.open(d.dir);
  assert.equal(again.problems.length, 1);
  assert.match(again.problems[0], /an assertion does not fit its reference/);
  const kept = again.table.lookup(`ref:${out.id}`);
  assert.ok(kept.ok);
  assert.equal(kept.value.stdin, 0, "what fed the run is kept with the output");
  assert.deepEqual(again.table.assertion(kept.value), {
    ref: out.id,
    by: "policy-file",
    shape: "version",
    sha256: "a".repeat(64),
    thisRun: false,
  });
  assert.equal(again.table.assertedByShapeThisRun(), 0, "a resumed run counts its own");
  const stored = await Deno.readTextFile(join(d.dir, "asserted.jsonl"));
  assert.ok(!stored.includes('"bytes"') && !stored.includes("\u0001"), "never the bytes");
});
