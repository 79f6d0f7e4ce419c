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

/**
 * The messages of a stream of frames, in order, whatever the chunks it arrives in. A stream that
 * ends inside a frame, or a header claiming more than {@link MAX_FRAME_BYTES}, throws.
 */
export async function* readFrames(stream: AsyncIterable<Uint8Array>): AsyncGenerator<unknown> {
  const chunks: Uint8Array[] = [];
  let have = 0;
  /** Removes and returns the first `n` buffered bytes (a view when one chunk holds them). */
  const take = (n: number): Uint8Array => {
    if (n === 0) return new Uint8Array(0);
    const first = chunks[0];
    if (first.length >= n) {
      if (first.length === n) chunks.shift();
      else chunks[0] = first.subarray(n);
      have -= n;
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = chunks[0];
      const part = Math.min(c.length, n - at);
      out.set(c.subarray(0, part), at);
      at += part;
      if (part === c.length) chunks.shift();
      else chunks[0] = c.subarray(part);
    }
    have -= n;
    return out;
  };
  let need = -1; // the body length of the frame being read, once its header is in
  for await (const chunk of stream) {
    if (chunk.length === 0) continue;
    chunks.push(chunk);
    have += chunk.length;
    while (true) {
      if (need < 0) {
        if (have < 4) break;
        const h = take(4);
        need = new DataView(h.buffer, h.byteOffset, 4).getUint32(0);
        if (need > MAX_FRAME_BYTES) throw new RangeError("frame header beyond the limit");
      }
      if (have < need) break;
      const body = take(need);
      need = -1;
      yield deserialize(body);
    }
  }
  if (need >= 0 || have > 0) throw new Error("the stream ended inside a frame");
}
