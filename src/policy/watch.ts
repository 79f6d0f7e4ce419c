/**
 * The person watches a command they approved, or typed themselves, print (docs/contract.md §15.3):
 * its output's head as it comes, then how much was left out and the tail. What the planner is shown
 * is another matter (outputs.ts); this is the screen's alone.
 */
import type { Asking } from "./capabilities.ts";
import type { OutputChunk, SpawnResult } from "../worker/protocol.ts";

/** How much of the output the person sees as it comes, and of its tail at the end. */
export const PERSON_HEAD_BYTES = 16 * 1024;
export const PERSON_TAIL_BYTES = 4 * 1024;

export interface Watch {
  /** For the spawn request: how many bytes the worker sends as they come. */
  streamBytes: number;
  /** For the worker call: each chunk as it comes. */
  onProgress(chunk: OutputChunk): void;
  /** When the command ended: how much was not shown, and the tail of what was kept. */
  end(result: SpawnResult): void;
}

/**
 * How the person watches this command, or null when nobody does: only a command the person
 * decided on (approved, or typed in shell mode), and only where there is a screen.
 */
export function personWatch(policy: Asking, byPerson: boolean): Watch | null {
  const person = policy.person;
  if (!byPerson || !policy.canAsk || !person.runOutput) return null;
  const show = person.runOutput.bind(person);
  return {
    streamBytes: PERSON_HEAD_BYTES,
    onProgress: (c) => show({ kind: "chunk", stream: c.stream, bytes: c.bytes }),
    end(result) {
      const total = result.stdoutBytes + result.stderrBytes;
      const omitted = Math.max(0, total - PERSON_HEAD_BYTES);
      // The tail of stdout, or of stderr for a command that printed only there.
      const kept = result.stdout.length > 0 ? result.stdout : result.stderr;
      const tail = omitted > 0
        ? kept.subarray(Math.max(0, kept.length - PERSON_TAIL_BYTES))
        : new Uint8Array();
      show({ kind: "end", omitted, tail });
    },
  };
}
