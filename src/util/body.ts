/**
 * Reading a body from a server only within a bound: what a server sends is never held whole
 * unless it is small.
 */

/**
 * The first `limit` bytes of `body` as text, and whether more came (the rest is not read). A
 * stream that fails part-way gives what arrived before; `failed` says so.
 */
export async function readHead(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ text: string; over: boolean; failed: boolean }> {
  if (!body) return { text: "", over: false, failed: false };
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let failed = false;
  try {
    while (size <= limit) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } catch {
    failed = true;
  } finally {
    reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(size, limit));
  let at = 0;
  for (const p of parts) {
    const take = p.subarray(0, all.length - at);
    all.set(take, at);
    at += take.length;
  }
  return { text: new TextDecoder().decode(all), over: size > limit, failed };
}
