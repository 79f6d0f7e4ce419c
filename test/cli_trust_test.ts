import assert from "node:assert/strict";
import { join } from "node:path";
import { runMain } from "./support/run_main.ts";

async function tempDirs() {
  const ws = await Deno.makeTempDir({ prefix: "bb-cli-ws-" });
  const state = await Deno.makeTempDir({ prefix: "bb-cli-state-" });
  return {
    ws,
    state,
    args: ["-w", ws, "--state-dir", state],
    cleanup: async () => {
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(state, { recursive: true });
    },
  };
}

Deno.test("cli: --version prints the version and exits 0", async () => {
  const r = await runMain(["--version"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
});

Deno.test("cli: an unknown option is a usage error, exit 2", async () => {
  const r = await runMain(["--no-such-option"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown option/);
});

Deno.test("cli: trust add, untrust, list and remove persist outside the workspace", async () => {
  const d = await tempDirs();
  try {
    await Deno.mkdir(join(d.ws, "src"));
    assert.equal((await runMain(["trust", "add", "src/", ...d.args])).code, 0);
    // Untrusting needs no directory: a tree can be set apart before it arrives.
    assert.equal((await runMain(["trust", "untrust", "src/vendor", ...d.args])).code, 0);
    const list = await runMain(["trust", "list", ...d.args]);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /trusted\s+src\/\n/);
    assert.match(list.stdout, /untrusted\s+src\/vendor\//);
    // Nothing was written into the workspace: trust lives in the state directory only.
    const inWorkspace = [...Deno.readDirSync(d.ws)].map((e) => e.name);
    assert.deepEqual(inWorkspace, ["src"]);
    const removed = await runMain(["trust", "remove", "src/vendor/", ...d.args]);
    assert.match(removed.stdout, /removed the rule for src\/vendor\//);
    const after = await runMain(["trust", "list", ...d.args]);
    assert.doesNotMatch(after.stdout, /src\/vendor/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("cli: trust refuses a rule that escapes the workspace, exit 2", async () => {
  const d = await tempDirs();
  try {
    const r = await runMain(["trust", "add", "../elsewhere", ...d.args]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /'\.\.' segments are not accepted/);
    const abs = await runMain(["trust", "add", "/etc", ...d.args]);
    assert.equal(abs.code, 2);
    assert.match(abs.stderr, /absolute paths are not accepted/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("cli: trust add refuses a directory that does not exist in the workspace, exit 2", async () => {
  const d = await tempDirs();
  try {
    await Deno.writeTextFile(join(d.ws, "file.txt"), "x\n");
    const outside = await Deno.makeTempDir({ prefix: "bb-cli-outside-" });
    await Deno.symlink(outside, join(d.ws, "link"));
    for (const dir of ["nosuchdir", "file.txt", "link", "link/"]) {
      const r = await runMain(["trust", "add", dir, ...d.args]);
      assert.equal(r.code, 2, dir);
      assert.match(r.stderr, /trust add: there is no directory \S+\/ in the workspace/);
      assert.match(r.stderr, /nothing changed/);
    }
    await Deno.remove(outside, { recursive: true });
    const list = await runMain(["trust", "list", ...d.args]);
    assert.match(list.stdout, /rules: none/);
    assert.match(list.stdout, /first use: not answered yet/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("cli: a corrupt trust file is set aside and reported, never trusted", async () => {
  const d = await tempDirs();
  try {
    assert.equal((await runMain(["trust", "add", ".", ...d.args])).code, 0);
    const files: string[] = [];
    for await (const e of Deno.readDir(join(d.state, "workspaces"))) files.push(e.name);
    const trustFile = join(d.state, "workspaces", files[0], "trust.json");
    await Deno.writeTextFile(trustFile, "{ this is not json");
    const r = await runMain(["trust", "list", ...d.args]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /was corrupt .* moved to .*trust\.json\.corrupt-/);
    assert.match(r.stdout, /rules: none \(nothing is trusted\)/);
    const aside = [...Deno.readDirSync(join(d.state, "workspaces", files[0]))]
      .filter((e) => e.name.startsWith("trust.json.corrupt-"));
    assert.equal(aside.length, 1);
  } finally {
    await d.cleanup();
  }
});
