/** Shaping a command's output: the reference's bytes, the capped text, the metadata lines. */
import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  combineOutput,
  countLines,
  decodeOutput,
  headTail,
  statusLines,
  stopLine,
} from "./outputs.ts";
import type { SpawnResult } from "../worker/protocol.ts";

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
