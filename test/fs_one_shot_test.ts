/**
 * The filesystem tools through the real program in one-shot mode: the approval policy file's
 * `writes` globs are matched against the destination a path_ref resolves to, and the decision
 * line printed for it names that destination while the planner is shown only the reference.
 */
import assert from "node:assert/strict";
import { oneShotRun } from "./support/one_shot_fixture.ts";
import type { MockReply } from "../scripts/mock-model.ts";

const files = {
  "src/main.ts": "export {};\n",
  "vendor/HIDDEN-NAME.txt": "old\n",
  "vendor/OTHER-NAME.txt": "other\n",
};

Deno.test("one-shot: a path_ref write pre-approved by a writes glob prints the real destination; the planner sees the reference", async () => {
  const replies: MockReply[] = [
    { tool_calls: [{ name: "list_files", arguments: { directory: "vendor" } }] },
    { tool_calls: [{ name: "write_file", arguments: { path_ref: "ref:0", contents: "new\n" } }] },
    { tool_calls: [{ name: "write_file", arguments: { path_ref: "ref:1", contents: "x\n" } }] },
    { text: "done" },
  ];
  await oneShotRun({
    files,
    replies,
    approvals: { trust: ["src/"], untrust: ["vendor/"], writes: ["vendor/HIDDEN-*"] },
    args: ["--output-format", "stream-json"],
  }, async (run) => {
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const results = events.filter((e) => e.type === "tool_result");
    assert.equal(results.length, 3);
    for (const r of results) assert.doesNotMatch(JSON.stringify(r), /HIDDEN|OTHER/);
    assert.match(results[1].content, /^overwrote ref:0: 4 bytes, 1 line$/);
    assert.match(results[2].content, /refused/);
    const decisions = events.filter((e) => e.type === "decision" && e.tool === "write_file");
    assert.ok(
      decisions.some((d) =>
        d.decision === "write approved" && d.routing.path === "vendor/HIDDEN-NAME.txt"
      ),
      JSON.stringify(decisions),
    );
    assert.ok(
      decisions.some((d) =>
        d.decision === "write refused" && d.routing.path === "vendor/OTHER-NAME.txt"
      ),
    );
    assert.equal(await run.read("vendor/HIDDEN-NAME.txt"), "new\n");
    assert.equal(await run.read("vendor/OTHER-NAME.txt"), "other\n");
    // Nothing the planner was sent names the hidden files.
    for (const req of run.mock.requests) {
      assert.doesNotMatch(JSON.stringify(req.body), /HIDDEN|OTHER/);
    }
  });
});
