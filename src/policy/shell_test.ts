/**
 * Shell mode (docs/contract.md §9): `!cmd` runs through the person's shell in the workspace with no
 * approval; its output reaches the planner only as a (U,priv) reference, unless the person
 * typed `!!`, which hands it over as their own words (T,priv).
 */
import assert from "node:assert/strict";
import { withRunPolicy } from "../../test/support/run_fixture.ts";
import { parseShellLine, runShellLine } from "./shell.ts";
import { TRUSTED_PRIVATE, UNTRUSTED_PRIVATE } from "../util/label.ts";

Deno.test("shell mode: lines starting with ! and !! are shell lines, others are messages", () => {
  assert.deepEqual(parseShellLine("!ls -la"), { mode: "ref", command: "ls -la" });
  assert.deepEqual(parseShellLine("!!git status"), { mode: "words", command: "git status" });
  assert.equal(parseShellLine("hello !not"), null);
  assert.equal(parseShellLine(" !ls"), null);
  assert.deepEqual(parseShellLine("!"), { mode: "ref", command: "" });
});

Deno.test("shell mode: !cmd shows the person the output and hands the planner a (U,priv) reference", async () => {
  await withRunPolicy({}, async (fx) => {
    const line = parseShellLine("!echo CANARY-shell | tr a-z A-Z; pwd")!;
    const r = await runShellLine(fx.policy, fx.settings, line);
    assert.ok(r.ok, !r.ok ? r.error : "");
    const o = r.value;
    assert.ok(o.display.includes("CANARY-SHELL"), "the person sees it, through a real shell");
    assert.ok(o.display.includes(fx.root), "it ran in the workspace");
    assert.ok(!o.forPlanner.text.includes("CANARY-SHELL"), "the planner does not");
    assert.ok(!o.forPlanner.text.includes(fx.root), "nor any other output");
    assert.match(o.forPlanner.text, new RegExp(`ref:${o.ref!.id}`));
    assert.deepEqual(o.forPlanner.label, TRUSTED_PRIVATE);
    assert.deepEqual(o.ref!.label, UNTRUSTED_PRIVATE);
    assert.equal(o.ref!.kind, "command_output");
    assert.equal(fx.scripted!.asked.length, 0, "no approval: it is the person's own command");
    // The person watched it print as it came, then its end; the screen need not print it again.
    assert.equal(o.watched, true);
    const events = fx.scripted!.runOutputs;
    const streamed = new TextDecoder().decode(
      new Uint8Array(events.flatMap((e) => e.kind === "chunk" ? [...e.bytes] : [])),
    );
    assert.ok(streamed.includes("CANARY-SHELL"), streamed);
    assert.equal(events.at(-1)?.kind, "end");
    const entry = fx.policy.audit.entries.at(-1)!;
    assert.equal(entry.tool, "shell");
    assert.equal(entry.by, "person");
  });
});

Deno.test("shell mode: !!cmd hands the output over as the person's own words (T,priv)", async () => {
  await withRunPolicy({}, async (fx) => {
    const r = await runShellLine(fx.policy, fx.settings, parseShellLine("!!echo CANARY-words")!);
    assert.ok(r.ok);
    assert.ok(r.value.forPlanner.text.includes("CANARY-words"));
    assert.deepEqual(r.value.forPlanner.label, TRUSTED_PRIVATE);
    assert.equal(r.value.ref, null);
    assert.equal(fx.policy.refs.size, 0);
  });
});

Deno.test("shell mode: the command gets no terminal on stdin, and the screen shows escapes", async () => {
  await withRunPolicy({}, async (fx) => {
    const r = await runShellLine(
      fx.policy,
      fx.settings,
      parseShellLine("!cat; printf 'a\\033[2Jb\\342\\200\\256c'")!,
      { shell: "/bin/sh" },
    );
    assert.ok(r.ok);
    assert.equal(r.value.shell, "/bin/sh");
    assert.ok(r.value.display.includes("a⟦U+001B⟧[2Jb⟦U+202E⟧c"), r.value.display);
    assert.match(r.value.status[0], /exit status 0/);
  });
});

Deno.test("shell mode: an empty command or a missing shell is a message, not a crash", async () => {
  await withRunPolicy({}, async (fx) => {
    const empty = await runShellLine(fx.policy, fx.settings, parseShellLine("!  ")!);
    assert.equal(empty.ok, false);
    const missing = await runShellLine(fx.policy, fx.settings, parseShellLine("!true")!, {
      shell: "/nonexistent/shell",
    });
    assert.equal(missing.ok, false);
    assert.match(!missing.ok ? missing.error : "", /could not start/);
  });
});
