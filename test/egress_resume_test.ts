/**
 * The egress rule holds when a conversation is sent again (docs/contract.md §3.4): a session whose
 * private tool result went to a local endpoint, resumed with an endpoint not marked local, does
 * not send that result on — nobody can allow it in one-shot mode — and the planner is told it
 * was kept back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import { runMain } from "./support/run_main.ts";
import { startMockModel } from "../scripts/mock-model.ts";

const SECRET = "TOKEN=PRIVATE-c71e-resume";

Deno.test("--resume with an endpoint not marked local: the stored private result is not sent", async () => {
  await oneShotRun({
    files: { "src/.env": `${SECRET}\n` },
    approvals: { trust: ["src/"] },
    replies: [
      { tool_calls: [{ name: "read_file", arguments: { path: "src/.env" } }] },
      { text: "read it" },
    ],
    args: ["--output-format", "stream-json"],
  }, async (first) => {
    assert.equal(first.code, 0, first.stderr);
    // The first session's endpoint is local (loopback): the result was sent, and stored.
    assert.ok(first.mock.requests[1].raw.includes(SECRET));
    const session = first.stdout.trim().split("\n").map((l) => JSON.parse(l))
      .find((e) => e.type === "final").session as string;

    const remoteConfig = join(first.stateDir, "remote.json");
    await Deno.writeTextFile(remoteConfig, JSON.stringify({ endpointLocal: false }));
    const mock = await startMockModel({ script: { replies: [{ text: "second answer" }] } });
    try {
      const r = await runMain([
        "-p",
        "what did it say?",
        "--resume",
        session,
        "-w",
        first.root,
        "--state-dir",
        join(first.stateDir, "state"),
        "--config",
        remoteConfig,
        "--endpoint",
        mock.url,
        "--model",
        "m",
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(mock.requests.length, 1);
      const sent = mock.requests[0].raw;
      assert.ok(!sent.includes(SECRET), "the stored private result was sent to a remote endpoint");
      assert.match(sent, /the result is private and the planner endpoint is not marked local/);
      assert.match(sent, /what did it say\?/);
    } finally {
      await mock.stop();
    }
  });
});
