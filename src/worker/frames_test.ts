import assert from "node:assert/strict";
import { frameBytes, frameChunks, ONE_CHUNK_BYTES, readFrames, reusedChunks } from "./frames.ts";

/** A stream of `bytes` cut into chunks at `cuts` (offsets). */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b)];
  at.push(bytes.length);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i + 1 < at.length; i++) controller.enqueue(bytes.slice(at[i], at[i + 1]));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const m of readFrames(stream)) out.push(m);
  return out;
}

const messages = [
  { id: 0, request: { op: "read", path: "/w/a", maxBytes: 10 } },
  {
    id: 7,
    ok: true,
    value: {
      bytes: new Uint8Array([0, 1, 255]),
      stats: new Float64Array([1.5, NaN, -0, 2 ** 53]),
      nested: [{ a: null, b: undefined, s: "é\0\u{1F600}" }],
      empty: new Uint8Array(0),
    },
  },
  { id: 8, ok: false, error: { name: "NotFound", message: "gone", stage: 1 } },
];

Deno.test("frames: binary fields, floats and nested objects survive, whatever the chunks", async () => {
  const bytes = new Uint8Array(messages.map(frameBytes).flatMap((f) => [...f]));
  for (const cuts of [[], [1], [2, 3, 5], Array.from({ length: bytes.length }, (_, i) => i)]) {
    const got = await all(chunked(bytes, cuts));
    assert.equal(got.length, 3);
    assert.deepEqual(got[0], messages[0]);
    const v = (got[1] as { value: Record<string, unknown> }).value;
    assert.ok(v.bytes instanceof Uint8Array);
    assert.deepEqual([...(v.bytes as Uint8Array)], [0, 1, 255]);
    assert.ok(v.stats instanceof Float64Array);
    const stats = v.stats as Float64Array;
    assert.ok(Number.isNaN(stats[1]) && Object.is(stats[2], -0) && stats[3] === 2 ** 53);
    assert.deepEqual(v.nested, [{ a: null, b: undefined, s: "é\0\u{1F600}" }]);
    assert.equal((v.empty as Uint8Array).length, 0);
    assert.deepEqual(got[2], messages[2]);
  }
});

Deno.test("frames: a view into a larger buffer carries only its own bytes", async () => {
  const big = new Uint8Array(1000).map((_, i) => i % 251);
  const got = await all(chunked(frameBytes({ b: big.subarray(100, 110) }), [3]));
  assert.deepEqual([...(got[0] as { b: Uint8Array }).b], [...big.subarray(100, 110)]);
});

Deno.test("frames: a stream that ends inside a frame throws", async () => {
  const f = frameBytes({ id: 1 });
  await assert.rejects(() => all(chunked(f.subarray(0, f.length - 1), [2])), /inside a frame/);
  await assert.rejects(() => all(chunked(f.subarray(0, 2), [])), /inside a frame/);
});

Deno.test("frames: a small frame is one chunk to write, a large one its header then its body as is", async () => {
  const small = { id: 3, request: { op: "stat", path: "/w/a" } };
  const one = frameChunks(small);
  assert.equal(one.length, 1);
  assert.deepEqual([...one[0]], [...frameBytes(small)]);
  const large = { id: 4, ok: true, value: { bytes: new Uint8Array(ONE_CHUNK_BYTES + 1).fill(7) } };
  const two = frameChunks(large);
  assert.equal(two.length, 2);
  assert.equal(two[0].length, 4);
  assert.deepEqual(new Uint8Array([...two[0], ...two[1]]), frameBytes(large));
  // Written one after the other, they read back as the two messages.
  const bytes = new Uint8Array([...one, ...two].flatMap((c) => [...c]));
  const got = await all(chunked(bytes, [5, 4096]));
  assert.deepEqual(got[0], small);
  assert.equal((got[1] as typeof large).value.bytes.length, ONE_CHUNK_BYTES + 1);
});

/**
 * A stream that hands out every chunk in the same buffer, overwritten once the next one is asked
 * for (as {@link reusedChunks} does), the bytes cut at `cuts`.
 */
async function* overwritten(
  bytes: Uint8Array,
  cuts: number[],
  size = 64,
): AsyncGenerator<Uint8Array> {
  const buffer = new Uint8Array(size);
  let at = 0;
  const ends = [
    ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b),
    bytes.length,
  ];
  for (const end of ends) {
    while (at < end) {
      const n = Math.min(size, end - at);
      buffer.fill(0xee);
      buffer.set(bytes.subarray(at, at + n));
      at += n;
      yield buffer.subarray(0, n);
    }
  }
  buffer.fill(0xee); // whatever a message still points into is spoilt
}

Deno.test("frames: a chunk may be overwritten once the next is read, whatever the frames' cuts", async () => {
  const bytes = new Uint8Array(messages.map(frameBytes).flatMap((f) => [...f]));
  for (const cuts of [[], [1], [2, 3, 5], [40, 41, 150]]) {
    const got: unknown[] = [];
    for await (const m of readFrames(overwritten(bytes, cuts))) got.push(m);
    assert.deepEqual(got[0], messages[0]);
    const v = (got[1] as { value: Record<string, unknown> }).value;
    assert.deepEqual([...(v.bytes as Uint8Array)], [0, 1, 255]);
    assert.ok(Object.is((v.stats as Float64Array)[2], -0));
    assert.deepEqual(got[2], messages[2]);
  }
});

Deno.test("frames: a message keeps only its own frame's bytes, not the chunk it came in", async () => {
  // One large chunk holding a small frame: node:v8 gives typed arrays back as views into the
  // bytes it deserialised, so a view into the chunk would keep all of it.
  const frame = frameBytes({ status: new Uint8Array(64).fill(1) });
  const chunk = new Uint8Array(64 * 1024);
  chunk.set(frame);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(chunk.subarray(0, frame.length));
      controller.close();
    },
  });
  const [got] = await all(stream);
  const status = (got as { status: Uint8Array }).status;
  assert.deepEqual([...status], new Array(64).fill(1));
  assert.ok(status.buffer.byteLength <= frame.length, `${status.buffer.byteLength} bytes kept`);
});

Deno.test("frames: reusedChunks reads a byte stream whole, through one buffer", async () => {
  const bytes = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
  const stream = new ReadableStream({
    type: "bytes",
    start(controller) {
      for (let at = 0; at < bytes.length; at += 30_000) {
        controller.enqueue(bytes.slice(at, at + 30_000));
      }
      controller.close();
    },
  });
  const out: number[] = [];
  const sizes = new Set<number>();
  for await (const chunk of reusedChunks(stream.getReader({ mode: "byob" }), 4096)) {
    out.push(...chunk);
    sizes.add(chunk.buffer.byteLength);
  }
  assert.deepEqual(new Uint8Array(out), bytes);
  assert.deepEqual([...sizes], [4096]);
});
