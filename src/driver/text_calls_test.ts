import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { findTextCalls, FORMATS, pythonLiteral, typedValue } from "./text_calls.ts";

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

/**
 * Pieces that make text-call recovery work hard or choose: the markers of the formats the
 * regular expressions knew (tags and fences; the newer formats have tests of their own), and
 * JSON.
 */
const PIECES = [
  "<tool_call>",
  "</tool_call>",
  "```",
  "```json\n",
  "```tool\n",
  "\n```",
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
      assert.deepEqual(
        findTextCalls(text),
        { ...byRegex(text), reasoning: [] },
        JSON.stringify(text),
      );
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
    "mistral lists never closed": "[TOOL_CALLS][".repeat(n),
    "mistral names never given arguments": "[TOOL_CALLS]read_file[ARGS]".repeat(n),
    "mistral arguments never closed": '[TOOL_CALLS]a[ARGS]{"k":'.repeat(n),
    "mistral calls": '[TOOL_CALLS]read_file[ARGS]{"path":"a"}'.repeat(n),
    "mistral ids": "[TOOL_CALLS]a[CALL_ID]".repeat(n),
    "python tags and braces": "<|python_tag|>{".repeat(n),
    "python tag calls joined": "<|python_tag|>" + '{"name":"a","parameters":{}};'.repeat(n),
    "bare llama calls joined": '{"name":"a","parameters":{}}; '.repeat(n),
    "qwen functions never closed": "<tool_call><function=a>" + "<parameter=p>".repeat(n) +
      "</tool_call>",
    "qwen parameters": "<tool_call><function=a>" + "<parameter=p>x</parameter>".repeat(n) +
      "</function></tool_call>",
    "python dict nesting": "<tool_call>" + "{'a': [".repeat(n) + "</tool_call>",
    "python strings": "<tool_call>{'a': '" + "\\'".repeat(n) + "'}</tool_call>",
    "think openers": "<think>".repeat(n),
    "think blocks": "<think></think>".repeat(n),
    "think closers": "</think>".repeat(n),
    "think then openers": "<think>x</think>" + "<tool_call>".repeat(n),
    "openers then a closer": "<think>".repeat(n) + "</think>" + "<tool_call>".repeat(n),
  };
  for (const f of FORMATS) {
    for (const m of f.markers) shapes[`${f.name}: ${JSON.stringify(m)} repeated`] = m.repeat(n);
  }
  return shapes;
}

Deno.test("recovery examines each character a bounded number of times, whatever the shape", () => {
  // Linear: steps per character stay under one constant, at 60,000 openers as at 600. The
  // regular expressions retried from every opener (25 s for 60,000); speed is for the bench.
  // (The constant grew from 12 to 16 with the formats: each is one more pass over the text.)
  for (const n of [600, 60_000]) {
    for (const [shape, text] of Object.entries(hostile(n))) {
      const meter = { steps: 0 };
      const found = findTextCalls(text, meter);
      assert.ok(Array.isArray(found.calls), shape);
      assert.ok(
        meter.steps <= 16 * text.length + 100,
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

// The formats of model servers as they are. Each fixture's comment names the upstream file whose
// parser or template defines the shape (the file's path in its repository); the fixtures are
// written here, not copied.

const READ_A = [{ name: "read_file", arguments: '{"path":"a.txt"}' }];

Deno.test("Llama 3.x: <|python_tag|> calls, with or without a type, several joined by ';'", () => {
  // vllm-project/vllm vllm/entrypoints/openai/tool_parsers/llama_tool_parser.py (the bot token,
  // "parameters" for "arguments", calls joined by ";")
  const typed = findTextCalls(
    '<|python_tag|>{"type": "function", "name": "read_file", "parameters": {"path": "a.txt"}}',
  );
  assert.deepEqual(typed, { calls: READ_A, rest: "", reasoning: [] });
  const two = findTextCalls(
    'Reading both.\n<|python_tag|>{"name": "read_file", "parameters": {"path": "a.txt"}}; ' +
      '{"name": "list_files", "parameters": {"directory": "."}}',
  );
  assert.deepEqual(two.calls, [...READ_A, {
    name: "list_files",
    arguments: '{"directory":"."}',
  }]);
  assert.equal(two.rest, "Reading both.");
  // The same without the tag (llama_tool_parser.py takes the bare JSON too).
  const bare = findTextCalls(
    '{"name": "read_file", "parameters": {"path": "a.txt"}}; {"name": "read_file", "parameters": {"path": "a.txt"}};',
  );
  assert.deepEqual(bare.calls, [...READ_A, ...READ_A]);
});

Deno.test("Mistral: [TOOL_CALLS] with a JSON list, and the newer name[ARGS]{…}, repeated", () => {
  // vllm-project/vllm vllm/entrypoints/openai/tool_parsers/mistral_tool_parser.py (pre-v11
  // tokenizers: a list with 9-character ids; v11 and later: the name outside the JSON)
  const list = findTextCalls(
    '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.txt"}, "id": "a1B2c3D4e"}]',
  );
  assert.deepEqual(list, { calls: READ_A, rest: "", reasoning: [] });
  const named = findTextCalls(
    'I will look.[TOOL_CALLS]read_file[ARGS]{"path": "a.txt"}[TOOL_CALLS]list_files[ARGS]{}',
  );
  assert.deepEqual(named.calls, [...READ_A, { name: "list_files", arguments: "{}" }]);
  assert.equal(named.rest, "I will look.");
  // The v11 form without [ARGS], and a call id before it (mistral_tool_parser.py).
  assert.deepEqual(findTextCalls('[TOOL_CALLS]read_file{"path": "a.txt"}').calls, READ_A);
  assert.deepEqual(
    findTextCalls('[TOOL_CALLS]read_file[CALL_ID]a1B2c3D4e[ARGS]{"path": "a.txt"}').calls,
    READ_A,
  );
});

Deno.test("Qwen3-Coder: <function=…> with raw parameter values, typed only by the schema", () => {
  // vllm-project/vllm vllm/entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py (one
  // newline after <parameter=…> and one before </parameter> are the markup's)
  const text =
    "Let me read it.\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/main.ts\n" +
    "</parameter>\n<parameter=offset>\n10\n</parameter>\n</function>\n</tool_call>";
  const untyped = findTextCalls(text);
  assert.deepEqual(untyped.calls, [{
    name: "read_file",
    arguments: '{"path":"src/main.ts","offset":"10"}',
  }]);
  assert.equal(untyped.rest, "Let me read it.");
  const paramType = (tool: string, param: string) =>
    tool === "read_file" ? (param === "offset" ? "integer" : "string") : undefined;
  assert.deepEqual(findTextCalls(text, undefined, { paramType }).calls, [{
    name: "read_file",
    arguments: '{"path":"src/main.ts","offset":10}',
  }]);
  // A multi-line value keeps its lines; a string parameter that looks like JSON stays a string.
  const write = findTextCalls(
    "<tool_call>\n<function=write_file>\n<parameter=path>\nx.json\n</parameter>\n" +
      '<parameter=content>\n{"a": 1}\n\nline 3\n</parameter>\n</function>\n</tool_call>',
    undefined,
    { paramType: () => "string" },
  );
  assert.deepEqual(JSON.parse(write.calls[0].arguments), {
    path: "x.json",
    content: '{"a": 1}\n\nline 3',
  });
  assert.equal(typedValue("12abc", "integer"), "12abc");
  assert.equal(typedValue(" true ", "boolean"), true);
  assert.equal(typedValue("yes", "boolean"), "yes");
  assert.deepEqual(typedValue("[1, 2]", "array"), [1, 2]);
  assert.equal(typedValue("{}", "array"), "{}");
});

Deno.test("Hermes with a Python dict: read as data by a strict literal parser", () => {
  // NousResearch/Hermes-Function-Calling prompt_assets/sys_prompt.yml (the prompt asks for
  // `{'arguments': <args-dict>, 'name': <function-name>}` inside <tool_call> tags)
  const f = findTextCalls(
    "<tool_call>\n{'arguments': {'path': 'a.txt'}, 'name': 'read_file'}\n</tool_call>",
  );
  assert.deepEqual(f, { calls: READ_A, rest: "", reasoning: [] });
  assert.deepEqual(
    pythonLiteral(`{'a': [1, -2.5, True, False, None], "b": 'it\\'s', 'c': {}, 'd': [],}`),
    { a: [1, -2.5, true, false, null], b: "it's", c: {}, d: [] },
  );
});

Deno.test("a Python dict with an expression in it is refused, never evaluated", () => {
  for (
    const body of [
      "{'arguments': {'path': __import__('os').system('rm -rf ~')}, 'name': 'read_file'}",
      "{'arguments': {'path': open('/etc/passwd').read()}, 'name': 'read_file'}",
      "{'arguments': {'path': 'a' + 'b'}, 'name': 'read_file'}",
      "{'arguments': {'path': 'a' 'b'}, 'name': 'read_file'}",
      "{'arguments': {'path': f'{x}'}, 'name': 'read_file'}",
      "{'arguments': {'n': 2**64}, 'name': 'read_file'}",
      "{'arguments': {'t': (1, 2)}, 'name': 'read_file'}",
      "{'arguments': {'s': {1, 2}}, 'name': 'read_file'}",
      "{'arguments': {'path': x}, 'name': 'read_file'}",
      "{'arguments': {'path': 'a'}, 'name': 'read_file'}; exit()",
      "{'arguments': {'path': 'a\\q'}, 'name': 'read_file'}",
    ]
  ) {
    assert.equal(pythonLiteral(body), undefined, body);
    const f = findTextCalls(`<tool_call>${body}</tool_call>`);
    assert.deepEqual(f.calls, [], body);
    assert.equal(f.rest, `<tool_call>${body}</tool_call>`);
  }
  assert.equal(pythonLiteral("[".repeat(100) + "]".repeat(100)), undefined, "too deep");
});

Deno.test("prose that only mentions a marker, and unbalanced markup, are not calls", () => {
  for (
    const text of [
      "The model writes [TOOL_CALLS] when it wants a tool, then the calls.",
      "Mistral's [TOOL_CALLS] [see the docs] marker.",
      "Llama writes <|python_tag|> before a call.",
      "Use <|python_tag|>{ in the template",
      "[TOOL_CALLS]read_file[ARGS] is how the call starts",
      '[TOOL_CALLS]read_file[ARGS]{"path": "a.txt"',
      '[TOOL_CALLS][{"name": "read_file", "arguments": {}}',
      '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.txt"}',
      "<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</function>\n</tool_call>",
      "<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</tool_call>",
      "<tool_call>\n<function=read_file>\n<parameter=path>a</parameter>\n<parameter=path>b" +
      "</parameter>\n</function>\n</tool_call>",
      "<tool_call>\n<function=read file>\n</function>\n</tool_call>",
      "<tool_call>{'arguments': {'path': 'a.txt'}, 'name': 'read_file'</tool_call>",
    ]
  ) {
    const f = findTextCalls(text);
    assert.deepEqual(f.calls, [], text);
    assert.equal(f.rest, text);
  }
});

Deno.test("leading reasoning is taken out, and a call written inside it is never a call", () => {
  const inside = findTextCalls(
    '<think>\nMaybe <tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>' +
      "? No, I know it.\n</think>\n\nThe answer is 4.",
  );
  assert.deepEqual(inside.calls, []);
  assert.equal(inside.rest, "The answer is 4.");
  assert.equal(inside.reasoning.length, 1);
  for (
    const hidden of [
      '<think>[TOOL_CALLS]read_file[ARGS]{"path": "a.txt"}</think>Done.',
      '<think>a</think><think><|python_tag|>{"name": "read_file", "parameters": {}}</think>Done.',
      // The template opened the block in the prompt: only the closer is in the reply.
      '{"name": "read_file", "arguments": {"path": "a.txt"}}\nor not.</think>Done.',
    ]
  ) {
    const f = findTextCalls(hidden);
    assert.deepEqual(f.calls, [], hidden);
    assert.equal(f.rest, "Done.", hidden);
  }
  // Never closed: all of it is reasoning, the call in it too.
  const open = findTextCalls('<think>I will call <tool_call>{"name": "read_file"}</tool_call>');
  assert.deepEqual(open, {
    calls: [],
    rest: "",
    reasoning: ['I will call <tool_call>{"name": "read_file"}</tool_call>'],
  });
  // After the reasoning, a call is a call (llama.cpp common/chat.cpp: reasoning, then content).
  const after = findTextCalls(
    '<think>I need the file.</think>\n[TOOL_CALLS]read_file[ARGS]{"path": "a.txt"}',
  );
  assert.deepEqual(after, { calls: READ_A, rest: "", reasoning: ["I need the file."] });
  // A <think> in the middle of an answer is the answer's text.
  const mid = "Models write <think> and </think> around their thoughts.";
  assert.deepEqual(findTextCalls(mid), { calls: [], rest: mid, reasoning: [] });
});
