import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { appendJsonLine, loadJsonFile, readJsonLines, saveJsonFile } from "./jsonfile.ts";

const schema = z.strictObject({ n: z.number() });

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bb-jsonfile-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("jsonfile: save then load; missing is its own status", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "sub", "s.json");
    assert.deepEqual(await loadJsonFile(path, schema), { status: "missing" });
    await saveJsonFile(path, { n: 1 });
    await saveJsonFile(path, { n: 2 });
    assert.deepEqual(await loadJsonFile(path, schema), { status: "ok", value: { n: 2 } });
    assert.deepEqual([...Deno.readDirSync(join(dir, "sub"))].map((e) => e.name), ["s.json"]);
  });
});

Deno.test("jsonfile: a corrupt file is moved aside with both paths reported, its bytes kept", async () => {
  for (
    const [text, why] of [["{nope", /not valid JSON/], [
      '{"n":"1"}',
      /n: .*expected number/,
    ]] as const
  ) {
    await withDir(async (dir) => {
      const path = join(dir, "s.json");
      await Deno.writeTextFile(path, text);
      const r = await loadJsonFile(path, schema);
      assert.equal(r.status, "corrupt");
      if (r.status !== "corrupt") return;
      assert.match(r.problem, why);
      const aside = [...Deno.readDirSync(dir)].map((e) => join(dir, e.name));
      assert.equal(aside.length, 1);
      assert.match(aside[0], /s\.json\.corrupt-/);
      assert.ok(r.problem.startsWith(`${path} was corrupt`));
      assert.ok(r.problem.endsWith(`moved to ${aside[0]}`));
      assert.equal(await Deno.readTextFile(aside[0]), text);
    });
  }
});

Deno.test("jsonfile: JSON lines survive a torn last line; the next append starts a new line", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "log.jsonl");
    await appendJsonLine(path, { a: 1 });
    await Deno.writeTextFile(path, '{"a":', { append: true });
    let read = await readJsonLines(path);
    assert.deepEqual(read.rows, [{ a: 1 }]);
    assert.deepEqual(read.problems, [`${path}: line 2 was cut off (dropped)`]);
    await appendJsonLine(path, { a: 3 });
    read = await readJsonLines(path);
    assert.deepEqual(read.rows, [{ a: 1 }, { a: 3 }]);
    assert.deepEqual(read.problems, [`${path}: line 2 is not JSON (skipped)`]);
    assert.deepEqual(await readJsonLines(join(dir, "none.jsonl")), { rows: [], problems: [] });
  });
});

Deno.test("jsonfile: a JSON-lines path that cannot be read is set aside and reported", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "refs.jsonl");
    await Deno.mkdir(path);
    const read = await readJsonLines(path);
    assert.deepEqual(read.rows, []);
    assert.equal(read.problems.length, 1);
    assert.match(
      read.problems[0],
      /refs\.jsonl was unreadable .*; it was moved to .*refs\.jsonl\.corrupt-/,
    );
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  });
});
