/**
 * `deno task start` runs Brave Bot in the directory the task was started from (issue 25): from
 * another repository, with `--config` naming this checkout's deno.json, the workspace is that
 * repository, not Brave Bot's own code; relative paths in the arguments (`-w`, `--state-dir`)
 * are the person's too, as they would be for the binary.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** `deno task --config CONFIG start ARGS…` in `cwd`, as a person's shell would start it. */
async function startTask(cwd: string, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "--config", CONFIG, "start", ...args],
    cwd,
    // A task started by another task inherits its INIT_CWD: this one starts afresh.
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("deno task start: the workspace is where the task was started, and -w is the person's", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-start-task-" }));
  try {
    const repo = join(root, "my repo");
    await Deno.mkdir(join(repo, "sub"), { recursive: true });
    // A repository of its own with a deno.json: Brave Bot's imports are still its own.
    await Deno.writeTextFile(
      join(repo, "deno.json"),
      '{ "imports": { "commander": "./nope.ts" } }',
    );
    await Deno.writeTextFile(join(root, "config.json"), "{}");
    const common = ["--state-dir", "state", "--config", "../config.json"];

    const here = await startTask(repo, ["sessions", ...common]);
    assert.equal(here.code, 0, here.stderr);
    assert.match(here.stdout, new RegExp(`^workspace: ${RegExp.escape(repo)}$`, "m"));

    const other = await startTask(repo, ["sessions", "-w", "sub", ...common]);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stdout, new RegExp(`^workspace: ${RegExp.escape(join(repo, "sub"))}$`, "m"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
