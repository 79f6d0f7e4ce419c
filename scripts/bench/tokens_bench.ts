/**
 * How far the context-window estimate is from a real tokenizer (docs/contract.md §14: results sized
 * to the window only work if the count is not off by a factor): the driver's estimate (a real
 * tokenizer's count with a 15% margin, src/driver/context_window.ts) and the old one (characters
 * over 3) against gpt-tokenizer's own count, on this repository's sources and docs and on the
 * prompt the planner pays for on every request. And how long one text takes to count that the
 * tokenizer finds hard (issue 21: a long word, a run of CJK, a 900 KB argument), chunked and bounded
 * as the estimate counts, against the tokenizer on the whole of a tenth of it.
 */
import { countTokens, encode } from "gpt-tokenizer";
import {
  estimateTokens,
  loadTokenizer,
  TOKEN_CHUNK_BYTES,
} from "../../src/driver/context_window.ts";
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

/** Special tokens' names (this repository's tests have some) counted as text, as the estimate does. */
const asText = { disallowedSpecial: new Set<string>() };

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
    const real = c.messages.reduce((n, m) => n + encode(m.content, asText).length, 0) +
      (c.tools.length ? encode(JSON.stringify(c.tools), asText).length : 0);
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
  rows.push(...await hardTextsBench(log));
  return rows;
}

/**
 * Texts with no place the tokenizer may cut them (before issue 21: 2.5 s, 22 s and over 150 s),
 * `share` of their full length. Letters and characters are drawn at random, so that the
 * tokenizer's cache of pieces it has seen does not flatter either side.
 */
function hardTexts(): { name: string; text: (share: number, seed: number) => string }[] {
  const drawn = (n: number, seed: number, pick: (r: number) => string) => {
    let x = seed + 1;
    let out = "";
    for (let i = 0; i < n; i++) out += pick((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
    return out;
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  return [
    {
      name: "a 60,000-character word",
      text: (share, seed) => drawn(60_000 * share, seed, (r) => letters[Math.floor(r * 26)]),
    },
    {
      name: "60,000 CJK characters",
      text: (share, seed) =>
        drawn(60_000 * share, seed, (r) => String.fromCharCode(0x4e00 + Math.floor(r * 3_000))),
    },
    {
      name: "a 900 KB write argument",
      text: (share, seed) => {
        const lines = Array.from({ length: 18_000 * share }, (_, i) => `line ${i}: ${seed} `);
        return JSON.stringify({ path: "big.txt", contents: lines.join("x".repeat(36) + "\n") });
      },
    },
  ];
}

async function hardTextsBench(log: (s: string) => void): Promise<Row[]> {
  await loadTokenizer();
  const rows: Row[] = [];
  for (const { name, text } of hardTexts()) {
    const samples: number[] = [];
    let tokens = 0;
    // A different text each round: the estimate keeps what it counted, per text.
    for (let round = 0; round < 4; round++) {
      const t = text(1, round);
      const start = performance.now();
      tokens = estimateTokens([{ role: "user", content: t }]);
      if (round > 0) samples.push(performance.now() - start);
    }
    const ours = samples.sort((a, b) => a - b)[1];
    const sample = text(0.1, 9);
    const start = performance.now();
    countTokens(sample, asText);
    const whole = performance.now() - start;
    log(
      `tokens ${name}: ${ours.toFixed(0)} ms chunked (${tokens}), whole tenth ${
        whole.toFixed(0)
      } ms`,
    );
    rows.push({
      bench: "token estimate",
      case: `${name}, counted in ${TOKEN_CHUNK_BYTES}-byte chunks`,
      ours: `${ours.toFixed(0)} ms (${tokens} tokens)`,
      others: `whole text, a tenth as long: ${whole.toFixed(0)} ms`,
      ratio: `${(ours / whole).toFixed(2)}× a tenth`,
      target: "< 300 ms",
      met: ours < 300,
    });
  }
  return rows;
}
