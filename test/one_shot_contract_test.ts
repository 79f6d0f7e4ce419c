/**
 * The one-shot contract of issue 25 through the real program against the scripted model:
 * `json`'s status, is_error, model, duration, the servers' token counts and the workspace's
 * trust; `stream-json`'s `start` line and `notice` lines; a run in a workspace where nothing is
 * trusted says so once; a text run says at its end what was declined for want of `--approvals`.
 * SIGINT's exit 130 is test/kill_resume_test.ts's and test/run_stop_test.ts's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";
import { runMain } from "./support/run_main.ts";

const files = { "src/a.ts": "export const a = 1;\n", "vendor/x.txt": "SECRET-CANARY-x\n" };
const lines = (stdout: string) => stdout.trim().split("\n").map((l) => JSON.parse(l));
const BLIND = /nothing in this workspace is trusted yet/;
const count = (text: string, re: RegExp) => text.split("\n").filter((l) => re.test(l)).length;

Deno.test("json: status, is_error, model, duration_ms, and usage summed over the run's replies", async () => {
  const replies: MockReply[] = [
    {
      tool_calls: [{ name: "todo_write", arguments: { todos: [] } }],
      usage: { prompt_tokens: 1200, completion_tokens: 30 },
    },
    { text: "done", usage: { prompt_tokens: 1350, completion_tokens: 4 } },
  ];
  await oneShotRun({ files, replies, args: ["--output-format", "json"] }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const o = JSON.parse(run.stdout);
    assert.equal(o.status, "finished");
    assert.equal(o.is_error, false);
    assert.equal(o.model, "mock-planner");
    assert.equal(typeof o.duration_ms, "number");
    assert.ok(o.duration_ms >= 0 && Number.isInteger(o.duration_ms));
    assert.deepEqual(o.usage, { prompt_tokens: 2550, completion_tokens: 34 });
  });
});

Deno.test("json: usage is null where no reply carried a count, and a count sent once is that count", async () => {
  await oneShotRun(
    { files, replies: [{ text: "hi" }], args: ["--output-format", "json"] },
    (run) => {
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout).usage, {
        prompt_tokens: null,
        completion_tokens: null,
      });
    },
  );
  const replies: MockReply[] = [
    { tool_calls: [{ name: "todo_write", arguments: { todos: [] } }] },
    { text: "done", usage: { prompt_tokens: 77 } },
  ];
  await oneShotRun({ files, replies, args: ["--output-format", "json"] }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout).usage, { prompt_tokens: 77, completion_tokens: null });
  });
});

Deno.test("json: a failure is status error and is_error true, the object still printed", async () => {
  await oneShotRun({
    files,
    replies: [{ fault: { status: 400, error_message: "bad request" } }],
    args: ["--output-format", "json"],
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    const o = JSON.parse(run.stdout);
    assert.equal(o.status, "error");
    assert.equal(o.is_error, true);
    assert.equal(o.result, "");
  });
});

Deno.test("stream-json: the first line is start, with the session, model, endpoint, workspace, its trust and no policy", async () => {
  await oneShotRun(
    { files, replies: [{ text: "ok" }], args: ["--output-format", "stream-json"] },
    (run) => {
      assert.equal(run.code, 0, run.stderr);
      const events = lines(run.stdout);
      const start = events[0];
      assert.deepEqual(start, {
        type: "start",
        session: events.at(-1).session,
        model: "mock-planner",
        endpoint: run.mock.url,
        workspace: run.root,
        workspace_trust: "not_set_up",
        policy: null,
      });
      assert.equal(events.filter((e) => e.type === "start").length, 1);
      const final = events.at(-1);
      assert.equal(final.type, "final");
      assert.equal(final.is_error, false);
      assert.equal(typeof final.duration_ms, "number");
      assert.deepEqual(final.usage, { prompt_tokens: null, completion_tokens: null });
    },
  );
});

Deno.test("stream-json: the policy in force is summed up by field, never by the paths or commands it names", async () => {
  const approvals = {
    trust: ["src/"],
    untrust: ["vendor/"],
    writes: ["src/**/SECRET-GLOB-*.ts"],
    run: [{ argv: ["./SECRET-PROGRAM.sh"], unconfined: true }, { prefix: ["deno", "test"] }],
    readOutput: [{ answer: "version" }],
    quarantinedRead: "keep",
  };
  await oneShotRun({
    files: { ...files, "SECRET-PROGRAM.sh": "echo hi\n" },
    replies: [{ text: "ok" }],
    approvals,
    args: ["--output-format", "stream-json"],
  }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const start = lines(run.stdout)[0];
    assert.equal(start.workspace_trust, "some_trusted");
    assert.deepEqual(start.policy, {
      trust: 1,
      untrust: 1,
      writes: 1,
      run: 2,
      unconfined: 1,
      readOutput: ["version"],
      quarantinedRead: "keep",
    });
    for (const secret of ["SECRET-GLOB", "SECRET-PROGRAM", "vendor/", "deno"]) {
      assert.ok(!JSON.stringify(start).includes(secret), `the start line names ${secret}`);
    }
  });
});

Deno.test("a workspace nobody set up: said once on stderr, in json and as a stream notice", async () => {
  await oneShotRun({ files, replies: [{ text: "ok" }] }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(count(run.stderr, BLIND), 1, run.stderr);
    assert.match(run.stderr, /bravebot trust add DIR/);
    assert.match(run.stderr, /--approvals with a "trust" list/);
    assert.equal(run.stdout, "ok\n");
  });
  await oneShotRun(
    { files, replies: [{ text: "ok" }], args: ["--output-format", "json"] },
    (run) => {
      assert.equal(JSON.parse(run.stdout).workspace_trust, "not_set_up");
      assert.equal(count(run.stderr, BLIND), 1, run.stderr);
    },
  );
  await oneShotRun(
    { files, replies: [{ text: "ok" }], args: ["--output-format", "stream-json"] },
    (run) => {
      const notices = lines(run.stdout).filter((e) => e.type === "notice");
      assert.equal(notices.filter((n) => BLIND.test(n.text)).length, 1);
      assert.equal(count(run.stderr, BLIND), 1, run.stderr);
    },
  );
});

Deno.test("a workspace with a trusted folder, from the policy file or the stored map, is not called blind", async () => {
  await oneShotRun({
    files,
    replies: [{ text: "ok" }],
    approvals: { trust: ["src/"] },
    args: ["--output-format", "json"],
  }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).workspace_trust, "some_trusted");
    assert.ok(!/is trusted yet|trusts no folder/.test(run.stderr), run.stderr);
  });
  await oneShotRun({ files, replies: [{ text: "first" }] }, async (run) => {
    const state = join(run.stateDir, "state");
    const trust = (...a: string[]) =>
      runMain([
        "trust",
        ...a,
        "-w",
        run.root,
        "--state-dir",
        state,
        "--config",
        join(run.stateDir, "config.json"),
      ]);
    // Set up, trusting nothing: said, in other words.
    assert.equal((await trust("untrust", "vendor")).code, 0);
    const mock = await startMockModel({ script: { replies: [{ text: "a" }, { text: "b" }] } });
    try {
      const nothing = await run.resume("again", mock.url, ["--output-format", "json"]);
      assert.equal(nothing.code, 0, nothing.stderr);
      assert.equal(JSON.parse(nothing.stdout).workspace_trust, "nothing_trusted");
      assert.match(
        nothing.stderr,
        /nothing in this workspace is trusted \(its trust map trusts no folder\)/,
      );
      assert.equal((await trust("add", "src")).code, 0);
      const some = await run.resume("and again", mock.url, ["--output-format", "json"]);
      assert.equal(JSON.parse(some.stdout).workspace_trust, "some_trusted");
      assert.ok(!/nothing in this workspace is trusted/.test(some.stderr), some.stderr);
    } finally {
      await mock.stop();
    }
  });
});

Deno.test("text: declined writes and commands are said in one line at the end", async () => {
  const replies: MockReply[] = [
    { tool_calls: [{ name: "write_file", arguments: { path: "src/new.ts", contents: "x" } }] },
    { tool_calls: [{ name: "run", arguments: { pipeline: [{ program: "true" }] } }] },
    { tool_calls: [{ name: "write_file", arguments: { path: "src/b.ts", contents: "y" } }] },
    { text: "could not" },
  ];
  await oneShotRun({ files, replies }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "could not\n");
    const last = run.stderr.trimEnd().split("\n").at(-1);
    assert.equal(
      last,
      "bravebot: 2 writes and 1 command were declined: nobody can be asked in a one-shot run; " +
        'an approval policy file (--approvals FILE, with "writes" and "run" entries) can allow ' +
        "them in advance",
    );
  });
  await oneShotRun({
    files,
    replies: [replies[0], { text: "could not" }],
    approvals: { trust: ["src/"] },
  }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stderr.trimEnd().split("\n").at(-1),
      "bravebot: 1 write was declined: nobody can be asked in a one-shot run, and the approval " +
        'policy file does not allow it (add "writes" entries)',
    );
  });
  await oneShotRun({ files, replies: [{ text: "nothing to do" }] }, (run) => {
    assert.ok(!/declined/.test(run.stderr), run.stderr);
  });
});

Deno.test("a retried request: one notice line each on a pipe, and a notice line each in the stream", async () => {
  const replies: MockReply[] = [{ fault: { status: 500, error_message: "busy GPU" }, times: 2 }, {
    text: "ok",
  }];
  await oneShotRun({ files, replies }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const notes = run.stderr.split("\n").filter((l) => /trying again/.test(l));
    assert.equal(notes.length, 2, run.stderr);
    assert.match(notes[0], /HTTP 500: busy GPU; trying again in [\d.]+ s \(try 2\)$/);
    assert.ok(!run.stderr.includes("\r"), "no carriage return on a pipe");
  });
  await oneShotRun({ files, replies, args: ["--output-format", "stream-json"] }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    const notes = lines(run.stdout).filter((e) =>
      e.type === "notice" && /trying again/.test(e.text)
    );
    assert.equal(notes.length, 2);
    assert.ok(notes.every((n) => n.progress === notes[0].progress && n.progress !== undefined));
    // And the person's copy on stderr, as in every format.
    assert.equal(count(run.stderr, /trying again/), 2, run.stderr);
  });
});
