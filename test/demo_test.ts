/** `deno task demo` runs as the README says, from the repository alone. */
import assert from "node:assert/strict";

Deno.test("the demo runs, shows the quarantine, and reports no injected text reached the planner", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))).tasks;
  const words = (tasks.demo as string).split(/\s+/);
  assert.equal(words[0], "deno");
  const out = await new Deno.Command(Deno.execPath(), {
    args: words.slice(1),
    cwd: new URL("..", import.meta.url).pathname,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, stdout + new TextDecoder().decode(out.stderr));
  assert.match(stdout, /none contained the injected text/);
  assert.match(stdout, /kept quarantined as ref:0/);
  assert.match(stdout, /processor's remark, shown to you only/);
  assert.match(stdout, /write approved \(decided by: policy-file\)/);
  assert.ok(!/attacker\.example/.test(stdout.split("What the model endpoint received")[0]));
});
