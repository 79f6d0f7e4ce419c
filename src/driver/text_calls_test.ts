import assert from "node:assert/strict";
import fc from "fast-check";
import { findTextCalls, FORMATS } from "./text_calls.ts";

Deno.test("call-shaped JSON in text is found; the rest of the text is kept", () => {
  const f = findTextCalls(
    'Reading now.\n<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call>',
  );
  assert.deepEqual(f.calls, [{ name: "read_file", arguments: '{"path":"a"}' }]);
  assert.equal(f.rest, "Reading now.");
  const g = findTextCalls('{"name":"list_files","arguments":"{\\"directory\\":\\".\\"}"}');
  assert.deepEqual(g.calls, [{ name: "list_files", arguments: '{"directory":"."}' }]);
});

Deno.test("JSON that is data, not a call, is left alone", () => {
  for (
    const t of [
      '{"name": "pkg", "version": "1.0.0"}',
      '```json\n{"a": 1}\n```',
      'Call read_file with {"path": "x"}',
      "[]",
    ]
  ) {
    assert.deepEqual(findTextCalls(t).calls, [], t);
  }
});

Deno.test("any text is handled without throwing", () => {
  fc.assert(fc.property(fc.string(), (s) => {
    const f = findTextCalls(s);
    return Array.isArray(f.calls) && typeof f.rest === "string";
  }));
});

type Calls = { name: string; arguments: string }[];

/**
 * The calls `body` is as a whole (what the scanner's callsIn decides): a body that starts with
 * `{` or `[` keeps that character in the rest unless it parsed whole.
 */
function wholeCalls(body: string): Calls | null {
  if (!body.startsWith("{") && !body.startsWith("[")) return null;
  const found = findTextCalls(body);
  return found.calls.length && found.rest === "" ? found.calls : null;
}

/** The regular-expression recovery the scanner replaced, kept as the meaning to agree with. */
function byRegex(text: string): { calls: Calls; rest: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { calls: [], rest: text };
  const whole = wholeCalls(trimmed);
  if (whole) return { calls: whole, rest: "" };
  for (
    const pattern of [
      /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g,
      /```(?:json|tool_call|tool)?[ \t]*\n([\s\S]*?)\n?```/g,
    ]
  ) {
    const calls: Calls = [];
    const rest = text.replace(pattern, (match, body: string) => {
      const found = wholeCalls(body.trim());
      if (!found) return match;
      calls.push(...found);
      return "";
    });
    if (calls.length) return { calls, rest: rest.trim() };
  }
  return { calls: [], rest: text };
}

/** Pieces that make text-call recovery work hard or choose: every format's markers, and JSON. */
const PIECES = [
  ...FORMATS.flatMap((f) => f.markers),
  "```tool_call\n",
  "\n",
  " ",
  "\t",
  "x",
  "`",
  "{",
  "}",
  "[",
  "]",
  '"',
  '{"name":"a"}',
  '{"name":"b","arguments":{"k":[1]}}',
  '[{"name":"c","args":"{}"}]',
  '{"name":"pkg","version":"1"}',
];

Deno.test("the scanner recovers exactly what the regular expressions did", () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }), (pieces) => {
      const text = pieces.join("");
      assert.deepEqual(findTextCalls(text), byRegex(text), JSON.stringify(text));
    }),
    { numRuns: 3000 },
  );
});

/** Hostile replies of about `n` pieces each: openers, closers, braces, fences, bare JSON. */
function hostile(n: number): Record<string, string> {
  const shapes: Record<string, string> = {
    "unclosed openers": "<tool_call>".repeat(n),
    "closers only": "</tool_call>".repeat(n),
    "openers then one call": "<tool_call>".repeat(n) +
      '<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call>',
    "opener and whitespace": "<tool_call>" + " \n\t".repeat(n),
    "opener and open braces": "<tool_call>" + "{".repeat(n),
    "openers with braces": '<tool_call>{"name":"a","arguments":{'.repeat(n),
    "empty tag pairs": "<tool_call></tool_call>".repeat(n),
    "deep arrays as arguments": '{"name":"a","arguments":{"x":' + "[".repeat(n) +
      "]".repeat(n) + "}}",
    "unbalanced bare JSON": "{".repeat(n) + "}".repeat(n - 1),
    "fences without newlines": "```json ".repeat(n),
    "fence and blanks": "```" + " \t".repeat(n),
    "backticks": "`".repeat(n),
    "fence then openers": "```json\n" + "<tool_call>```".repeat(n),
  };
  for (const f of FORMATS) {
    for (const m of f.markers) shapes[`${f.name}: ${JSON.stringify(m)} repeated`] = m.repeat(n);
  }
  return shapes;
}

Deno.test("recovery examines each character a bounded number of times, whatever the shape", () => {
  // Linear: steps per character stay under one constant, at 60,000 openers as at 600. The
  // regular expressions retried from every opener (25 s for 60,000); speed is for the bench.
  for (const n of [600, 60_000]) {
    for (const [shape, text] of Object.entries(hostile(n))) {
      const meter = { steps: 0 };
      const found = findTextCalls(text, meter);
      assert.ok(Array.isArray(found.calls), shape);
      assert.ok(
        meter.steps <= 12 * text.length + 100,
        `${shape} (n=${n}): ${meter.steps} steps for ${text.length} characters`,
      );
    }
  }
});

Deno.test("60,000 unclosed openers are handled: no call, the text kept", () => {
  const text = "<tool_call>".repeat(60_000) + "and then prose";
  const found = findTextCalls(text);
  assert.deepEqual(found.calls, []);
  assert.equal(found.rest, text);
  const tail = findTextCalls(
    "<tool_call>".repeat(60_000) + '\n```json\n{"name":"read_file"}\n```',
  );
  assert.deepEqual(tail.calls, [{ name: "read_file", arguments: "{}" }]);
});
