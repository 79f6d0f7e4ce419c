/**
 * The command line's words (docs/cli.md#commands, issue 17): `bravebot help` is `--help`, a
 * subcommand's help lists its options, and a lone word one slip from a subcommand asks "did you
 * mean …?" in a terminal (driven through a real pseudo-terminal, test/support/pty_drive.py) and
 * nowhere else.
 */
import assert from "node:assert/strict";
import { drivePty } from "./support/pty.ts";
import { join } from "node:path";
import { runMain } from "./support/run_main.ts";
import { startMockModel } from "../scripts/mock-model.ts";

async function dirs() {
  const root = await Deno.makeTempDir({ prefix: "bb-words-" });
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const config = join(root, "config.json");
  await Deno.writeTextFile(config, "{}");
  return {
    root,
    ws,
    args: ["-w", ws, "--state-dir", join(root, "state"), "--config", config],
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

Deno.test("words: `help` and `help COMMAND` are --help; a longer prompt is still a prompt", async () => {
  const d = await dirs();
  try {
    const help = await runMain(["help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: bravebot \[options\] \[command\] \[prompt\.\.\.\]/);
    const sub = await runMain(["help", "doctor"]);
    assert.equal(sub.code, 0, sub.stderr);
    assert.match(sub.stdout, /^Usage: bravebot doctor/);
    assert.match(sub.stdout, /--endpoint <url>/);
    // Words that are more than a request for help go to the session (here: no terminal).
    const prompt = await runMain(["help", "me", "fix", "this", ...d.args, "--model", "m"]);
    assert.equal(prompt.code, 2);
    assert.match(prompt.stderr, /needs a terminal/);
  } finally {
    await d.cleanup();
  }
});

Deno.test("words: a subcommand's --help lists the options it takes, not the session's", async () => {
  const r = await runMain(["doctor", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  for (const o of ["-w, --workspace <dir>", "--endpoint <url>", "--model <name>", "--config"]) {
    assert.ok(r.stdout.includes(o), `${o} missing:\n${r.stdout}`);
  }
  for (const o of ["--print", "--approvals", "--output-format", "--resume"]) {
    assert.ok(!r.stdout.includes(o), `${o} listed:\n${r.stdout}`);
  }
});

Deno.test("words: outside a terminal a slip for a subcommand is still a prompt; nothing asks", async () => {
  const d = await dirs();
  try {
    const r = await runMain(["doctr", ...d.args, "--model", "m"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /needs a terminal/);
    assert.doesNotMatch(r.stdout + r.stderr, /Did you mean/);
  } finally {
    await d.cleanup();
  }
});

Deno.test({
  name: "words (pty): `trsut` asks; Enter runs `trust`, `n` sends the word to the planner",
  sanitizeResources: false,
  async fn() {
    const d = await dirs();
    const mock = await startMockModel({ script: { replies: [{ text: "Heard you." }] } });
    try {
      const yes = await drivePty([
        { expect: "Did you mean `bravebot trust`\\? \\[Y/n", send: "\r", answer: true },
        { expect: "first use: not answered yet" },
      ], ["trsut", ...d.args]);
      assert.ok(yes.ok, yes.screen);
      assert.match(yes.screen, /EXIT: 0/);
      assert.equal(mock.requests.length, 0);

      const no = await drivePty([
        { expect: "Did you mean `bravebot trust`\\?", send: "n\r", answer: true },
        { expect: "Trust:", send: "\r", answer: true },
        { expect: "Heard you\\.[\\s\\S]*›", send: "/exit\r" },
      ], ["trsut", ...d.args, "--endpoint", mock.url, "--model", "mock"]);
      assert.ok(no.ok, no.screen);
      const planner = mock.requests.find((r) => r.kind === "planner");
      assert.ok(planner && /"content":"trsut"/.test(planner.raw), planner?.raw);
    } finally {
      await mock.stop();
      await d.cleanup();
    }
  },
});
