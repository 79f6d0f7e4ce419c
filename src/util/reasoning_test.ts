import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { ReasoningFilter, stripReasoning } from "./reasoning.ts";
import { DOCUMENT_MARKER, splitProcessorReply } from "./processor_reply.ts";

Deno.test("leading <think> blocks are reasoning; the rest is the reply", () => {
  // llama.cpp common/chat.cpp (ggml-org/llama.cpp): with --reasoning-format none the
  // <think>…</think> of Qwen3 and DeepSeek-R1 stays in the content, before the answer.
  assert.deepEqual(stripReasoning("<think>\nhmm\n</think>\n\nHello."), {
    text: "Hello.",
    reasoning: ["\nhmm\n"],
  });
  assert.deepEqual(stripReasoning("  <think>a</think> <think>b</think>Hi"), {
    text: "Hi",
    reasoning: ["a", "b"],
  });
  assert.deepEqual(stripReasoning("<think>cut off while thinking"), {
    text: "",
    reasoning: ["cut off while thinking"],
  });
  // The template opened the block in the prompt (DeepSeek-R1, Qwen3 thinking templates).
  assert.deepEqual(stripReasoning("thoughts</think>\nHi"), { text: "Hi", reasoning: ["thoughts"] });
  for (const t of ["Hi <think>x</think>", "No reasoning.", "", "a <think> b </think> c"]) {
    assert.deepEqual(stripReasoning(t), { text: t, reasoning: [] }, t);
  }
});

Deno.test("stripping reasoning looks at each character a bounded number of times", () => {
  for (
    const t of [
      "<think>".repeat(60_000),
      "</think>".repeat(60_000),
      "<think></think>".repeat(60_000),
      " ".repeat(60_000) + "<think>",
      "x".repeat(60_000) + "</think>",
    ]
  ) {
    let n = 0;
    stripReasoning(t, (k) => n += k);
    assert.ok(n <= 5 * t.length + 10, `${n} for ${t.length}`);
  }
});

Deno.test("streamed, leading reasoning is held back and the answer shown as it comes", () => {
  const shown = (pieces: string[]) => {
    const f = new ReasoningFilter();
    return pieces.map((p) => f.push(p)).join("") + f.end();
  };
  assert.equal(shown(["<th", "ink>secret", " plan</th", "ink>\n", "The answer."]), "\nThe answer.");
  assert.equal(shown(["<think>a</think><think>b</think>", "Hi"]), "Hi");
  assert.equal(shown(["<thi"]), "<thi");
  assert.equal(shown(["<thing>"]), "<thing>");
  assert.equal(shown(["Hi <think>", "x</think>"]), "Hi <think>x</think>");
  assert.equal(shown(["<think>never closed"]), "");
  // Any split of a reply shows what stripping the whole reply keeps (less leading blanks).
  fc.assert(fc.property(
    fc.array(fc.constantFrom("<think>", "</think>", "<th", "ink>", "a", " ", "\n"), {
      maxLength: 12,
    }),
    fc.array(fc.nat(), { maxLength: 4 }),
    (parts, cuts) => {
      const text = parts.join("");
      if (text.trimStart().startsWith("</think>") || !text.includes("<think>")) return;
      const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      const pieces = [0, ...points, text.length].slice(1).map((end, i, all) =>
        text.slice(i === 0 ? 0 : all[i - 1], end)
      );
      const whole = stripReasoning(text);
      if (whole.reasoning.length && text.indexOf("</think>") < text.indexOf("<think>")) return;
      assert.equal(shown(pieces).trimStart(), whole.text.trimStart(), JSON.stringify(pieces));
    },
  ));
});

Deno.test("a processor's reasoning is neither its remark nor its document", () => {
  const reply = `<think>\nI'll write:\n${DOCUMENT_MARKER}\nnot this\n</think>\nDone.\n` +
    `${DOCUMENT_MARKER}\nthe document`;
  assert.deepEqual(splitProcessorReply(reply), { remark: "Done.", document: "the document" });
  assert.deepEqual(splitProcessorReply(`<think>${DOCUMENT_MARKER}\nonly thoughts`), {
    remark: "",
    document: null,
  });
  assert.deepEqual(splitProcessorReply(`ok\n${DOCUMENT_MARKER}\n<think>kept</think>`), {
    remark: "ok",
    document: "<think>kept</think>",
  });
});
