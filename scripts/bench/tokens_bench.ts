/**
 * How far the context-window estimate is from a real tokenizer (design.md §14: results sized to
 * the window only work if the count is not off by a factor): the driver's estimate (a real
 * tokenizer's count with a 15% margin, src/driver/context_window.ts) and the old one (characters
 * over 3) against gpt-tokenizer's own count, on this repository's sources and docs and on the
 * prompt the planner pays for on every request.
 */
import { encode } from "gpt-tokenizer";
import { estimateTokens, loadTokenizer } from "../../src/driver/context_window.ts";
import { allTools } from "../../src/tools/registry.ts";
import { toolSpecs } from "../../src/driver/driver.ts";
import { buildSystemPrompt } from "../../src/driver/system_prompt.ts";
import type { Row } from "./report.ts";

async function texts(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) await texts(path, out);
    else if (/\.(ts|md)$/.test(e.name)) out.push(await Deno.readTextFile(path));
  }
  return out;
}

export async function tokensBench(repo: string, log: (s: string) => void): Promise<Row[]> {
  const files = [...await texts(`${repo}/src`), ...await texts(`${repo}/docs`)];
  const system = buildSystemPrompt({ oneShot: true });
  const specs = toolSpecs(allTools());
  const cases: {
    name: string;
    messages: { role: "user"; content: string }[];
    tools: typeof specs;
  }[] = [
    {
      name: `${files.length} source and doc files`,
      messages: files.map((content) => ({ role: "user", content })),
      tools: [],
    },
    {
      name: "system prompt and the eleven schemas",
      messages: [{ role: "user", content: system }],
      tools: specs,
    },
  ];
  const rows: Row[] = [];
  for (const c of cases) {
    const real = c.messages.reduce((n, m) => n + encode(m.content).length, 0) +
      (c.tools.length ? encode(JSON.stringify(c.tools)).length : 0);
    const chars = c.messages.reduce((n, m) => n + m.content.length, 0) +
      (c.tools.length ? JSON.stringify(c.tools).length : 0);
    const before = Math.ceil(chars / 3);
    await loadTokenizer();
    const now = estimateTokens(c.messages, c.tools) - 8 * c.messages.length;
    log(
      `tokens ${c.name}: real ${real}, estimate ${now} (${
        (now / real).toFixed(2)
      }×), chars/3 ${before} (${(before / real).toFixed(2)}×)`,
    );
    rows.push({
      bench: "token estimate",
      case: c.name,
      ours: `${now} (${(now / real).toFixed(2)}× real)`,
      others: `gpt-tokenizer ${real} · chars/3 ${before} (${(before / real).toFixed(2)}×)`,
      ratio: `${(now / real).toFixed(2)}×`,
      target: "1.0–1.3× real",
      met: now >= real && now <= real * 1.3,
    });
  }
  return rows;
}
