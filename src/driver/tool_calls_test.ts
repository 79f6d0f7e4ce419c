import assert from "node:assert/strict";
import { z } from "zod";
import {
  checkCall,
  keepCalls,
  MAX_ARGUMENT_BYTES,
  type PlannerCall,
  readArguments,
  readReply,
  withDroppedNote,
} from "./tool_calls.ts";
import { defineTool, shown, type ToolDef } from "../tools/tool.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";

const read = defineTool({
  name: "read_file",
  description: "reads",
  routing: z.strictObject({ path: z.string() }),
  content: z.strictObject({ offset: z.number().int().optional() }),
  handler: () => Promise.resolve(shown("", TRUSTED_PUBLIC)),
}) as ToolDef<unknown>;

const call = (id: string, name: string, args: string): PlannerCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

Deno.test("tool calls: at most the cap are kept, each with an id, a name and arguments of its own", () => {
  const big = "x".repeat(MAX_ARGUMENT_BYTES + 1);
  const { kept, dropped } = keepCalls(
    [call("a", "read_file", "{}"), call("a", "", big), call("b", "search", "{}")],
    2,
  );
  assert.equal(dropped, 1);
  assert.deepEqual(kept.map((c) => c.id), ["a", "a_1"]);
  assert.deepEqual(kept.map((c) => c.function.name), ["read_file", "(no name)"]);
  assert.equal(kept[1].function.arguments, "{}", "oversized arguments are not kept");
  assert.equal(kept[1].original.function.arguments, big, "the call as sent is still known");
  const noted = withDroppedNote(shown("done", TRUSTED_PUBLIC), 3, 2);
  assert.match(noted.content, /^done\n\[note: the reply asked for 3 tool calls; .* other 1 were/);
});

Deno.test("tool calls: arguments are read as one JSON object, or refused with why", () => {
  const cases: [string, unknown, RegExp | null][] = [
    ["", {}, null],
    ['{"path":"a"}', { path: "a" }, null],
    ['"{\\"path\\":\\"a\\"}"', { path: "a" }, null],
    ["[1]", "[1]", /not a list/],
    ["{nope", "{nope", /not valid JSON/],
  ];
  for (const [raw, value, error] of cases) {
    const got = readArguments(raw);
    assert.deepEqual(got.value, value, raw);
    if (error) assert.match(got.error ?? "", error, raw);
    else assert.equal(got.error, null, raw);
  }
  const big = readArguments("y".repeat(MAX_ARGUMENT_BYTES + 1));
  assert.match(big.error ?? "", /more than the 1048576 bytes a call may carry/);
  assert.equal((big.shown as string).length, 2000, "the person is shown only its start");
});

Deno.test("tool calls: each way a call is wrong is an error result naming what to fix", () => {
  const tools = [read];
  const cases: [string, string, RegExp][] = [
    ["nope", "{}", /^error: there is no tool named 'nope'; the tools are: read_file$/],
    ["", "{}", /^error: the tool call has no name; the tools are: read_file$/],
    ["read_file", "{oops", /^error: read_file: the arguments are not valid JSON/],
    ["read_file", '{"paht":"a"}', /^error: read_file: .*unknown field 'paht'; the accepted fields/],
    ["read_file", "{}", /^error: read_file: path: required/],
  ];
  for (const [name, raw, want] of cases) {
    const checked = checkCall(name, readArguments(raw), tools);
    assert.equal(checked.ok, false, `${name} ${raw}`);
    if (!checked.ok) {
      assert.match(checked.error.content, want);
      assert.equal(checked.error.isError, true);
    }
  }
  const good = checkCall("read_file", readArguments('{"path":"a","offset":2}'), tools);
  assert.ok(good.ok);
  if (good.ok) assert.deepEqual(good.args, { path: "a", offset: 2 });
});

Deno.test("tool calls: calls written as text are recovered with ids of their own, and said", () => {
  const notices: string[] = [];
  const got = readReply(
    {
      text: '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>',
      toolCalls: [],
      finishReason: "length",
      problems: ["a call had no id"],
    },
    () => undefined,
    7,
    (n) => notices.push(n),
  );
  assert.deepEqual(got.calls.map((c) => [c.id, c.function.name, c.fromText]), [
    ["text_call_7_0", "read_file", true],
  ]);
  assert.deepEqual(JSON.parse(got.calls[0].function.arguments), { path: "a" });
  assert.deepEqual(notices, [
    "the planner's reply was cut off at the model's output limit",
    "the planner's reply: a call had no id",
    "the planner wrote 1 tool call as text; handled as calls",
  ]);
});
