/**
 * read_output as an assertion (docs/contract.md §16) through the real policy layer and effect
 * worker: the policy file's shapes assert in their canonical form, at most 16 a run; an output that
 * matches none asks, or is declined where nobody can be asked, with nothing of it in the
 * reason; the person's question shows the exact bytes and what fed the run; an assertion
 * relabels nothing, is recorded without its bytes, and stands as a past decision.
 */
import assert from "node:assert/strict";
import { refOf, type RunFixture, withRunPolicy } from "./support/run_fixture.ts";
import { runTool } from "../src/tools/run.ts";
import { readOutputTool } from "../src/tools/read_output.ts";
import type { ToolDef } from "../src/tools/tool.ts";
import { TRUSTED_PRIVATE, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../src/util/label.ts";
import { PolicyFilePerson } from "../src/person/policy_file.ts";
import type { ApprovalsFile } from "../src/policy/approvals_file.ts";
import { MAX_SHAPE_ASSERTIONS, type Shape, SHAPES } from "../src/policy/shapes.ts";
import { showToPerson } from "../src/policy/show.ts";
import { NEAR_MISS_SHAPES, NEAR_MISSES } from "./support/near_misses.ts";

const run = runTool as unknown as ToolDef<never>;
const readOutput = readOutputTool as unknown as ToolDef<never>;

/** A one-shot policy file running printf and cat unasked, asserting by `shapes`. */
function oneShot(shapes: readonly Shape[]): ApprovalsFile {
  return {
    run: [{ prefix: ["printf"] }, { argv: ["cat"] }],
    readOutput: shapes.map((answer) => ({ answer })),
  };
}

/** Runs `printf %s TEXT` and returns the output's reference. */
async function printed(fx: RunFixture, text: string): Promise<string> {
  const out = await fx.call(run, { pipeline: [{ program: "printf", args: ["%s", text] }] });
  assert.equal(out.isError, false, out.content);
  return `ref:${refOf(out)}`;
}

Deno.test("read_output: each shape asserts its output in the canonical form, (T,priv); the reference stays U", async () => {
  const approvals = oneShot(SHAPES);
  await withRunPolicy({ approvals, person: new PolicyFilePerson(approvals) }, async (fx) => {
    const cases: [string, string, Shape][] = [
      ["3.1.4\n", "3.1.4", "version"],
      ["YES\n", "yes", "yes-no"],
      ["C\n", "C", "letter"],
      ["-0042\n", "-42", "integer"],
      ["DEADBEEF99\n", "deadbeef99", "hex"],
    ];
    for (const [text, shown, shape] of cases) {
      const ref = await printed(fx, text);
      const out = await fx.call(readOutput, { ref });
      assert.equal(out.isError, false, out.content);
      assert.equal(out.content.split("\n---\n")[1], shown, out.content);
      assert.match(out.content, new RegExp(`readOutput shape ${shape}`));
      assert.deepEqual(out.label, TRUSTED_PRIVATE, "trusted, its confidentiality kept");
      assert.deepEqual(out.asserted, { ref, by: "policy-file", shape });
      const found = fx.policy.refs.lookup(ref);
      assert.ok(found.ok);
      assert.equal(found.value.label.integrity, "U", "an assertion relabels nothing");
      const entry = fx.policy.audit.entries.at(-1)!;
      assert.equal(entry.shape, shape);
      assert.equal(entry.by, "policy-file");
      const written = JSON.stringify(entry);
      assert.ok(
        !written.includes(JSON.stringify(shown)),
        `no bytes in the audit entry: ${written}`,
      );
    }
  });
});

Deno.test("read_output: an output that matches no shape is declined in one-shot, saying nothing of it", async () => {
  const approvals = oneShot(NEAR_MISS_SHAPES);
  await withRunPolicy({ approvals, person: new PolicyFilePerson(approvals) }, async (fx) => {
    const reasons = new Set<string>();
    for (const text of NEAR_MISSES) {
      const out = await fx.call(readOutput, { ref: await printed(fx, text) });
      assert.equal(out.isError, true, out.content);
      assert.match(out.content, /matched no readOutput shape/);
      assert.deepEqual(out.label, TRUSTED_PUBLIC);
      reasons.add(out.content);
    }
    assert.equal(reasons.size, 1, "every miss reads the same: nothing of its bytes");
    assert.equal(fx.policy.refs.assertedByShapeThisRun(), 0);
  });
});

Deno.test("read_output: past 16 assertions by shape a run, the 17th asks (and is declined where nobody can be)", async () => {
  const approvals = oneShot(["integer"]);
  await withRunPolicy({ approvals, person: new PolicyFilePerson(approvals) }, async (fx) => {
    for (let i = 0; i < MAX_SHAPE_ASSERTIONS; i++) {
      const out = await fx.call(readOutput, { ref: await printed(fx, `${i}\n`) });
      assert.equal(out.isError, false, `assertion ${i + 1}: ${out.content}`);
    }
    const first = `ref:${fx.policy.refs.all().find((r) => r.kind === "command_output")!.id}`;
    const again = await fx.call(readOutput, { ref: first });
    assert.equal(again.isError, false, "an output asserted already is a past decision");
    assert.match(again.content, /\(earlier\)/);
    const over = await fx.call(readOutput, { ref: await printed(fx, "17\n") });
    assert.equal(over.isError, true);
    assert.match(over.content, /16 outputs were asserted by shape in this run/);
    assert.ok(!over.content.includes("17"), over.content);
  });
  // In a session the 17th is put to the person, who sees it.
  await withRunPolicy({
    approvals,
    // The file's run entries run printf unasked; only the 17th output is asked about.
    answers: [{ readOutput: { approved: true } }],
  }, async (fx) => {
    for (let i = 0; i < MAX_SHAPE_ASSERTIONS; i++) {
      await fx.call(readOutput, { ref: await printed(fx, `${i}\n`) });
    }
    assert.equal(fx.scripted!.asked.filter((a) => a.kind === "readOutput").length, 0);
    const over = await fx.call(readOutput, { ref: await printed(fx, "17\n") });
    assert.equal(over.isError, false, over.content);
    assert.match(over.content, /asserted by the person/);
    const asked = fx.scripted!.asked.filter((a) => a.kind === "readOutput");
    assert.equal(asked.length, 1);
  });
});

Deno.test("read_output: the person sees the exact bytes and what fed the run, and their refusal says only why", async () => {
  await withRunPolicy({
    trust: { ".": true, vendor: false },
    answers: [
      { run: { answer: "once" } },
      { readOutput: { approved: false, reason: "that is not the version" } },
      { readOutput: { approved: true } },
    ],
  }, async (fx) => {
    const answer = await fx.policy.refs.add({
      kind: "processor_answer",
      label: UNTRUSTED_PUBLIC,
      about: "vendor/tinypad/package.json",
      tool: "spawn_processor",
    }, new TextEncoder().encode("3.1.4\t\r\n"));
    const out = await fx.call(run, {
      pipeline: [{ program: "cat" }],
      stdin: `ref:${answer.id}`,
    });
    const ref = `ref:${refOf(out)}`;
    const refused = await fx.call(readOutput, { ref });
    assert.equal(refused.isError, true);
    assert.equal(refused.content, "error: the person declined to show it: that is not the version");
    const asked = fx.scripted!.asked.find((a) => a.kind === "readOutput");
    assert.ok(asked && asked.kind === "readOutput");
    assert.equal(
      asked.request.stdin,
      `processor answer about vendor/tinypad/package.json (ref:${answer.id})`,
    );
    assert.deepEqual(asked.request.lines, ["3.1.4⟦U+0009⟧⟦U+000D⟧"], "a tab and a CR are marked");
    assert.equal(asked.request.finalNewline, true);
    assert.equal(asked.request.size, 8);
    const agreed = await fx.call(readOutput, { ref });
    assert.equal(agreed.isError, false);
    assert.equal(agreed.content.split("\n---\n")[1], "3.1.4\t\r\n", "the bytes as they are");
    assert.deepEqual(agreed.asserted, { ref, by: "person", shape: null });
    const entry = fx.policy.audit.entries.at(-1)!;
    assert.deepEqual([entry.decision, entry.by, entry.shape], [
      "asserted by the person",
      "person",
      undefined,
    ]);
    assert.ok(!JSON.stringify(entry).includes("3.1.4"));
    // /show marks it asserted, by whom; the reference is still untrusted.
    const shown = await showToPerson(fx.policy, ref, 10);
    assert.ok(shown.ok);
    assert.equal(shown.value.asserted, "asserted by the person");
    assert.equal(shown.value.label.integrity, "U");
    // Asked again, it is a past decision: shown, not asked.
    const again = await fx.call(readOutput, { ref });
    assert.match(again.content, /asserted by the person \(earlier\)/);
    assert.equal(fx.scripted!.asked.filter((a) => a.kind === "readOutput").length, 2);
  });
});

Deno.test("read_output: readOutput true asserts every output, by the policy file", async () => {
  const approvals: ApprovalsFile = { run: [{ prefix: ["printf"] }], readOutput: true };
  await withRunPolicy({ approvals, person: new PolicyFilePerson(approvals) }, async (fx) => {
    const out = await fx.call(readOutput, { ref: await printed(fx, "any words at all\n") });
    assert.equal(out.isError, false);
    assert.match(out.content, /readOutput: true/);
    assert.match(out.content, /any words at all/);
    assert.equal(fx.policy.refs.assertedByShapeThisRun(), 0, "not counted against the shapes");
  });
});
