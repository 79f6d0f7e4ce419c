/**
 * The processor request (docs/contract.md §10): an isolated model call with no tools and no history
 * — one system message saying how to answer, one user message with the instruction and the
 * documents. Nothing of the planner's conversation is sent.
 */
import type { ChatMessage, ModelClient } from "./types.ts";
import { countLineBreaks, DOCUMENT_MARKER, trailingLineBreaks } from "../util/processor_reply.ts";
import { untilAborted } from "../util/abort.ts";

/** How long the processor's server is given to say what context it serves. */
const SERVED_ASK_MS = 10_000;

const PROCESSOR_SYSTEM =
  `You transform documents. Follow the instruction using only the documents given. ` +
  `Each document's text starts on the line after its <document> tag and ends exactly where ` +
  `</document> begins; the tag gives its size in bytes and how many newlines it ends with. ` +
  `Reply with an optional short remark for the person, then a line that is exactly ` +
  `"${DOCUMENT_MARKER}", then the resulting document and nothing else: your reply ends where ` +
  `the document ends.`;

/**
 * One document as the processor is given it. The line break after the opening tag is the
 * framing's; nothing is added before `</document>`, so the text is exactly the document's (a
 * file that does not end with a newline shows `</document>` at the end of its last line), and
 * the tag says its size and its final newlines, which a model cannot count from the text alone.
 */
export function frameDocument(d: { name: string; text: string }): string {
  const bytes = new TextEncoder().encode(d.text).length;
  const newlines = countLineBreaks(trailingLineBreaks(d.text));
  return `<document name="${d.name}" bytes="${bytes}" final-newlines="${newlines}">\n` +
    `${d.text}</document>`;
}

/** The messages of one processor request; exported so tests can assert their shape. */
export function processorMessages(
  instruction: string,
  documents: readonly { name: string; text: string }[],
): ChatMessage[] {
  const docs = documents.map(frameDocument).join("\n");
  return [
    { role: "system", content: PROCESSOR_SYSTEM },
    { role: "user", content: `Instruction:\n${instruction}\n\nDocuments:\n${docs}` },
  ];
}

/** Satisfies the tools' processor port by its shape; the model layer imports no tool. */
export class ModelProcessor {
  constructor(private readonly client: ModelClient) {}

  get endpoint(): string {
    return this.client.endpoint;
  }

  #served: Promise<number | null> | null = null;

  /**
   * What the processor's server serves, asked once per session and bounded: a server that does
   * not answer costs one wait of {@link SERVED_ASK_MS}, then the config's window is used. An
   * answer that may change once the model is loaded (`provisional`: Ollama's default before a
   * load) is asked again at the next call.
   */
  servedTokens(signal?: AbortSignal): Promise<number | null> {
    const client = this.client;
    if (!client.servedContext) return Promise.resolve(null);
    this.#served ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<null>((r) => timer = setTimeout(() => r(null), SERVED_ASK_MS));
      try {
        const served = await Promise.race([client.servedContext!().catch(() => null), bound]);
        if (served?.provisional) this.#served = null;
        return served?.tokens ?? null;
      } finally {
        clearTimeout(timer);
      }
    })();
    return untilAborted(this.#served, signal).then((v) => v ?? null);
  }

  async complete(
    instruction: string,
    documents: { name: string; text: string }[],
    signal?: AbortSignal,
  ): Promise<string> {
    const reply = await this.client.complete({
      messages: processorMessages(instruction, documents),
      signal,
    });
    return reply.text;
  }
}
