/**
 * The shape of a processor's reply (docs/contract.md §10): an optional remark for the person, a
 * line that is exactly {@link DOCUMENT_MARKER}, then the document. The model layer asks for it and
 * the policy layer splits it, so both read it from here.
 */

import { stripReasoning } from "./reasoning.ts";

export const DOCUMENT_MARKER = "=== document ===";

/**
 * Splits a processor reply at the first marker line; no marker means no document. Leading
 * reasoning (`<think>…</think>`, src/util/reasoning.ts) is taken out first: a processor that
 * reasons can write the marker inside its thoughts, and they are neither remark nor document.
 */
export function splitProcessorReply(reply: string): { remark: string; document: string | null } {
  const lines = stripReasoning(reply).text.split("\n");
  const at = lines.findIndex((l) => l.replace(/\r$/, "") === DOCUMENT_MARKER);
  if (at < 0) return { remark: lines.join("\n").trim(), document: null };
  return {
    remark: lines.slice(0, at).join("\n").trim(),
    document: lines.slice(at + 1).join("\n"),
  };
}

/**
 * The line breaks a text ends with (`\n` or `\r\n`, as many as there are): how a document ends,
 * which the request states and an answer bound to it keeps (docs/contract.md §10, issue 26).
 */
export function trailingLineBreaks(text: string): string {
  return text.match(/(?:\r?\n)*$/)![0];
}

/** How many line breaks {@link trailingLineBreaks} found. */
export function countLineBreaks(breaks: string): number {
  return breaks.split("\n").length - 1;
}
