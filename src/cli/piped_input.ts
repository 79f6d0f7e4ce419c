/**
 * Piped input in one-shot mode (docs/cli.md#piped-input, docs/contract.md §15.4): `cat build.log |
 * bravebot -p "why did it fail?"`. Only a pipe or a regular file with at least one byte counts: a
 * terminal, `/dev/null` or an empty input makes no reference, and a pipe that a parent left open
 * and silent is given up on after a short wait, so it never hangs a run. What is read is bounded
 * like a command's output.
 */

import { fstatSync } from "node:fs";

/** As much as a command output reference holds (docs/contract.md §14). */
export const MAX_PIPED_BYTES = 16 * 1024 * 1024;
/** How long a pipe may stay silent before it is taken as no input at all. */
export const FIRST_BYTE_WAIT_MS = 2_000;

export interface PipedInput {
  bytes: Uint8Array;
  /** More came than {@link MAX_PIPED_BYTES}; the rest was not read. */
  cut: boolean;
}

/** The bytes piped to `input`, or null when nothing was (see the module's rule). */
/** What the input is: a pipe, a regular file (and its size), or something else. */
export interface InputKind {
  pipe: boolean;
  file: boolean;
  size: number;
}

export interface Stdin {
  isTerminal(): boolean;
  kind(): InputKind;
  readable: ReadableStream<Uint8Array>;
}

/**
 * The process's stdin. What it is comes from the descriptor itself (`fstat` of 0, through Node's
 * compatibility layer: Deno's own API names `/dev/stdin`, which needs every permission).
 */
export const processStdin: Stdin = {
  isTerminal: () => Deno.stdin.isTerminal(),
  kind: () => {
    const s = fstatSync(0);
    return { pipe: s.isFIFO(), file: s.isFile(), size: s.size };
  },
  get readable() {
    return Deno.stdin.readable;
  },
};

export async function readPipedInput(
  input: Stdin = processStdin,
  options: { waitMs?: number; maxBytes?: number; wholeWait?: boolean } = {},
): Promise<PipedInput | null> {
  if (input.isTerminal()) return null;
  let info: InputKind;
  try {
    info = input.kind();
  } catch {
    return null;
  }
  const pipe = info.pipe;
  if (!pipe && !(info.file && info.size > 0)) return null;
  const max = options.maxBytes ?? MAX_PIPED_BYTES;
  const reader = input.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  try {
    let first = reader.read();
    if (pipe && !options.wholeWait) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const silent = new Promise<"silent">((r) =>
        timer = setTimeout(() => r("silent"), options.waitMs ?? FIRST_BYTE_WAIT_MS)
      );
      const got = await Promise.race([first, silent]);
      clearTimeout(timer);
      if (got === "silent") {
        reader.cancel().catch(() => {});
        return null;
      }
      first = Promise.resolve(got);
    }
    let next: ReadableStreamReadResult<Uint8Array> = await first;
    while (!next.done) {
      const room = max - total;
      if (next.value.length > room) {
        chunks.push(next.value.subarray(0, room));
        total = max;
        cut = true;
        break;
      }
      chunks.push(next.value);
      total += next.value.length;
      next = await reader.read();
    }
  } finally {
    if (cut) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  if (total === 0) return null;
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) bytes.set(c, at), at += c.length;
  return { bytes, cut };
}
