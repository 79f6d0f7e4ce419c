/**
 * What the planner pays on every request before the conversation starts: the system prompt and
 * the eleven tool schemas (as the driver sends them: z.toJSONSchema of each registered tool),
 * counted with a real tokenizer (gpt-tokenizer's default encoding).
 */
import { encode } from "gpt-tokenizer";
import { allTools } from "../../src/tools/registry.ts";
import { toolSpecs } from "../../src/driver/driver.ts";
import { buildSystemPrompt } from "../../src/driver/system_prompt.ts";
import type { Row } from "./report.ts";

export function promptBench(log: (s: string) => void): Row[] {
  const tools = allTools();
  const specs = toolSpecs(tools);
  // One-shot adds a sentence, so it is the larger of the two prompts.
  const prompt = encode(buildSystemPrompt({ oneShot: true })).length;
  const schemas = encode(JSON.stringify(specs)).length;
  const heaviest = specs
    .map((s) => ({ name: s.function.name, tokens: encode(JSON.stringify(s)).length }))
    .sort((a, b) => b.tokens - a.tokens);
  const total = prompt + schemas;
  log(
    `prompt: system ${prompt} + ${tools.length} schemas ${schemas} = ${total} tokens; heaviest ${
      heaviest.slice(0, 3).map((h) => `${h.name} ${h.tokens}`).join(", ")
    }`,
  );
  return [{
    bench: "planner prompt",
    case: `system prompt + ${tools.length} tool schemas`,
    ours: `${total} tokens`,
    others: `prompt ${prompt} · schemas ${schemas}`,
    ratio: "",
    target: "≤ 2,500 tokens",
    met: total <= 2500 && tools.length === 11,
  }];
}
