import assert from "node:assert/strict";
import { join } from "node:path";
import { appendHistory, HISTORY_ENTRIES, HISTORY_ENTRY_CHARS, loadHistory } from "./history.ts";
import { LockTimeout } from "./jsonfile.ts";
import { holdLock } from "../../test/support/lock_holder.ts";

Deno.test("history: appended, kept in order, bounded, the same line not twice", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-history-" });
  try {
    const path = join(dir, "ws", "history.json");
    assert.deepEqual(await loadHistory(path), { entries: [] });
    await appendHistory(path, "one");
    await appendHistory(path, "two\nlines");
    await appendHistory(path, "two\nlines");
    await appendHistory(path, "   ");
    await appendHistory(path, "x".repeat(HISTORY_ENTRY_CHARS + 1));
    assert.deepEqual((await loadHistory(path)).entries, ["one", "two\nlines"]);
    for (let i = 0; i < HISTORY_ENTRIES + 5; i++) await appendHistory(path, `m${i}`);
    const { entries } = await loadHistory(path);
    assert.equal(entries.length, HISTORY_ENTRIES);
    assert.equal(entries.at(-1), `m${HISTORY_ENTRIES + 4}`);
    assert.equal((await Deno.stat(path)).mode! & 0o077, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("history: a corrupt file is set aside and reported, not trusted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-history-" });
  try {
    const path = join(dir, "history.json");
    await Deno.writeTextFile(path, "{not json");
    const loaded = await loadHistory(path);
    assert.deepEqual(loaded.entries, []);
    assert.match(loaded.problem ?? "", /history\.json/);
    await appendHistory(path, "after");
    assert.deepEqual((await loadHistory(path)).entries, ["after"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("history: a line is given up, not waited for, while another holder keeps the lock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-history-" });
  try {
    const path = join(dir, "history.json");
    const held = await holdLock(path);
    const lines: string[] = [];
    const outcome = await appendHistory(path, "lost", {
      boundMs: 100,
      onWait: (line) => lines.push(line),
    }).then(() => "saved", (e) => e);
    held.release();
    await held.done;
    assert.ok(outcome instanceof LockTimeout, `the line was ${String(outcome)}`);
    assert.match(outcome.message, new RegExp(`process ${Deno.pid} \\(this one\\)`));
    await appendHistory(path, "kept", { boundMs: 100 });
    assert.deepEqual((await loadHistory(path)).entries, ["kept"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
