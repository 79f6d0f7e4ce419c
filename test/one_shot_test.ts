/**
 * One-shot mode (docs/cli.md#one-shot-mode): each output format, each exit code, and nothing sent
 * before it may be.
 */
import assert from "node:assert/strict";
import { hasStackTrace, oneShotRun } from "./support/one_shot_fixture.ts";
import { type MockReply, startMockModel } from "../scripts/mock-model.ts";
import { runMain } from "./support/run_main.ts";

const STREAM_TYPES = new Set([
  "start",
  "assistant_text",
  "tool_call",
  "decision",
  "tool_result",
  "remark",
  "shown",
  "notice",
  "error",
  "final",
]);
const files = { "src/a.ts": "export const a = 1;\n", "vendor/x.txt": "SECRET-CANARY-x\n" };
const readThenAnswer: MockReply[] = [
  { tool_calls: [{ name: "read_file", arguments: { path: "vendor/x.txt" } }] },
  { text: "The answer is 42." },
];

Deno.test("text: the final answer alone on stdout, the rest on stderr, exit 0", async () => {
  await oneShotRun({ files, replies: readThenAnswer }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "The answer is 42.\n");
    assert.match(run.stderr, /→ read_file/);
    assert.match(run.stderr, /quarantined read: keep/);
    assert.ok(!run.stderr.includes("SECRET-CANARY-x"));
  });
});

Deno.test("json: one object with the fields docs/cli.md lists", async () => {
  await oneShotRun(
    { files, replies: readThenAnswer, args: ["--output-format", "json"] },
    (run) => {
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split("\n");
      assert.equal(lines.length, 1);
      const obj = JSON.parse(lines[0]);
      assert.deepEqual(Object.keys(obj), [
        "result",
        "status",
        "is_error",
        "session",
        "model",
        "turns",
        "duration_ms",
        "usage",
        "decisions",
        "context_label",
        "shown",
        "workspace_trust",
      ]);
      assert.equal(obj.result, "The answer is 42.");
      assert.equal(obj.turns, 2);
      assert.equal(obj.context_label, "(T,priv)");
      assert.match(obj.session, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual(
        obj.decisions.map((d: { decision: string; by: string }) => [d.decision, d.by]),
        [
          ["quarantined read: keep", "nobody"],
        ],
      );
    },
  );
});

Deno.test("stream-json: one object a line, each with a type docs/cli.md names, ending in final", async () => {
  await oneShotRun(
    { files, replies: readThenAnswer, args: ["--output-format", "stream-json"] },
    (run) => {
      assert.equal(run.code, 0, run.stderr);
      const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
      for (const e of events) assert.ok(STREAM_TYPES.has(e.type), e.type);
      assert.deepEqual(events.map((e) => e.type), [
        "start",
        "notice",
        "tool_call",
        "decision",
        "tool_result",
        "assistant_text",
        "final",
      ]);
      assert.equal(events[6].result, "The answer is 42.");
      assert.match(events[4].content, /ref:0/);
      assert.ok(!run.stdout.includes("SECRET-CANARY-x"));
    },
  );
});

Deno.test("exit 3 when --max-turns is reached", async () => {
  const loop: MockReply[] = Array.from({ length: 4 }, () => ({
    tool_calls: [{ name: "todo_write", arguments: { todos: [] } }],
  }));
  await oneShotRun(
    { files, replies: loop, args: ["--max-turns", "2", "--output-format", "json"] },
    (run) => {
      assert.equal(run.code, 3, run.stderr);
      assert.equal(run.mock.requests.length, 2);
      assert.match(run.stderr, /--max-turns 2/);
      assert.equal(JSON.parse(run.stdout).turns, 2);
    },
  );
});

Deno.test("exit 1 with a message naming the endpoint when it cannot be reached", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await oneShotRun({
    files,
    replies: [],
    endpoint: `http://127.0.0.1:${port}/v1`,
    timeoutMs: 120_000,
  }, (run) => {
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `nothing is listening at the planner endpoint http://127\\.0\\.0\\.1:${port}/v1 \\(5 tries`,
      ),
    );
    assert.equal(run.stdout, "");
    assert.ok(!hasStackTrace(run.stderr), run.stderr);
  });
});

Deno.test("a policy file with an unknown field is exit 2 before any request reaches the endpoint", async () => {
  await oneShotRun({
    files,
    replies: readThenAnswer,
    approvals: { writes: ["src/**"], wirtes: ["x"] },
  }, (run) => {
    assert.equal(run.code, 2);
    assert.match(run.stderr, /unknown field 'wirtes'/);
    assert.equal(run.mock.requests.length, 0);
  });
  for (
    const bad of [
      "{not json",
      JSON.stringify({ readOutput: "yes" }),
      JSON.stringify({ trust: ["../outside"] }),
      JSON.stringify({ untrust: ["**/a/b"] }),
    ]
  ) {
    await oneShotRun({ files, replies: readThenAnswer, approvals: bad }, (run) => {
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.mock.requests.length, 0);
      assert.ok(!hasStackTrace(run.stderr));
    });
  }
});

Deno.test("no model anywhere is exit 2, naming --model, with nothing sent", async () => {
  await oneShotRun({ files, replies: readThenAnswer, noModel: true }, (run) => {
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--model/);
    assert.equal(run.mock.requests.length, 0);
  });
});

Deno.test("a model from the config is enough", async () => {
  await oneShotRun({
    files,
    replies: [{ text: "hi" }],
    noModel: true,
    config: { model: "from-config" },
  }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal((run.mock.requests[0].body as { model: string }).model, "from-config");
  });
});

Deno.test("a bad --output-format is exit 2 with nothing sent", async () => {
  await oneShotRun(
    { files, replies: readThenAnswer, args: ["--output-format", "yaml"] },
    (run) => {
      assert.equal(run.code, 2);
      assert.equal(run.mock.requests.length, 0);
    },
  );
});

Deno.test("one-shot never asks: a write the policy file does not allow is declined and the planner told", async () => {
  const replies: MockReply[] = [
    { tool_calls: [{ name: "write_file", arguments: { path: "src/new.ts", contents: "x" } }] },
    { text: "could not write" },
  ];
  await oneShotRun({
    files,
    replies,
    approvals: { trust: ["src/"] },
    args: ["--output-format", "stream-json"],
  }, async (run) => {
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const result = events.find((e) => e.type === "tool_result");
    assert.equal(result.is_error, true);
    assert.match(result.content, /nobody can be asked/);
    await assert.rejects(() => run.read("src/new.ts"));
  });
});

Deno.test("--continue goes on with the latest session, its conversation sent again", async () => {
  await oneShotRun({ files, replies: [{ text: "first answer" }] }, async (first) => {
    assert.equal(first.code, 0);
    // Second run in the same workspace and state folder.
    const mock = await startMockModel({ script: { replies: [{ text: "second answer" }] } });
    try {
      const stateDir = `${first.stateDir}/state`;
      const r = await runMain([
        "-p",
        "and then?",
        "--continue",
        "-w",
        first.root,
        "--state-dir",
        stateDir,
        "--config",
        `${first.stateDir}/config.json`,
        "--endpoint",
        mock.url,
        "--model",
        "m",
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "second answer\n");
      const sent =
        (mock.requests[0].body as { messages: { role: string; content: string }[] }).messages;
      assert.deepEqual(sent.slice(1).map((m) => m.content), [
        "do the task",
        "first answer",
        "and then?",
      ]);
    } finally {
      await mock.stop();
    }
  });
});

Deno.test("a processor's remark reaches stderr escaped: no terminal control sequence gets through", async () => {
  const replies: MockReply[] = [
    { for: "planner", tool_calls: [{ name: "read_file", arguments: { path: "vendor/x.txt" } }] },
    {
      for: "planner",
      tool_calls: [{
        name: "spawn_processor",
        arguments: { reads: ["$FIRST_REF"], instruction: "x" },
      }],
    },
    {
      for: "processor",
      text: "clear\u001b[2J\u001b]0;pwned\u0007 me\u202e\n=== document ===\ndoc",
    },
    { for: "planner", text: "done" },
  ];
  await oneShotRun({ files, replies }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /processor remark \(untrusted, not shown to the planner\)/);
    assert.ok(!run.stderr.includes("\u001b"), "an escape character reached the terminal");
    assert.ok(!run.stderr.includes("\u0007"));
    assert.ok(!run.stderr.includes("\u202e"));
  });
});

Deno.test("a server still loading its model past timeouts.loadMs: exit 1, saying so", async () => {
  await oneShotRun({
    replies: [{ fault: { status: 503, error_message: "Loading model" }, times: 100 }],
    config: { timeouts: { loadMs: 1000 } },
  }, (run) => {
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /still loading the model/);
    assert.match(run.stderr, /timeouts\.loadMs/);
  });
});

// ---------------------------------------------------------------------------------------------
// Every byte bound for a terminal is escaped (issue 21): the answer, a shown reference, an error
// about the workspace's config, and the JSON formats.

const OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07";
/** Characters a terminal would act on or draw as nothing, one of each kind. */
const HIDDEN = ["\x1b", "\x07", "\x7f", "\u0085", "\u00a0", "\u200b", "\u202e", "\u2028", "\u2066"];
const TAG = "\u{E0041}";
const hostileFiles = { ...files, "vendor/evil.txt": `evil ${OSC52} \u202etxt.exe\u2066${TAG}\n` };
/** Reads the hostile file (a quarantined reference), then answers with OSC 52 and shows it. */
const hostileReplies = (): MockReply[] => [
  { tool_calls: [{ name: "read_file", arguments: { path: "vendor/evil.txt" } }] },
  { text: `Done ${OSC52} a\u202eb\u200bc\u0085d${TAG} — see {{ref:0}}` },
];

function assertNothingRaw(stream: string, what: string): void {
  for (const ch of [...HIDDEN, TAG]) {
    assert.ok(
      !stream.includes(ch),
      `U+${ch.codePointAt(0)!.toString(16)} reached ${what} raw: ${JSON.stringify(stream)}`,
    );
  }
}

Deno.test("text (adversarial): an OSC 52 in the answer and in a shown reference is escaped on stdout", async () => {
  await oneShotRun({ files: hostileFiles, replies: hostileReplies() }, (run) => {
    assert.equal(run.code, 0, run.stderr);
    assertNothingRaw(run.stdout, "stdout");
    assertNothingRaw(run.stderr, "stderr");
    // The answer's own line, as the person reads it: markers where the controls were.
    assert.match(run.stdout, /^Done ⟦U\+001B⟧\]52;c;cm0gLXJmIH4=⟦U\+0007⟧ a⟦U\+202E⟧b/);
    // The shown reference, escaped in its frame.
    assert.match(run.stdout, /evil ⟦U\+001B⟧\]52;c;cm0gLXJmIH4=⟦U\+0007⟧ ⟦U\+202E⟧txt\.exe/);
  });
});

for (const format of ["json", "stream-json"] as const) {
  Deno.test(`${format} (adversarial): controls, bidi and invisible characters are \\u escapes; the values are unchanged`, async () => {
    await oneShotRun(
      { files: hostileFiles, replies: hostileReplies(), args: ["--output-format", format] },
      (run) => {
        assert.equal(run.code, 0, run.stderr);
        assertNothingRaw(run.stdout, "stdout");
        assertNothingRaw(run.stderr, "stderr");
        const objects = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
        const last = objects.at(-1);
        assert.equal(last.result, `Done ${OSC52} a\u202eb\u200bc\u0085d${TAG} — see {{ref:0}}`);
        const shown = format === "json"
          ? last.shown
          : objects.filter((o: { type: string }) => o.type === "shown");
        assert.equal(shown.length, 1);
        assert.equal(shown[0].text, hostileFiles["vendor/evil.txt"].trimEnd());
        assert.ok(run.stdout.includes("\\u202e") && run.stdout.includes("\\udb40\\udc41"));
      },
    );
  });
}

Deno.test("a workspace config's untrusted key reaches stderr escaped (adversarial)", async () => {
  const config = JSON.stringify({ [`x${OSC52}\u202e`]: 1 });
  await oneShotRun({ files: { ...files, ".bravebot/config.json": config }, replies: [] }, (run) => {
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.mock.requests.length, 0);
    assertNothingRaw(run.stderr, "stderr");
    assert.match(run.stderr, /unknown field 'x⟦U\+001B⟧\]52;c;cm0gLXJmIH4=⟦U\+0007⟧⟦U\+202E⟧'/);
  });
});
