/**
 * Prints what the planner pays on every request before the conversation starts: the system
 * prompt and the eleven tool schemas, in tokens counted with a real tokenizer (at most
 * 2,500 together). `deno run -A scripts/prompt-budget.ts`; exits 1 over budget.
 */
import { encode } from "gpt-tokenizer";
import { allTools } from "../src/tools/registry.ts";
import { toolSpecs } from "../src/driver/driver.ts";
import { buildSystemPrompt } from "../src/driver/system_prompt.ts";

export const BUDGET = 2500;

if (import.meta.main) {
  const specs = toolSpecs(allTools());
  const prompt = encode(buildSystemPrompt({ oneShot: true })).length;
  console.log(`system prompt      ${String(prompt).padStart(5)} tokens`);
  for (const s of specs) {
    console.log(
      `${s.function.name.padEnd(18)} ${
        String(encode(JSON.stringify(s)).length).padStart(5)
      } tokens`,
    );
  }
  const total = prompt + encode(JSON.stringify(specs)).length;
  console.log(`total              ${String(total).padStart(5)} tokens (budget ${BUDGET})`);
  Deno.exit(total <= BUDGET ? 0 : 1);
}
