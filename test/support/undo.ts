/** Taking changes back in tests (issue 27): `/undo N` as the session does it, without a screen. */
import assert from "node:assert/strict";
import type {
  ChangeRecords,
  FileLabels,
  Recording,
  WorkspaceFiles,
} from "../../src/policy/capabilities.ts";
import { applyUndo, planUndo } from "../../src/policy/undo.ts";
import { withPolicy } from "./policy_fixture.ts";

/** Plans the undo of the last `n` changes and, when it can be, applies it. */
export async function undo(
  policy: ChangeRecords & FileLabels & Recording & WorkspaceFiles,
  n = 1,
) {
  const plan = await planUndo(policy, n);
  if (!plan.ok) return plan;
  return await applyUndo(policy, plan.value);
}

/**
 * A resumed session (its folder `sessionDir` opened again) on a workspace holding `files`: undoes
 * the last change and checks that each file of `expect` holds what it says.
 */
export async function undoResumed(
  sessionDir: string,
  files: Record<string, string>,
  expect: Record<string, string>,
): Promise<void> {
  await withPolicy({ files, trust: { ".": true }, sessionDir }, async (fx) => {
    const done = await undo(fx.policy);
    assert.ok(done.ok, done.ok ? "" : done.error);
    for (const [rel, text] of Object.entries(expect)) assert.equal(await fx.read(rel), text);
  });
}

/**
 * The undo of the last change, where it must be refused: planned and, if the plan went ahead,
 * applied. Answers the refusal the person is shown, from whichever step refused.
 */
export async function undoRefused(
  policy: ChangeRecords & FileLabels & Recording & WorkspaceFiles,
): Promise<string> {
  const done = await undo(policy);
  assert.ok(!done.ok, "the undo went ahead");
  return done.error;
}
