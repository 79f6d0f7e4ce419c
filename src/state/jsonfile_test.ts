import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import {
  appendJsonLine,
  currentStamp,
  loadJsonFile,
  loadJsonFileStamped,
  readJsonLines,
  saveJsonFile,
  updateJsonFile,
} from "./jsonfile.ts";

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
      // Set aside under the lock, whose sidecar file stays.
      const aside = [...Deno.readDirSync(dir)].map((e) => join(dir, e.name))
        .filter((p) => !p.endsWith(".lock"));
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

const names = z.strictObject({ names: z.array(z.string()) });

/** Fails loudly instead of hanging when a lock is never released. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Adds `name` to the file as it is now; a yield in between gives the other updater its turn. */
function addName(path: string, name: string) {
  return updateJsonFile(path, names, async (current) => {
    const list = current.status === "ok" ? current.value.names : [];
    await new Promise((r) => setTimeout(r, 0));
    return { names: [...list, name] };
  });
}

Deno.test("jsonfile: two updaters, thirty changes each, interleaved: none is lost", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    const run = (who: string) =>
      Promise.all(Array.from({ length: 30 }, (_, i) => addName(path, `${who}${i}`)));
    await within(20_000, "60 updates", Promise.all([run("a"), run("b")]));
    const loaded = await loadJsonFile(path, names);
    assert.equal(loaded.status, "ok");
    if (loaded.status !== "ok") return;
    assert.equal(loaded.value.names.length, 60);
    assert.equal(new Set(loaded.value.names).size, 60);
  });
});

Deno.test("jsonfile: a removal applied under the lock is not undone by another updater", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    await addName(path, "gone");
    const remove = updateJsonFile(path, names, (current) => ({
      names: current.status === "ok" ? current.value.names.filter((n) => n !== "gone") : [],
    }));
    const adds = Array.from({ length: 10 }, (_, i) => addName(path, `kept${i}`));
    await within(20_000, "updates", Promise.all([remove, ...adds]));
    const loaded = await loadJsonFile(path, names);
    assert.ok(loaded.status === "ok");
    assert.ok(!loaded.value.names.includes("gone"), "the removed name came back");
    assert.equal(loaded.value.names.length, 10);
  });
});

Deno.test("jsonfile: the stamp changes with every update and is null for no file", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    assert.equal(currentStamp(path), null);
    const first = await updateJsonFile(path, names, () => ({ names: ["x"] }));
    assert.equal(currentStamp(path), first.stamp);
    const { stamp } = await loadJsonFileStamped(path, names);
    assert.equal(stamp, first.stamp, "a reader gets the stamp of the version it read");
    // The same size again: the inode (and, for the trust map, the generation) still differs.
    const second = await updateJsonFile(path, names, () => ({ names: ["y"] }));
    assert.notEqual(second.stamp, first.stamp);
    const kept = await updateJsonFile(path, names, () => undefined);
    assert.equal(kept.stamp, second.stamp, "no change written: the same version");
    assert.deepEqual(kept.value, { names: ["y"] });
  });
});

Deno.test("jsonfile: an updater given a corrupt file is told so, and the file is set aside", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    await Deno.writeTextFile(path, "{nope");
    let seen = "";
    await updateJsonFile(path, names, (current) => {
      seen = current.status === "corrupt" ? current.problem : current.status;
      return { names: [] };
    });
    assert.match(seen, /was corrupt \(not valid JSON.*moved to .*s\.json\.corrupt-/);
    const aside = [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith("s.json.corrupt-"));
    assert.equal(aside.length, 1);
    assert.equal(await Deno.readTextFile(join(dir, aside[0].name)), "{nope");
  });
});
