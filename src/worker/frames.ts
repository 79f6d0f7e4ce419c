/**
 * The effect worker's messages over a byte stream (the kernel wall's child process speaks them
 * on its stdin and stdout): each message is one frame, a 4-byte big-endian length and then the
 * message in V8's structured serialisation (`node:v8`), which keeps what `postMessage` keeps —
 * Uint8Array, Float64Array, nested objects and arrays, null and undefined, -0 and NaN.
 */
import { deserialize, serialize } from "node:v8";

/** Larger frames are refused: a reply is bounded by the reads asked for, far below this. */
export const MAX_FRAME_BYTES = 0x7fff_ffff;

/** The frame of one message: its 4-byte header and its serialised body, to write in order. */
export function encodeFrame(message: unknown): [Uint8Array, Uint8Array] {
  const body: Uint8Array = serialize(message);
  if (body.length > MAX_FRAME_BYTES) throw new RangeError("message too large for one frame");
  const header = new Uint8Array(4);
  new DataView(header.buffer).setUint32(0, body.length);
  return [header, body];
}

/**
 * A body up to this size goes out in one chunk with its header: one write, so the reader on the
 * other side wakes once per message, not twice (a round trip went from about 250 to 210 µs). A
 * larger body is written after its header as it is, rather than copied.
 */
export const ONE_CHUNK_BYTES = 64 * 1024;

/** The chunks to write for one message, in order: one, or the header and then the body. */
export function frameChunks(message: unknown): Uint8Array[] {
  const [header, body] = encodeFrame(message);
  return body.length > ONE_CHUNK_BYTES ? [header, body] : [joined(header, body)];
}

function joined(header: Uint8Array, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(header.length + body.length);
  out.set(header);
  out.set(body, header.length);
  return out;
}

/** One frame as a single array (tests, and writers that take one chunk). */
export function frameBytes(message: unknown): Uint8Array {
  const [header, body] = encodeFrame(message);
  return joined(header, body);
}

/** The most a frame's header makes {@link readFrames} reserve before its bytes come. */
const RESERVED_BYTES = 16 * 1024 * 1024;

/**
 * The messages of a stream of frames, in order, whatever the chunks it arrives in. A stream that
 * ends inside a frame, or a header claiming more than {@link MAX_FRAME_BYTES}, throws.
 *
 * A chunk is only borrowed: it may be overwritten once the next one is asked for (see
 * {@link reusedChunks}). Each message is deserialised from a buffer of its own, exactly its
 * frame's size, because `node:v8` gives a typed array back as a view into the bytes it read: a
 * reply's few bytes of status would otherwise keep a whole 64 KiB read alive, and a search of
 * 200,000 files kept 170 MiB of them (docs/benchmarks.md, "Ten times `gen`").
 */
export async function* readFrames(stream: AsyncIterable<Uint8Array>): AsyncGenerator<unknown> {
  const header = new Uint8Array(4);
  let headerHave = 0;
  let body: Uint8Array | null = null; // the frame being read, once its header is in
  let bodyHave = 0;
  let bodyNeed = 0;
  for await (const chunk of stream) {
    let at = 0;
    while (at < chunk.length) {
      if (body === null) {
        const part = Math.min(4 - headerHave, chunk.length - at);
        header.set(chunk.subarray(at, at + part), headerHave);
        headerHave += part;
        at += part;
        if (headerHave < 4) break;
        headerHave = 0;
        const need = new DataView(header.buffer).getUint32(0);
        if (need > MAX_FRAME_BYTES) throw new RangeError("frame header beyond the limit");
        if (chunk.length - at >= need) {
          // The common case: the whole body is in this chunk; one copy, of exactly its bytes.
          const message = deserialize(chunk.slice(at, at + need));
          at += need;
          yield message;
          continue;
        }
        // Made at once up to RESERVED_BYTES; a larger one is grown as its bytes come, so a
        // header alone cannot reserve more than that.
        body = new Uint8Array(need <= RESERVED_BYTES ? need : RESERVED_BYTES);
        bodyHave = 0;
        bodyNeed = need;
      }
      let into: Uint8Array = body;
      const part = Math.min(bodyNeed - bodyHave, chunk.length - at);
      if (bodyHave + part > into.length) {
        into = new Uint8Array(Math.min(bodyNeed, Math.max(2 * into.length, bodyHave + part)));
        into.set(body.subarray(0, bodyHave));
        body = into;
      }
      into.set(chunk.subarray(at, at + part), bodyHave);
      bodyHave += part;
      at += part;
      if (bodyHave < bodyNeed) break;
      body = null;
      yield deserialize(into);
    }
  }
  if (body !== null || headerHave > 0) throw new Error("the stream ended inside a frame");
}

/** Bytes per read of {@link reusedChunks}: what Deno's own streams read at a time. */
export const READ_CHUNK_BYTES = 64 * 1024;

/**
 * A byte stream's chunks (read through `reader`, its BYOB reader), all read into one buffer, reused: each chunk is valid only until the
 * next is asked for (as {@link readFrames} takes them). A default reader allocates a fresh
 * 64 KiB buffer for every read, however few bytes it brings: a search's replies are a few hundred
 * bytes each, so it made 64 KiB of garbage outside the heap per reply.
 */
export async function* reusedChunks(
  reader: ReadableStreamBYOBReader,
  size = READ_CHUNK_BYTES,
): AsyncGenerator<Uint8Array> {
  let buffer = new ArrayBuffer(size);
  while (true) {
    const { done, value } = await reader.read(new Uint8Array(buffer));
    if (done || value === undefined) return;
    buffer = value.buffer as ArrayBuffer; // the read hands its buffer back, transferred
    if (value.length > 0) yield value;
  }
}
