import assert from "node:assert/strict";
import { encode } from "gpt-tokenizer";
import { buildSystemPrompt, ROUTE, shapesLine } from "./system_prompt.ts";
import { toolSpecs } from "./driver.ts";
import { allTools } from "../tools/registry.ts";
import { TOOL_NAMES } from "../tools/tool.ts";

Deno.test("the system prompt and the eleven tool schemas together are at most 2,500 tokens", () => {
  const tools = allTools();
  assert.deepEqual(tools.map((t) => t.name), [...TOOL_NAMES]);
  // The longest the prompt is without skills or commands: one-shot, every shape asserted.
  const prompt = buildSystemPrompt({ oneShot: true, readOutputShapes: SHAPES });
  const total = encode(prompt).length + encode(JSON.stringify(toolSpecs(tools))).length;
  assert.ok(total <= 2500, `system prompt + tool schemas = ${total} tokens`);
});

Deno.test("the prompt explains references, labels and what the planner may not see", () => {
  const p = buildSystemPrompt();
  assert.match(p, /ref:N/);
  assert.match(p, /untrusted/);
  assert.match(p, /not shown/);
  assert.match(p, /spawn_processor/);
  assert.match(p, /carries no instruction/);
  assert.match(p, /T\/U = trusted\/untrusted/);
});

Deno.test("listed skills and trusted AGENTS.md are included; nothing when absent", () => {
  const p = buildSystemPrompt({
    skills: [{ name: "commit-style", description: "how we\nwrite commits" }],
    agents: "Use tabs.",
  });
  assert.match(p, /- commit-style: how we write commits/);
  assert.match(p, /AGENTS\.md\):\nUse tabs\./);
  const bare = buildSystemPrompt();
  assert.ok(!/Skills/.test(bare));
  assert.ok(!/AGENTS/.test(bare));
});

Deno.test("system prompt: teaches {{ref:N}}, and lists at most ten unasked commands, then how many more", () => {
  const unasked = Array.from(
    { length: 13 },
    (_, i) => `tool${i} --flag (vouched: output shown to you)`,
  );
  const prompt = buildSystemPrompt({ unasked });
  assert.match(prompt, /\{\{ref:N\}\}/);
  assert.match(prompt, /tool9 --flag/);
  assert.ok(!prompt.includes("tool10 --flag"));
  assert.match(prompt, /- and 3 more/);
  assert.ok(!buildSystemPrompt({}).includes("run without asking"), "no list when there is none");
});

const SHAPES = ["version", "yes-no", "letter", "integer", "hex"];

Deno.test("system prompt: the route to one fact is taught in a few short lines, and names the run's shapes", () => {
  const plain = buildSystemPrompt({});
  assert.ok(plain.includes(ROUTE));
  assert.match(ROUTE, /fed the ref as stdin/);
  assert.match(ROUTE, /cat fed a processor's shortest answer/);
  assert.match(ROUTE, /read_output/);
  assert.ok(!plain.includes("asserted without asking"), "no shapes named when none are asserted");
  const some = buildSystemPrompt({ readOutputShapes: ["integer", "version", "integer"] });
  assert.match(some, /the whole output is an integer, or a version \(3\.1\.4\); otherwise/);
  assert.ok(!some.includes("hex digits"));
  // At most three lines, and at most 150 tokens added, with every shape named.
  const lines = [ROUTE, shapesLine(SHAPES)!];
  assert.ok(lines.join("\n").split("\n").length <= 3);
  const added = encode(lines.join("\n")).length;
  assert.ok(added <= 150, `the route adds ${added} tokens`);
});
