/** Shaping a command's output: the reference's bytes, the capped text, the metadata lines. */
import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  combineOutput,
  countLines,
  decodeOutput,
  evaluateReadOutput,
  headTail,
  type ReadOutputFacts,
  statusLines,
  stopLine,
} from "./outputs.ts";
import type { SpawnResult } from "../worker/protocol.ts";
import type { RefRecord } from "./refs.ts";
import { MAX_SHAPE_ASSERTIONS } from "./shapes.ts";
import { answeredWith, auditEntryOf } from "./verdict.ts";
import type { Approval } from "../person/person.ts";
import { sha256 } from "../util/hash.ts";
import {
  type Label,
  label,
  TRUSTED_PRIVATE,
  UNTRUSTED_PRIVATE,
  UNTRUSTED_PUBLIC,
} from "../util/label.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("output: stdout whole first, then a marker and stderr, cut at the cap", () => {
  assert.equal(dec(combineOutput(enc("out"), enc(""), 100).bytes), "out");
  assert.equal(dec(combineOutput(enc("out"), enc("err\n"), 100).bytes), "out\n[stderr]\nerr\n");
  assert.equal(dec(combineOutput(enc(""), enc("err"), 100).bytes), "[stderr]\nerr");
  const cut = combineOutput(enc("0123456789"), enc("e"), 4);
  assert.deepEqual([dec(cut.bytes), cut.cut], ["0123", true]);
  fc.assert(fc.property(fc.uint8Array(), fc.uint8Array(), fc.nat(64), (o, e, cap) => {
    const c = combineOutput(o, e, cap);
    return c.bytes.length <= cap && c.bytes.every((b, i) => i >= o.length || b === o[i]);
  }));
});

Deno.test("output: head and tail within the cap, with a marker naming what was left out", () => {
  assert.deepEqual(headTail("short", 10), { text: "short", omitted: 0 });
  const long = "H".repeat(50) + "M".repeat(100) + "T".repeat(50);
  const r = headTail(long, 100);
  assert.equal(r.omitted, 100);
  assert.ok(r.text.startsWith("H".repeat(50)));
  assert.ok(r.text.endsWith("T".repeat(50)));
  assert.ok(!r.text.includes("M"));
  assert.match(r.text, /100 characters left out/);
  fc.assert(fc.property(fc.string({ maxLength: 300 }), fc.integer({ min: 2, max: 200 }), (s, n) => {
    const h = headTail(s, n);
    return s.length <= n ? h.text === s : h.omitted === s.length - n && h.text.length < n + 60;
  }));
});

Deno.test("output: invalid UTF-8 is decoded with replacements and reported", () => {
  assert.deepEqual(decodeOutput(enc("fine")), { text: "fine", utf8: true });
  const bad = decodeOutput(new Uint8Array([0x61, 0xff, 0x62]));
  assert.deepEqual(bad, { text: "a\uFFFDb", utf8: false });
});

Deno.test("output: lines are counted with or without a final newline", () => {
  assert.equal(countLines(enc("")), 0);
  assert.equal(countLines(enc("a")), 1);
  assert.equal(countLines(enc("a\nb\n")), 2);
  assert.equal(countLines(enc("a\nb")), 2);
});

Deno.test("output: status lines name the exit, signal, time, bytes, timeout and cut", () => {
  const result: SpawnResult = {
    stdout: new Uint8Array(),
    stderr: new Uint8Array(),
    code: null,
    signal: "SIGKILL",
    stages: [{ code: 0, signal: null }, { code: null, signal: "SIGKILL" }],
    durationMs: 1500,
    timedOut: true,
    truncated: true,
    stopSignals: [],
    stdoutBytes: 7,
    stderrBytes: 3,
  };
  const lines = statusLines(result, 2000, 16, { cut: true, utf8: false }).join("\n");
  assert.match(lines, /killed by SIGKILL \(stages: 0, SIGKILL\), 1\.50 s/);
  assert.match(lines, /stdout 7 bytes, stderr 3 bytes/);
  assert.match(lines, /timed out after 2 s/);
  assert.match(lines, /beyond 16 bytes was cut/);
  assert.match(lines, /not valid UTF-8/);
  assert.doesNotMatch(lines, /stopped by the person/);
});

Deno.test("output: a stop by the person says which signal ended the run and which were ignored", () => {
  assert.equal(stopLine([]), null);
  assert.equal(stopLine(["SIGINT"]), "stopped by the person: ended on SIGINT");
  assert.equal(
    stopLine(["SIGINT", "SIGTERM"]),
    "stopped by the person: ended on SIGTERM after it ignored SIGINT",
  );
  assert.equal(
    stopLine(["SIGINT", "SIGTERM", "SIGKILL"]),
    "stopped by the person: killed with SIGKILL after it ignored SIGINT and SIGTERM",
  );
  assert.equal(
    stopLine(["SIGINT", "SIGKILL"]),
    "stopped by the person: killed with SIGKILL after it ignored SIGINT",
  );
});

// ---- read_output as a pure evaluator ----

const output = (label: Label, extra: Partial<RefRecord> = {}): RefRecord => ({
  id: 4,
  kind: "command_output",
  label,
  hasBytes: true,
  command: "printf",
  tool: "run",
  ...extra,
});

function readFacts(over: Partial<ReadOutputFacts> = {}): ReadOutputFacts {
  return {
    ref: output(UNTRUSTED_PRIVATE),
    bytes: enc("3.1.4\n"),
    past: undefined,
    fedBy: "none (what the command read is named by its arguments)",
    file: { present: false, readOutputAll: false, shapes: [] },
    assertedByShape: 0,
    shownOutputChars: 1000,
    canAsk: true,
    asker: "person",
    ...over,
  };
}

Deno.test("evaluateReadOutput: who asserts what, what is shown, what is kept, what the line says", () => {
  const digest = sha256(enc("3.1.4\n"));
  const oneShot = { canAsk: false, asker: "policy-file" as const };
  const rows: {
    name: string;
    facts: ReadOutputFacts;
    answer?: Approval;
    /** The text shown, or the refusal's words. */
    shown?: string;
    refused?: string | RegExp;
    decision: string;
    by: string;
    shape?: string;
    kept?: { by: string; shape: string | null };
  }[] = [
    {
      name: "not a command's output: refused by the rule",
      facts: readFacts({
        ref: { id: 2, kind: "file", label: UNTRUSTED_PUBLIC, hasBytes: false, tool: "read_file" },
        bytes: null,
      }),
      refused: /^ref:2 is a quarantined file, and read_output shows only what a run printed/,
      decision: "refused",
      by: "rule",
    },
    {
      name: "a vouched command's output is trusted already",
      facts: readFacts({ ref: output(TRUSTED_PRIVATE), ...oneShot }),
      shown: "3.1.4\n",
      decision: "shown (already trusted)",
      by: "rule",
    },
    {
      name: "asserted earlier, the same bytes: a past decision, nothing kept",
      facts: readFacts({ past: { ref: 4, by: "person", shape: null, sha256: digest }, ...oneShot }),
      shown: "3.1.4\n",
      decision: "shown (asserted earlier by person)",
      by: "rule",
    },
    {
      name: "asserted earlier by a shape: shown in the canonical form",
      facts: readFacts({
        past: { ref: 4, by: "policy-file", shape: "version", sha256: digest },
        ...oneShot,
      }),
      shown: "3.1.4",
      decision: "shown (asserted earlier by policy-file)",
      by: "rule",
      shape: "version",
    },
    {
      name: "asserted earlier about other bytes: not a past decision for these",
      facts: readFacts({ past: { ref: 4, by: "person", shape: null, sha256: "0" }, ...oneShot }),
      refused: "not shown: nobody can be asked in a one-shot run",
      decision: "declined",
      by: "policy-file",
    },
    {
      name: "readOutput: true asserts it, and the assertion is kept",
      facts: readFacts({ file: { present: true, readOutputAll: true, shapes: [] }, ...oneShot }),
      shown: "3.1.4\n",
      decision: "asserted (policy file readOutput: true)",
      by: "policy-file",
      kept: { by: "policy-file", shape: null },
    },
    {
      name: "a shape asserts it in its canonical form",
      facts: readFacts({
        file: { present: true, readOutputAll: false, shapes: ["integer", "version"] },
        ...oneShot,
      }),
      shown: "3.1.4",
      decision: "asserted by shape version",
      by: "policy-file",
      shape: "version",
      kept: { by: "policy-file", shape: "version" },
    },
    {
      name: "no shape matches, one-shot: declined, saying nothing of the bytes",
      facts: readFacts({
        file: { present: true, readOutputAll: false, shapes: ["integer"] },
        ...oneShot,
      }),
      refused: /^not shown: the output matched no readOutput shape/,
      decision: "declined",
      by: "policy-file",
    },
    {
      name: "past the shapes' limit a run: declined before any match",
      facts: readFacts({
        file: { present: true, readOutputAll: false, shapes: ["version"] },
        assertedByShape: MAX_SHAPE_ASSERTIONS,
        ...oneShot,
      }),
      refused: /^not shown: 16 outputs were asserted by shape in this run/,
      decision: "declined",
      by: "policy-file",
    },
    {
      name: "a policy file without readOutput, one-shot: said so",
      facts: readFacts({ file: { present: true, readOutputAll: false, shapes: [] }, ...oneShot }),
      refused: "not shown: nobody can be asked in a one-shot run and the approval policy file " +
        "does not set readOutput",
      decision: "declined",
      by: "policy-file",
    },
    {
      name: "in a session past the limit, the person asserts it",
      facts: readFacts({
        file: { present: true, readOutputAll: false, shapes: ["version"] },
        assertedByShape: MAX_SHAPE_ASSERTIONS,
      }),
      answer: { approved: true },
      shown: "3.1.4\n",
      decision: "asserted by the person",
      by: "person",
      kept: { by: "person", shape: null },
    },
    {
      name: "the person declines, with their reason trimmed",
      facts: readFacts(),
      answer: { approved: false, reason: "  not the version " },
      refused: "the person declined to show it: not the version",
      decision: "refused",
      by: "person",
    },
    {
      name: "the person declines without a reason",
      facts: readFacts(),
      answer: { approved: false, reason: " " },
      refused: "the person declined to show it",
      decision: "refused",
      by: "person",
    },
  ];
  for (const row of rows) {
    const verdict = evaluateReadOutput(row.facts);
    assert.equal(verdict.kind === "ask", row.answer !== undefined, row.name);
    const settled = answeredWith(verdict, row.answer);
    const entry = auditEntryOf(settled)!;
    assert.deepEqual([entry.decision, entry.by, entry.shape], [row.decision, row.by, row.shape]);
    if (row.shown !== undefined) {
      assert.ok(settled.kind === "allow", row.name);
      assert.equal(settled.grants.text.text, row.shown, row.name);
      assert.deepEqual(settled.grants.label, label("T", row.facts.ref.label.confidentiality));
      assert.deepEqual(entry.labels, { ref: row.facts.ref.label, shown: settled.grants.label });
      assert.equal(entry.sha256, digest, row.name);
    } else {
      assert.ok(settled.kind === "refuse", row.name);
      if (typeof row.refused === "string") assert.equal(settled.refusal, row.refused, row.name);
      else assert.match(settled.refusal, row.refused!, row.name);
      assert.ok(!settled.refusal.includes("3.1.4"), `no bytes in the reason: ${row.name}`);
      assert.equal(entry.reason, settled.refusal, row.name);
    }
    assert.deepEqual(
      settled.keep,
      row.kept ? { ref: 4, ...row.kept, sha256: digest } : undefined,
      row.name,
    );
  }
});

Deno.test("evaluateReadOutput: the person is asked with the exact text, each line escaped, and what fed it", () => {
  const verdict = evaluateReadOutput(readFacts({
    ref: output(UNTRUSTED_PUBLIC, { stdin: 1, command: "cat" }),
    bytes: enc("a\tb\r\n\u202Ec\n"),
    fedBy: "processor answer about x.json (ref:1)",
  }));
  assert.ok(verdict.kind === "ask");
  assert.deepEqual(verdict.question, {
    ref: "ref:4",
    command: "cat",
    stdin: "processor answer about x.json (ref:1)",
    lines: ["a⟦U+0009⟧b⟦U+000D⟧", "⟦U+202E⟧c"],
    finalNewline: true,
    size: 10,
    omitted: 0,
    utf8: true,
    label: UNTRUSTED_PUBLIC,
  });
});
