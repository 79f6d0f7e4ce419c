/**
 * Reasoning a model left in its reply's text: `<think>…</think>` before the answer, as Qwen3,
 * DeepSeek-R1 and other reasoning models write it when the server does not take it out
 * (llama-server `--reasoning-format none`, vLLM without `--reasoning-parser`). It is the model's
 * scratch, not its answer: it is not shown as the answer, not sent back as the assistant's
 * content, and a tool call written inside it is never a call.
 *
 * Only leading blocks are reasoning — a `<think>` in the middle of an answer is text the model
 * wrote (prose about the tag, a file's content), and stays. The decisions (docs/model.md):
 * - `<think>…</think>` blocks at the start (after blanks), one or several, are reasoning;
 * - a `<think>` at the start that is never closed makes the whole reply reasoning: the model was
 *   cut off while thinking, or never stopped, and nothing after the opener can be told apart
 *   from its thoughts;
 * - a `</think>` with no `<think>` before it closes reasoning the chat template opened in the
 *   prompt (DeepSeek-R1's and Qwen3's templates end the prompt with `<think>\n`): everything up
 *   to it is reasoning.
 *
 * Linear in the text's length: each search starts where the last one ended.
 */

export const THINK_OPEN = "<think>";
export const THINK_CLOSE = "</think>";

export interface Reasoned {
  /** The reply without its leading reasoning (untrimmed when there was none). */
  text: string;
  /** The reasoning taken out, blocks without their tags; empty when there was none. */
  reasoning: string[];
}

/** JSON's and the templates' whitespace. */
export const isSpace = (c: string): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";

/**
 * Takes leading reasoning out of `text`. `count`, when given, is told how many characters were
 * examined, so that a caller's step meter can bound the work.
 */
export function stripReasoning(text: string, count: (n: number) => void = () => {}): Reasoned {
  const reasoning: string[] = [];
  let pos = 0;
  let examined = 0;
  const skipSpace = (from: number) => {
    let i = from;
    while (i < text.length && isSpace(text[i])) i++;
    examined += i - from + 1;
    return i;
  };
  // A closer before any opener: the template opened the block in the prompt.
  const firstClose = text.indexOf(THINK_CLOSE);
  examined += firstClose === -1 ? text.length : firstClose + THINK_CLOSE.length;
  if (firstClose !== -1) {
    const opener = text.lastIndexOf(THINK_OPEN, firstClose);
    examined += firstClose;
    if (opener === -1) {
      reasoning.push(text.slice(0, firstClose));
      pos = firstClose + THINK_CLOSE.length;
    }
  }
  for (;;) {
    const at = skipSpace(pos);
    if (!text.startsWith(THINK_OPEN, at)) break;
    examined += THINK_OPEN.length;
    const bodyStart = at + THINK_OPEN.length;
    const close = text.indexOf(THINK_CLOSE, bodyStart);
    examined += (close === -1 ? text.length : close + THINK_CLOSE.length) - bodyStart;
    if (close === -1) {
      // Never closed: all of the rest is reasoning.
      reasoning.push(text.slice(bodyStart));
      pos = text.length;
      break;
    }
    reasoning.push(text.slice(bodyStart, close));
    pos = close + THINK_CLOSE.length;
  }
  count(examined);
  if (reasoning.length === 0) return { text, reasoning };
  return { text: text.slice(pos).replace(/^\s+/, ""), reasoning };
}

/**
 * The same, for a reply that arrives in pieces: what of each piece may be shown as it comes.
 * Leading `<think>` blocks are held back; once the reply is past them, the rest streams as it
 * arrives. A closer with no opener (the template opened the block) cannot be known until it
 * comes, so that reasoning is shown as it streams, and taken out of the answer afterwards.
 */
export class ReasoningFilter {
  #held = "";
  #inside = false;
  #done = false;

  /** The part of `piece` that can be shown now. */
  push(piece: string): string {
    if (this.#done) return piece;
    let text = this.#held + piece;
    this.#held = "";
    for (;;) {
      if (this.#inside) {
        const close = text.indexOf(THINK_CLOSE);
        if (close === -1) {
          // Keep only what could still be the start of a closer.
          this.#held = text.slice(Math.max(0, text.length - (THINK_CLOSE.length - 1)));
          return "";
        }
        this.#inside = false;
        text = text.slice(close + THINK_CLOSE.length);
        continue;
      }
      const start = text.replace(/^\s+/, "");
      // Blanks are shown as they come: they hide nothing.
      if (start === "") return text;
      if (start.startsWith(THINK_OPEN)) {
        this.#inside = true;
        text = start.slice(THINK_OPEN.length);
        continue;
      }
      if (THINK_OPEN.startsWith(start)) {
        // Could still become an opener.
        this.#held = start;
        return text.slice(0, text.length - start.length);
      }
      this.#done = true;
      return text;
    }
  }

  /** What was held back when the reply ends: a partial opener was text after all. */
  end(): string {
    const held = this.#inside ? "" : this.#held;
    this.#held = "";
    return held;
  }
}
