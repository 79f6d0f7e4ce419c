import assert from "node:assert/strict";
import fc from "fast-check";
import { findTextCalls } from "./text_calls.ts";

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
