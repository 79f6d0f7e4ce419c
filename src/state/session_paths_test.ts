import assert from "node:assert/strict";
import { join } from "node:path";
import { newSessionId, sessionPaths, statePaths } from "./session_paths.ts";
import { defaultConfigPath, defaultStateDir, workspaceStateDir } from "./dirs.ts";
import { inOwnProcess } from "../../test/support/child_test.ts";

Deno.test("state paths: one folder per real workspace path, under the state directory", () => {
  const a = workspaceStateDir("/state", "/home/me/project");
  const b = workspaceStateDir("/state", "/home/me/other/project");
  assert.notEqual(a, b, "two checkouts with the same name never share trust");
  assert.match(a, /^\/state\/workspaces\/project-[0-9a-f]{16}$/);
  assert.equal(workspaceStateDir("/state", "/home/me/project"), a, "stable");
  const odd = workspaceStateDir("/state", "/tmp/we\u202Eird name/..x");
  assert.match(odd, /^\/state\/workspaces\/\.\.x-[0-9a-f]{16}$/);
  assert.match(workspaceStateDir("/state", "/tmp/a b\u202Ec"), /\/a_b_c-/);
  const p = statePaths("/state", "/home/me/project");
  assert.equal(p.trustFile, join(a, "trust.json"));
  const s = sessionPaths(p, "id1");
  assert.equal(s.audit, join(a, "sessions", "id1", "audit.jsonl"));
  assert.equal(s.scratch, join(a, "sessions", "id1", "scratch"));
});

Deno.test("state paths: session ids sort by time", () => {
  const early = newSessionId(new Date("2026-01-02T03:04:05.006Z"));
  const late = newSessionId(new Date("2026-11-02T03:04:05.006Z"));
  assert.match(early, /^2026-01-02T03-04-05-006Z-[0-9a-f]{4}$/);
  assert.ok(early < late);
});

// It sets HOME and the XDG variables: in a process of its own, not beside other test files.
inOwnProcess(import.meta.url, {
  name: "state paths: XDG variables are honoured, and empty means unset",
  fn() {
    const saved = ["XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME"].map((n) =>
      [n, Deno.env.get(n)] as const
    );
    try {
      Deno.env.set("XDG_STATE_HOME", "/xs");
      Deno.env.set("XDG_CONFIG_HOME", "/xc");
      assert.equal(defaultStateDir(), "/xs/bravebot");
      assert.equal(defaultConfigPath(), "/xc/bravebot/config.json");
      if (Deno.build.os !== "windows") {
        Deno.env.set("XDG_STATE_HOME", "");
        Deno.env.set("XDG_CONFIG_HOME", "");
        Deno.env.set("HOME", "/h");
        assert.equal(defaultStateDir(), "/h/.local/state/bravebot");
        assert.equal(defaultConfigPath(), "/h/.config/bravebot/config.json");
      }
    } finally {
      for (const [n, v] of saved) v === undefined ? Deno.env.delete(n) : Deno.env.set(n, v);
    }
  },
});
