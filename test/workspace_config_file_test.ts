/**
 * The workspace's `.bravebot/config.json` is repository text read on the main thread before any
 * worker exists (issue 21): whatever the repository put there, the start neither hangs nor
 * fills memory. A FIFO, a link (to `/dev/zero`, or to a regular file), a linked `.bravebot`
 * folder and a file past the bound are each refused with exit 2 before anything is sent; a
 * regular file still narrows. Each run is bounded: a hang is killed and fails the test.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import type { MockReply } from "../scripts/mock-model.ts";

/** Long enough for a start on a busy machine; a start that hangs is killed here and fails. */
const BOUND_MS = 30_000;
const answer: MockReply[] = [{ text: "done" }];

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(made.code, 0, "mkfifo");
}

async function refused(
  setup: (root: string) => Promise<void>,
  why: RegExp,
  files: Record<string, string> = {},
): Promise<void> {
  await oneShotRun({ files, replies: answer, setup, timeoutMs: BOUND_MS }, (run) => {
    assert.equal(run.code, 2, `exit ${run.code}: ${run.stderr}`);
    assert.equal(run.mock.requests.length, 0, "nothing is sent");
    assert.match(run.stderr, /\.bravebot\/config\.json/);
    assert.match(run.stderr, why);
  });
}

Deno.test("workspace config (adversarial): a FIFO is refused, the start does not hang", async () => {
  await refused(async (root) => {
    await Deno.mkdir(join(root, ".bravebot"));
    await mkfifo(join(root, ".bravebot/config.json"));
  }, /not a regular file/);
});

Deno.test("workspace config (adversarial): a link to /dev/zero is refused without reading it", async () => {
  await refused(async (root) => {
    await Deno.mkdir(join(root, ".bravebot"));
    await Deno.symlink("/dev/zero", join(root, ".bravebot/config.json"));
  }, /symbolic link/);
});

Deno.test("workspace config (adversarial): a link to a regular file, even inside the workspace, is refused", async () => {
  await refused(
    async (root) => {
      await Deno.mkdir(join(root, ".bravebot"));
      await Deno.symlink("../narrow.json", join(root, ".bravebot/config.json"));
    },
    /symbolic link/,
    { "narrow.json": '{"maxTurns": 1}' },
  );
});

Deno.test("workspace config (adversarial): a linked .bravebot folder is refused", async () => {
  await refused(
    async (root) => {
      await Deno.symlink("elsewhere", join(root, ".bravebot"));
    },
    /symbolic link/,
    { "elsewhere/config.json": '{"maxTurns": 1}' },
  );
});

Deno.test("workspace config (adversarial): a file past the size bound is refused", async () => {
  // Valid JSON, so only the bound can refuse it.
  await refused(async () => {}, /larger than 256 KiB/, {
    ".bravebot/config.json": `${" ".repeat(300 * 1024)}{}`,
  });
});

Deno.test("workspace config: a regular file still narrows the user config", async () => {
  const loop: MockReply[] = Array.from({ length: 4 }, () => ({
    tool_calls: [{ name: "todo_write", arguments: { todos: [] } }],
  }));
  await oneShotRun({
    files: { ".bravebot/config.json": '{"maxTurns": 1}' },
    replies: loop,
    timeoutMs: BOUND_MS,
  }, (run) => {
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.mock.requests.length, 1);
  });
});
