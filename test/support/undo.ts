/** Taking changes back in tests (issue 27): `/undo N` as the session does it, without a screen. */
import assert from "node:assert/strict";
import type { Policy } from "../../src/policy/core.ts";
import type { ChangeLog } from "../../src/policy/change_log.ts";
import { applyUndo, planUndo } from "../../src/policy/undo.ts";
import { withPolicy } from "./policy_fixture.ts";

/** Plans the undo of the last `n` changes and, when it can be, applies it. */
export async function undo(policy: Policy, n = 1) {
  const plan = await planUndo(policy, n);
  if (!plan.ok) return plan;
  return await applyUndo(policy, plan.value);
}

/**
 * A resumed session (its change log opened again) on a workspace holding `files`: undoes the
 * last change and checks that each file of `expect` holds what it says.
 */
export async function undoResumed(
  changes: ChangeLog,
  files: Record<string, string>,
  expect: Record<string, string>,
): Promise<void> {
  await withPolicy({ files, trust: { ".": true }, changes }, async (fx) => {
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    for (const [rel, text] of Object.entries(expect)) assert.equal(await fx.read(rel), text);
  });
}
