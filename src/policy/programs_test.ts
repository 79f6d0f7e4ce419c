/** Program lookup and the child environment (docs/tools.md#run). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, lookupOnPath, searchPath } from "./programs.ts";
import { inOwnProcess } from "../../test/support/child_test.ts";

Deno.test("programs: PATH entries that are empty or relative are never searched", () => {
  assert.deepEqual(searchPath("/usr/bin::.:bin:/bin:./x"), ["/usr/bin", "/bin"]);
  assert.deepEqual(searchPath(""), []);
});

Deno.test("programs: the first executable file on PATH wins; directories and plain files do not", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-path-" }));
  try {
    for (const d of ["a", "b", "c"]) await Deno.mkdir(join(dir, d));
    await Deno.mkdir(join(dir, "a", "tool")); // a directory called tool
    await Deno.writeTextFile(join(dir, "b", "tool"), "not executable");
    await Deno.writeTextFile(join(dir, "c", "tool"), "#!/bin/sh\n");
    await Deno.chmod(join(dir, "c", "tool"), 0o755);
    const dirs = ["a", "b", "c"].map((d) => join(dir, d));
    const found = await lookupOnPath("tool", dirs);
    assert.deepEqual(found, { ok: true, value: join(dir, "c", "tool") });
    const plain = await lookupOnPath("tool", dirs.slice(0, 2));
    assert.equal(plain.ok, false);
    assert.match(!plain.ok ? plain.error : "", /not executable/);
    const none = await lookupOnPath("nothing-here", dirs);
    assert.match(!none.ok ? none.error : "", /not found on PATH/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// It sets the API key's variable: in a process of its own, not beside other test files.
inOwnProcess(import.meta.url, {
  name: "programs: the child environment is a short list and never the API key",
  fn() {
    const saved = Deno.env.get("BRAVEBOT_API_KEY");
    Deno.env.set("BRAVEBOT_API_KEY", "sk-never");
    try {
      const env = childEnv("/scratch");
      assert.equal(env.TMPDIR, "/scratch");
      assert.equal(env.TERM, "dumb");
      assert.equal(env.GIT_TERMINAL_PROMPT, "0");
      assert.ok(!Object.values(env).includes("sk-never"));
      for (const name of Object.keys(env)) {
        assert.ok(
          [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "LC_CTYPE",
            "USER",
            "LOGNAME",
            "TERM",
            "TMPDIR",
            "GIT_TERMINAL_PROMPT",
          ].includes(name),
          name,
        );
      }
    } finally {
      if (saved === undefined) Deno.env.delete("BRAVEBOT_API_KEY");
      else Deno.env.set("BRAVEBOT_API_KEY", saved);
    }
  },
});
