/** `bravebot vouch [list | remove ID]` through the real entry point and permission flags. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "./support/run_main.ts";
import { statePaths } from "../src/state/session_paths.ts";
import { VouchStore } from "../src/policy/vouches.ts";
import { sha256 } from "../src/util/hash.ts";

async function withDirs(fn: (ws: string, state: string, config: string) => Promise<void>) {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-vouch-ws-" }));
  const state = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-vouch-state-" }));
  const config = join(state, "config.json");
  await Deno.writeTextFile(config, "{}");
  try {
    await fn(ws, state, config);
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(state, { recursive: true });
  }
}

Deno.test("cli vouch: list shows each vouch escaped, remove takes one back", async () => {
  await withDirs(async (ws, state, config) => {
    const common = ["-w", ws, "--state-dir", state, "--config", config];
    const empty = await runMain(["vouch", "list", ...common]);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /no vouched commands/);

    const store = VouchStore.at(statePaths(state, ws).vouchesFile, ws);
    await store.add({ program: "/usr/bin/git", match: "exact", args: ["status"] });
    await store.add({ program: "/usr/bin/git", match: "prefix", args: ["log\u202E"] });
    await Deno.writeTextFile(join(ws, "t.sh"), "#!/bin/sh\n");
    await store.add({
      program: join(ws, "t.sh"),
      match: "exact",
      args: [],
      sha256: sha256("something else"),
    });
    const list = await runMain(["vouch", ...common]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /v1 +exactly +\/usr\/bin\/git status/);
    assert.match(list.stdout, /v2 +prefix +\/usr\/bin\/git 'log⟦U\+202E⟧' …/);
    assert.ok(!list.stdout.includes("\u202E"));
    assert.match(list.stdout, /v3 .*\[void: the program changed or is gone\]/);

    const removed = await runMain(["vouch", "remove", "v1", ...common]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /removed v1/);
    assert.deepEqual((await store.list()).map((v) => v.id), ["v2", "v3"]);

    const unknown = await runMain(["vouch", "remove", "v9", ...common]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no vouch 'v9'/);
    const noId = await runMain(["vouch", "remove", ...common]);
    assert.equal(noId.code, 2);
    const badAction = await runMain(["vouch", "add", ...common]);
    assert.equal(badAction.code, 2);
    assert.match(badAction.stderr, /unknown action 'add'/);
  });
});

Deno.test("cli vouch (adversarial): a vouched program replaced by a FIFO is void, and list does not hang", async () => {
  await withDirs(async (ws, state, config) => {
    const store = VouchStore.at(statePaths(state, ws).vouchesFile, ws);
    const program = join(ws, "t.sh");
    await Deno.writeTextFile(program, "#!/bin/sh\n");
    await store.add({ program, match: "exact", args: [], sha256: sha256("#!/bin/sh\n") });
    const common = ["-w", ws, "--state-dir", state, "--config", config];
    const before = await runMain(["vouch", "list", ...common], { timeoutMs: 30_000 });
    assert.equal(before.code, 0, before.stderr);
    assert.ok(!before.stdout.includes("[void"), before.stdout);
    // The repository swaps the program for a FIFO nobody writes: reading it would wait forever.
    await Deno.remove(program);
    assert.equal((await new Deno.Command("mkfifo", { args: [program] }).output()).code, 0);
    // Bounded: a hang is killed at the bound and fails here.
    const after = await runMain(["vouch", "list", ...common], { timeoutMs: 30_000 });
    assert.equal(after.code, 0, `exit ${after.code}: ${after.stderr}`);
    assert.match(after.stdout, /v1 .*\[void: the program changed or is gone\]/);
  });
});
