/**
 * Bound policy-file entries (docs/cli.md#run; docs/contract.md §8.3): compared by resolved program,
 * arguments exact or by prefix, and a workspace program's bytes at the run's start.
 */
import assert from "node:assert/strict";
import { type BoundRule, ruleMatch, rulesMatch } from "./command_rules.ts";

const git = (match: "exact" | "prefix", args: string[]): BoundRule => ({
  match,
  written: "git",
  program: "/usr/bin/git",
  sha256: null,
  args,
});

Deno.test("command rules: argv entries match exactly; prefix entries the program and first args", () => {
  const stage = (args: string[]) => ({ resolved: "/usr/bin/git", args, sha256: null });
  assert.equal(ruleMatch(git("exact", ["status"]), stage(["status"])), "covers");
  assert.equal(ruleMatch(git("exact", ["status"]), stage(["status", "-s"])), "no");
  assert.equal(ruleMatch(git("exact", ["status"]), stage([])), "no");
  assert.equal(ruleMatch(git("prefix", ["diff"]), stage(["diff"])), "covers");
  assert.equal(ruleMatch(git("prefix", ["diff"]), stage(["diff", "--stat"])), "covers");
  assert.equal(ruleMatch(git("prefix", ["diff"]), stage(["difftool"])), "no");
  assert.equal(ruleMatch(git("prefix", ["diff"]), stage(["log", "diff"])), "no");
});

Deno.test("command rules: another program of the same name is not covered", () => {
  const rule = git("prefix", []);
  assert.equal(ruleMatch(rule, { resolved: "/ws/git", args: [], sha256: "a".repeat(64) }), "no");
});

Deno.test("command rules: a workspace program changed since the start is 'changed', not covered", () => {
  const rule: BoundRule = {
    match: "exact",
    written: "./b.sh",
    program: "/ws/b.sh",
    sha256: "a".repeat(64),
    args: [],
  };
  const now = (sha256: string) => ({ resolved: "/ws/b.sh", args: [], sha256 });
  assert.equal(ruleMatch(rule, now("a".repeat(64))), "covers");
  assert.equal(ruleMatch(rule, now("b".repeat(64))), "changed");
  assert.equal(rulesMatch([rule, git("exact", [])], now("b".repeat(64))), "changed");
  assert.equal(rulesMatch([], now("b".repeat(64))), "no");
});
