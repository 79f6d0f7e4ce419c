import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import {
  appendJsonLine,
  currentStamp,
  JsonLineAppender,
  loadJsonFile,
  loadJsonFileStamped,
  LockTimeout,
  readJsonLines,
  saveJsonFile,
  StampReader,
  updateJsonFile,
} from "./jsonfile.ts";
import { holdLock } from "../../test/support/lock_holder.ts";

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

/** An update that gives up after `boundMs`: what it came to (a LockTimeout, or "written"). */
function updateOrGiveUp(path: string, boundMs: number, lines: string[] = []) {
  return updateJsonFile(path, names, () => ({ names: ["given up"] }), {
    boundMs,
    fail: true,
    onWait: (line) => lines.push(line),
  }).then(() => "written", (e) => e);
}

/**
 * Another process holding `path`'s lock as Brave Bot does (the pid written into the lock file),
 * or, with `pid`, holding it and claiming that pid; `release()` ends it. It says "held" once it
 * holds the lock.
 */
async function holder(path: string, pid?: number) {
  const jsonfile = new URL("./jsonfile.ts", import.meta.url).href;
  const code = pid === undefined
    ? `import { withFileLock } from ${JSON.stringify(jsonfile)};
       await withFileLock(${JSON.stringify(path)}, async () => {
         console.log("held");
         await new Promise(() => setInterval(() => {}, 60_000));
       });`
    : `const f = Deno.openSync(${JSON.stringify(path + ".lock")},
         { read: true, write: true, create: true });
       f.lockSync(true);
       f.truncateSync(0);
       f.writeSync(new TextEncoder().encode("${pid}\\n"));
       console.log("held");
       setInterval(() => {}, 60_000);`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const { value } = await within(20_000, "the holder", reader.read());
  assert.equal(new TextDecoder().decode(value).trim(), "held");
  let released = false;
  return {
    pid: child.pid,
    release: async () => {
      if (released) return;
      released = true;
      try {
        child.kill("SIGKILL");
      } catch { /* it ended already */ }
      await child.status;
      reader.releaseLock();
      await child.stdout.cancel();
    },
  };
}

/** A pid no process has: one that just ended (not reused within a test, on a quiet system). */
async function endedPid(): Promise<number> {
  const child = new Deno.Command("true", { stdout: "null", stderr: "null" }).spawn();
  await child.status;
  return child.pid;
}

Deno.test("jsonfile: a lock held by another process: a status line, then a failure naming its pid", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    const held = await holder(path);
    const lines: string[] = [];
    // Released in any case after 10 s: a wait without a bound then returns instead of hanging,
    // and the assertion below fails instead.
    const safety = setTimeout(() => void held.release(), 10_000);
    try {
      const outcome = await updateOrGiveUp(path, 300, lines);
      assert.ok(outcome instanceof LockTimeout, `the update ${String(outcome)}`);
      assert.equal(outcome.pid, held.pid);
      assert.match(outcome.message, new RegExp(`process ${held.pid}\\b`));
      assert.match(outcome.message, /s\.json\.lock/);
      assert.equal(lines.length, 1);
      assert.match(lines[0], new RegExp(`waiting for .*s\\.json.*process ${held.pid}\\b`));
      assert.equal(await loadJsonFile(path, names).then((l) => l.status), "missing");
    } finally {
      clearTimeout(safety);
      await held.release();
    }
    // Free again: taken at once, without a status line.
    assert.equal(await updateOrGiveUp(path, 300, lines), "written");
    assert.equal(lines.length, 1);
    assert.equal(await loadJsonFile(path, names).then((l) => l.status), "ok");
  });
});

Deno.test("jsonfile: a change that must be saved keeps waiting, saying so at each bound", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    const held = await holder(path);
    const lines: string[] = [];
    let releasing: Promise<void> | undefined;
    try {
      const update = updateJsonFile(path, names, () => ({ names: ["saved"] }), {
        boundMs: 100,
        onWait: (line) => {
          lines.push(line);
          // The third line: the holder goes away, and the change lands.
          if (lines.length === 3) releasing = held.release();
        },
      });
      await within(20_000, "the update", update);
      await releasing;
      assert.ok(lines.length >= 3);
      assert.match(lines[1], new RegExp(`still waiting .*process ${held.pid}\\b`));
      const loaded = await loadJsonFile(path, names);
      assert.deepEqual(loaded, { status: "ok", value: { names: ["saved"] } });
    } finally {
      await held.release();
    }
  });
});

Deno.test("jsonfile: a held lock whose recorded pid is not running is not broken", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    const gone = await endedPid();
    const held = await holder(path, gone);
    const safety = setTimeout(() => void held.release(), 10_000);
    try {
      const outcome = await updateOrGiveUp(path, 200);
      assert.ok(outcome instanceof LockTimeout, `the update ${String(outcome)}`);
      assert.equal(outcome.pid, gone);
      assert.match(outcome.message, new RegExp(`process ${gone}\\b.*never broken`));
      assert.equal(await loadJsonFile(path, names).then((l) => l.status), "missing");
    } finally {
      clearTimeout(safety);
      await held.release();
    }
    // A lock file left with a pid by a holder that died: the lock itself is free.
    const lines: string[] = [];
    assert.equal(await updateOrGiveUp(path, 200, lines), "written");
    assert.deepEqual(lines, []);
    // And the lock file is left without a pid once released.
    assert.equal(await Deno.readTextFile(`${path}.lock`), "");
  });
});

Deno.test("jsonfile: in this process, a caller that may give up does so at its bound too", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "s.json");
    const first = await holdLock(path);
    const lines: string[] = [];
    const outcome = await updateOrGiveUp(path, 100, lines);
    assert.ok(outcome instanceof LockTimeout, `the update ${String(outcome)}`);
    // One in line behind the first that waits: it goes on when the first is done.
    const second = updateJsonFile(path, names, () => ({ names: ["y"] }), { onWait: () => {} });
    first.release();
    await within(20_000, "the first and the second", Promise.all([first.done, second]));
    assert.deepEqual(await loadJsonFile(path, names), { status: "ok", value: { names: ["y"] } });
    assert.deepEqual(lines, [], "callers in this process wait in line, without a status line");
  });
});

Deno.test("jsonfile: an appender's kept handle writes where the path points: replaced, removed, a folder", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "audit.jsonl");
    const old = join(dir, "audit.old");
    const log = new JsonLineAppender(path);
    await log.append({ a: 1 });
    await Deno.link(path, old);
    await Deno.writeTextFile(join(dir, "tmp"), '{"b":0}\n');
    await Deno.rename(join(dir, "tmp"), path);
    await log.append({ a: 2 });
    assert.deepEqual((await readJsonLines(path)).rows, [{ b: 0 }, { a: 2 }]);
    assert.deepEqual((await readJsonLines(old)).rows, [{ a: 1 }]);
    await Deno.remove(path);
    await log.append({ a: 3 });
    assert.deepEqual((await readJsonLines(path)).rows, [{ a: 3 }]);
    // A torn line another writer left: a newline first, as appendJsonLine does.
    await Deno.writeTextFile(path, '{"a":', { append: true });
    await log.append({ a: 4 });
    assert.deepEqual((await readJsonLines(path)).rows, [{ a: 3 }, { a: 4 }]);
    // A folder in the file's place: the append fails, as a fresh open would.
    await Deno.remove(path);
    await Deno.mkdir(path);
    await assert.rejects(log.append({ a: 5 }));
    await Deno.remove(path);
    await log.append({ a: 6 });
    assert.deepEqual((await readJsonLines(path)).rows, [{ a: 6 }]);
    log.close();
  });
});

Deno.test("jsonfile: a StampReader's stamp is currentStamp's, and changes when the file does", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "trust.json");
    const reader = new StampReader(path);
    assert.equal(reader.current(), null);
    await saveJsonFile(path, { n: 1 });
    const first = reader.current();
    assert.notEqual(first, null);
    assert.equal(first, currentStamp(path));
    assert.equal(reader.current(), first);
    // Replaced by rename with the very same bytes: another inode, another stamp.
    await saveJsonFile(path, { n: 1 });
    const second = reader.current();
    assert.notEqual(second, first);
    assert.equal(second, currentStamp(path));
    // Changed in place, same size: the first bytes differ.
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.replace("1", "2"));
    const third = reader.current();
    assert.notEqual(third, second);
    assert.equal(third, currentStamp(path));
    await Deno.remove(path);
    assert.equal(reader.current(), null);
    await Deno.mkdir(path);
    assert.match(String(reader.current()), /^unreadable:/);
    assert.notEqual(reader.current(), reader.current());
    reader.close();
  });
});

Deno.test("jsonfile: the kept handles are not inherited by a program started meanwhile", async () => {
  await withDir(async (dir) => {
    const log = new JsonLineAppender(join(dir, "audit.jsonl"));
    await log.append({ a: 1 });
    await saveJsonFile(join(dir, "trust.json"), { n: 1 });
    const stamps = new StampReader(join(dir, "trust.json"));
    assert.notEqual(stamps.current(), null);
    const out = await new Deno.Command("sh", {
      args: ["-c", 'for f in /proc/$$/fd/*; do readlink "$f"; done'],
      stdout: "piped",
    }).output();
    const open = new TextDecoder().decode(out.stdout).split("\n");
    assert.ok(open.some((l) => l.startsWith("/") || l.startsWith("pipe:")), "the listing worked");
    assert.deepEqual(open.filter((l) => l.startsWith(dir)), []);
    log.close();
    stamps.close();
  });
});
