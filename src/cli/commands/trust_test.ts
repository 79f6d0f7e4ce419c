import assert from "node:assert/strict";
import { join } from "node:path";
import { applyTrustCommand, checkTrustCommand, describeTrust, trustCommand } from "./trust.ts";
import { TrustMap } from "../../policy/trust_map.ts";
import { UsageError } from "../exit_codes.ts";
import { statePaths } from "../../state/session_paths.ts";
import { LockTimeout } from "../../state/jsonfile.ts";
import { holdLock } from "../../../test/support/lock_holder.ts";

Deno.test("trust command: add, untrust and remove change rules and say what changed", () => {
  const map = new TrustMap("/w");
  assert.deepEqual(applyTrustCommand(map, "add", "src/"), ["src/ is now trusted"]);
  assert.equal(map.firstUse, "custom", "choosing rules by hand answers the first-use question");
  assert.deepEqual(applyTrustCommand(map, "untrust", "./src/vendor"), [
    "src/vendor/ is now untrusted",
  ]);
  assert.equal(map.ruleIntegrity("src/a.ts"), "T");
  assert.equal(map.ruleIntegrity("src/vendor/a.ts"), "U");
  assert.deepEqual(applyTrustCommand(map, "remove", "src"), ["removed the rule for src/"]);
  assert.deepEqual(applyTrustCommand(map, "remove", "src"), ["no rule for src/; nothing changed"]);
  assert.equal(map.ruleIntegrity("src/a.ts"), "U");
  assert.deepEqual(applyTrustCommand(map, "add", "."), ["./ is now trusted"]);
});

Deno.test("trust command: bad actions and folders are usage errors with the reason", () => {
  const map = new TrustMap("/w");
  const cases: [string, string | undefined, RegExp][] = [
    ["grant", "src", /unknown action 'grant'; use list, add DIR, untrust DIR or remove DIR/],
    ["add", undefined, /trust add: a directory is required/],
    ["add", "../x", /trust add: '\.\.\/x': '\.\.' segments are not accepted/],
    ["untrust", "/etc", /absolute paths are not accepted/],
    ["add", "**/a/b", /a \*\*\/ rule names one directory/],
  ];
  for (const [action, dir, want] of cases) {
    assert.throws(
      () => applyTrustCommand(map, action, dir),
      (e: Error) => e instanceof UsageError && want.test(e.message),
    );
  }
  assert.equal(map.rules.length, 0, "nothing changed");
});

Deno.test("trust command: list shows rules, files and whether trust is bound to a hash", () => {
  const map = new TrustMap("/w");
  assert.deepEqual(describeTrust(map), [
    "first use: not answered yet",
    "rules: none (nothing is trusted)",
  ]);
  map.applyFirstUse("workspace");
  map.setFile("vendor/x.js", { integrity: "T", sha256: "ab".repeat(32), why: "vouch" });
  const lines = describeTrust(map);
  assert.equal(lines[0], "first use: workspace");
  assert.ok(lines.includes("  trusted    ./"));
  assert.ok(lines.includes("  untrusted  **/node_modules/"));
  assert.ok(lines.includes("  trusted    vendor/x.js  [vouch] (while sha256 is abababababab…)"));
});

Deno.test("trust command: changes are saved in the state directory, not the workspace", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-trustcmd-" }));
  try {
    const ws = join(base, "ws");
    const state = join(base, "state");
    await Deno.mkdir(join(ws, "src"), { recursive: true });
    const out: string[] = [];
    await trustCommand(ws, state, "add", "src", (l) => out.push(l));
    assert.deepEqual(out, [`workspace: ${ws}`, "src/ is now trusted"]);
    const saved = JSON.parse(await Deno.readTextFile(statePaths(state, ws).trustFile));
    assert.deepEqual(saved.rules, [{ dir: "src", trusted: true }]);
    assert.deepEqual([...Deno.readDirSync(ws)].map((e) => e.name), ["src"], "nothing written");
    const listed: string[] = [];
    await trustCommand(ws, state, "list", undefined, (l) => listed.push(l));
    assert.ok(listed.includes("  trusted    src/"));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("trust command: `add` (and /trust add) refuses a directory that does not exist; untrust and remove need none", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-trustcheck-" }));
  try {
    await Deno.mkdir(join(ws, "src"));
    assert.deepEqual(await checkTrustCommand(ws, "add", "src/"), { action: "add", dir: "src" });
    await assert.rejects(
      checkTrustCommand(ws, "add", "nosuchdir"),
      (e: Error) =>
        e instanceof UsageError &&
        e.message === "trust add: there is no directory nosuchdir/ in the workspace; " +
            "trust one that exists; nothing changed",
    );
    assert.deepEqual(await checkTrustCommand(ws, "untrust", "later"), {
      action: "untrust",
      dir: "later",
    });
    assert.deepEqual(await checkTrustCommand(ws, "remove", "gone"), {
      action: "remove",
      dir: "gone",
    });
    assert.equal(await checkTrustCommand(ws, "list"), null);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("trust list: a file name a run created is shown escaped, never sent to the terminal", () => {
  const map = new TrustMap("/w");
  map.setFile("notes\x1b]52;c;ZWNobyBwd25lZA==\x07\u202Etxt.exe", { integrity: "U", why: "run" });
  const shown = describeTrust(map).join("\n");
  assert.ok(shown.includes("notes⟦U+001B⟧]52;c;ZWNobyBwd25lZA==⟦U+0007⟧⟦U+202E⟧txt.exe"), shown);
  assert.ok(!shown.includes("\x1b") && !shown.includes("\u202E"), shown);
});

Deno.test("trust command: a run's marks are listed, escaped, and cleared by remove of that folder", () => {
  const map = new TrustMap("/w");
  applyTrustCommand(map, "add", ".");
  map.setPrefix("d\x1b[31m", { integrity: "U", why: "run" });
  map.setPrefix("e", { integrity: "U", why: "run" });
  const listed = describeTrust(map).join("\n");
  assert.match(listed, /folders a run could not see into/);
  assert.ok(!listed.includes("\x1b"), listed);
  assert.equal(map.ruleIntegrity("e/x"), "U");
  assert.deepEqual(applyTrustCommand(map, "add", "e"), [
    "e/ is now trusted",
    "a run's mark still makes what lies beneath a folder in e/ untrusted (trust list shows it; " +
    "trust remove clears it)",
  ]);
  assert.equal(map.ruleIntegrity("e/x"), "U", "a rule does not clear a mark");
  assert.deepEqual(applyTrustCommand(map, "remove", "e"), [
    "removed the rule for e/",
    "removed a run's mark on e/",
  ]);
  assert.equal(map.ruleIntegrity("e/x"), "T");
});

Deno.test("trust command: a trust map locked past the bound is a failure naming the holder; nothing changed", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-trustlock-" }));
  try {
    const ws = join(base, "ws");
    const state = join(base, "state");
    await Deno.mkdir(join(ws, "src"), { recursive: true });
    const trustFile = statePaths(state, ws).trustFile;
    const held = await holdLock(trustFile);
    const safety = setTimeout(held.release, 3_000);
    const outcome = await trustCommand(
      ws,
      state,
      "add",
      "src",
      () => {},
      { fail: true, boundMs: 100, onWait: () => {} },
    ).then(() => "written", (e) => e);
    clearTimeout(safety);
    held.release();
    await held.done;
    assert.ok(outcome instanceof LockTimeout, `the change was ${String(outcome)}`);
    assert.match(outcome.message, new RegExp(`process ${Deno.pid}`));
    await assert.rejects(Deno.stat(trustFile), Deno.errors.NotFound);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
