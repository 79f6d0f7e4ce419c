import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { countTokens } from "gpt-tokenizer";
import {
  byteBoundTokens,
  chunkEnd,
  COMPACTED_RESULT,
  countBounded,
  estimateTokens,
  EXACT_TOKEN_BYTES,
  fitToWindow,
  loadTokenizer,
  onlyAdded,
  replyReserve,
  resultShareChars,
  TOKEN_CHUNK_BYTES,
  useTokenCounter,
  utf8Length,
} from "./context_window.ts";
import { effectiveWindow, MAX_COUNT_RATIO } from "../util/window.ts";
import type { ChatMessage } from "../model/types.ts";

const utf8 = new TextEncoder();
const system: ChatMessage = { role: "system", content: "rules" };

function rounds(sizes: number[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "user", content: "task" }];
  sizes.forEach((n, i) => {
    out.push({
      role: "assistant",
      content: null,
      tool_calls: [{
        id: `c${i}`,
        type: "function",
        function: { name: "read_file", arguments: "{}" },
      }],
    });
    out.push({ role: "tool", tool_call_id: `c${i}`, content: "x".repeat(n) });
  });
  return out;
}

Deno.test("a fitted conversation keeps every message and role, and fits the budget", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 12 }),
      fc.integer({ min: 2048, max: 40_000 }),
      (sizes, window) => {
        const messages = rounds(sizes);
        const fit = fitToWindow(system, messages, [], window);
        if (!fit.ok) return /no longer fits/.test(fit.message);
        return fit.messages.length === messages.length + 1 &&
          fit.messages.every((m, i) => m.role === [system, ...messages][i].role) &&
          estimateTokens(fit.messages) <= window - replyReserve(window);
      },
    ),
  );
});

Deno.test("the oldest results go first; the newest round is never shortened", () => {
  const messages = rounds([9000, 9000, 9000]);
  const fit = fitToWindow(system, messages, [], 10_000);
  assert.ok(fit.ok);
  const tools = fit.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.equal(tools[0], COMPACTED_RESULT);
  assert.equal(tools[2].length, 9000);
});

Deno.test("what fits is sent unchanged", () => {
  const messages = rounds([10]);
  const fit = fitToWindow(system, messages, [], 32_768);
  assert.ok(fit.ok);
  assert.equal(fit.compacted, 0);
  assert.deepEqual(fit.messages, [system, ...messages]);
});

Deno.test("window: the smaller of the config and what the server serves, and who set it", () => {
  assert.deepEqual(effectiveWindow(32_768, null), { tokens: 32_768, by: "config", fit: 32_768 });
  assert.deepEqual(effectiveWindow(32_768, 4_096), { tokens: 4_096, by: "server", fit: 4_096 });
  assert.deepEqual(effectiveWindow(8_192, 131_072), { tokens: 8_192, by: "config", fit: 8_192 });
  assert.deepEqual(effectiveWindow(8_192, 0), { tokens: 8_192, by: "config", fit: 8_192 });
  // A server that counts 1.6 times the estimate: the estimate's budget shrinks by as much, and
  // never by more than MAX_COUNT_RATIO, nor grows for a server that counts less.
  assert.deepEqual(effectiveWindow(32_768, 4_096, 1.6), {
    tokens: 4_096,
    by: "server",
    fit: 2_560,
  });
  assert.equal(effectiveWindow(8_192, null, 100).fit, Math.floor(8_192 / MAX_COUNT_RATIO));
  assert.equal(effectiveWindow(8_192, null, 0.5).fit, 8_192);
  assert.equal(effectiveWindow(8_192, null, NaN).fit, 8_192);
  // The results' share follows the window the server serves.
  const served = effectiveWindow(32_768, 4_096).tokens;
  assert.ok(resultShareChars(system, [], served) < resultShareChars(system, [], 32_768));
});

Deno.test("only added: a request that extends the one before, and what is not", () => {
  const before = [system, ...rounds([10, 20])];
  const after = [
    ...before.map((m) => ({ ...m })),
    { role: "user", content: "more" } as ChatMessage,
  ];
  assert.equal(onlyAdded(before, after), true);
  // The same request again, a shortened result, a cleared conversation, a changed system prompt.
  assert.equal(onlyAdded(before, before), false);
  const shortened = after.map((m) => m.role === "tool" ? { ...m, content: COMPACTED_RESULT } : m);
  assert.equal(onlyAdded(before, shortened), false);
  assert.equal(onlyAdded(before, [system, { role: "user", content: "new" }]), false);
  const otherSystem = [{ role: "system", content: "other" } as ChatMessage, ...after.slice(1)];
  assert.equal(onlyAdded(before, otherSystem), false);
  // A call's arguments compacted.
  const args = after.map((m) =>
    m.role === "assistant" && m.tool_calls
      ? {
        ...m,
        tool_calls: m.tool_calls.map((c) => ({
          ...c,
          function: { ...c.function, arguments: '{"_":1}' },
        })),
      }
      : m
  );
  assert.equal(onlyAdded(before, args), false);
});

/** The texts issue 21 stalled on: one long word, a run of one CJK character, a 900 KB argument. */
function stallingTexts(): { name: string; text: string }[] {
  const contents = Array.from({ length: 18_000 }, (_, i) => `line ${i}: ${"ab".repeat(20)}\n`)
    .join("").slice(0, 900_000);
  return [
    { name: "a 60,000-character word", text: "x".repeat(60_000) },
    { name: "60,000 CJK characters", text: "中".repeat(60_000) },
    {
      name: "a 900 KB write argument",
      text: JSON.stringify({ path: "big.txt", contents }),
    },
  ];
}

Deno.test("a long word, a CJK run and a 900 KB argument reach the tokenizer in bounded chunks", () => {
  const handed: string[] = [];
  useTokenCounter((text) => {
    handed.push(text);
    return Math.ceil(text.length / 4);
  });
  try {
    for (const { name, text } of stallingTexts()) {
      handed.length = 0;
      const tokens = estimateTokens([{ role: "user", content: text }]);
      const sizes = handed.map((c) => utf8.encode(c).length);
      assert.ok(handed.length > 0, name);
      assert.ok(
        Math.max(...sizes) <= TOKEN_CHUNK_BYTES,
        `${name}: a chunk of ${Math.max(...sizes)} bytes`,
      );
      const total = sizes.reduce((a, b) => a + b, 0);
      assert.ok(
        total < EXACT_TOKEN_BYTES + TOKEN_CHUNK_BYTES,
        `${name}: ${total} bytes handed to the tokenizer`,
      );
      // Never fewer than what was counted, nor than one token a byte past the bound.
      assert.ok(tokens >= handed.reduce((n, c) => n + Math.ceil(c.length / 4), 0), name);
      assert.ok(tokens >= utf8.encode(text).length - total, name);
    }
  } finally {
    useTokenCounter(null);
  }
});

Deno.test("a text with a special token's name is counted as text, not refused", async () => {
  await loadTokenizer();
  try {
    const n = estimateTokens([{
      role: "user",
      content: "before <|endoftext|> <|im_start|> after",
    }]);
    assert.ok(n > 8);
  } finally {
    useTokenCounter(null);
  }
});

/** The real tokenizer as the estimate uses it, and a counter that records what it is handed. */
const asText = { disallowedSpecial: new Set<string>() };
const realCount = (text: string) => countTokens(text, asText);
function recording(count: (text: string) => number = (t) => t.length) {
  const chunks: string[] = [];
  return { chunks, count: (t: string) => (chunks.push(t), count(t)) };
}
const unbounded = (chunkBytes: number) => ({ chunkBytes, exactBytes: Infinity });

Deno.test("counted in chunks: the sum of the chunks' counts, the bytes beyond the bound, no pair split", () => {
  const text = "😀".repeat(3_000) + " a b " + "é".repeat(700) + "中".repeat(40_000);
  const r = recording();
  const bounds = { chunkBytes: 1022, exactBytes: 40_000 };
  const { tokens, bytesBeyond } = countBounded(text, r.count, bounds);
  const handed = r.chunks.join("");
  assert.ok(text.startsWith(handed));
  assert.equal(tokens, handed.length);
  assert.equal(bytesBeyond, utf8.encode(text.slice(handed.length)).length);
  assert.equal(utf8Length(text, 0, text.length), utf8.encode(text).length);
  const total = utf8.encode(handed).length;
  assert.ok(total >= bounds.exactBytes && total < bounds.exactBytes + bounds.chunkBytes);
  for (const c of r.chunks) {
    assert.ok(utf8.encode(c).length <= bounds.chunkBytes);
    assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(c), "a chunk cuts a surrogate pair");
  }
  // Lone surrogates are 3 bytes, as the encoder writes them (U+FFFD).
  assert.equal(utf8Length("a\ud800b\udc00", 0, 4), utf8.encode("a\ud800b\udc00").length);
  // A chunk ends before a space that follows a word where there is one.
  assert.equal(chunkEnd("hello world again", 0, 14), 11);
  assert.equal(chunkEnd("hello  world", 0, 9), 5);
  assert.equal(chunkEnd("helloworld", 0, 4), 4);
});

Deno.test("chunked counts equal the whole text's on space-separated text (property)", () => {
  const word = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9'.,;:!?()"\-]{1,12}$/),
    fc.string({
      unit: fc.integer({ min: 0x4e00, max: 0x9fff }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 12,
    }),
  );
  // Every separator starts with a space after a word: the cut the tokenizer makes itself.
  const separator = fc.constantFrom(" ", " ", " ", "  ", " \n", " \n  ", " \t");
  const prose = fc.array(fc.tuple(word, separator), { maxLength: 80 }).map((p) =>
    p.flat().join("")
  );
  fc.assert(
    fc.property(prose, fc.integer({ min: 48, max: 256 }), (text, chunkBytes) => {
      return countBounded(text, realCount, unbounded(chunkBytes)).tokens === realCount(text);
    }),
  );
  // And on this repository's own prose and code, at the real chunk size.
  for (const file of ["docs/decisions.md", "src/driver/driver.ts"]) {
    const text = Deno.readTextFileSync(new URL(`../../${file}`, import.meta.url));
    assert.equal(
      countBounded(text, realCount, unbounded(TOKEN_CHUNK_BYTES)).tokens,
      realCount(text),
      file,
    );
  }
});

Deno.test("chunked counts stay within three tokens a cut of the whole text's, on any text (property)", () => {
  // A cut inside a word can split one token into pieces ("argument" is one token, "argu" and
  // "ment" three): two at most a cut in 40,000 tries; the test allows three.
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: "binary", maxLength: 500 }),
        fc.string({ unit: "grapheme", maxLength: 200 }),
      ),
      fc.integer({ min: 4, max: 64 }),
      (text, chunkBytes) => {
        const r = recording(realCount);
        const { tokens } = countBounded(text, r.count, unbounded(chunkBytes));
        return Math.abs(tokens - realCount(text)) <= 3 * Math.max(0, r.chunks.length - 1);
      },
    ),
  );
});

/** Text of every kind the bound must hold for: ASCII, accents, CJK, emoji and their sequences. */
const anyText = () =>
  fc.array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary-ascii", maxLength: 80 }),
      fc.constantFrom(
        "👋",
        "👨‍👩‍👧‍👦",
        "🏳️‍🌈",
        "é",
        "中文",
        "\ud800",
        "\udfff",
        " ",
        "\n\n",
        "<|endoftext|>",
      ),
      fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c).repeat(7)),
    ),
    { maxLength: 12 },
  ).map((parts) => parts.join(""));

Deno.test("utf8Length is the encoder's length, lone surrogates and pairs alike", () => {
  fc.assert(
    fc.property(anyText(), (text) => utf8Length(text, 0, text.length) === utf8.encode(text).length),
    { numRuns: 400 },
  );
  for (const text of ["\ud83d\ude00", "\ud83d", "\ude00\ud83d", "x\ud83d\ude00\ud83d", "é€"]) {
    assert.equal(utf8Length(text, 0, text.length), utf8.encode(text).length);
  }
});

Deno.test("the tokenizer never counts more tokens than a text has UTF-8 bytes", () => {
  fc.assert(
    fc.property(anyText(), (text) => realCount(text) <= utf8Length(text, 0, text.length)),
    { numRuns: 400 },
  );
});

Deno.test("the byte bound is never under the estimate, whatever the messages", async () => {
  await loadTokenizer();
  try {
    const tools = [{
      type: "function" as const,
      function: { name: "read_file", description: "reads 📄", parameters: { type: "object" } },
    }];
    const message = fc.oneof(
      anyText().map((content): ChatMessage => ({ role: "user", content })),
      anyText().map((content): ChatMessage => ({ role: "tool", tool_call_id: "c", content })),
      fc.tuple(anyText(), anyText()).map(([name, args]): ChatMessage => ({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name, arguments: args } }],
      })),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), fc.boolean(), (messages, withTools) => {
        const t = withTools ? tools : [];
        return byteBoundTokens(messages, t) >= estimateTokens(messages, t);
      }),
      { numRuns: 200 },
    );
    // Past the exact bound (the bytes beyond it count one each) and in many chunks.
    const big = "🙂 naïve 中文 words ".repeat(9_000);
    const messages: ChatMessage[] = [{ role: "user", content: big }];
    assert.ok(utf8.encode(big).length > EXACT_TOKEN_BYTES);
    assert.ok(byteBoundTokens(messages) >= estimateTokens(messages));
  } finally {
    useTokenCounter(null);
  }
});
