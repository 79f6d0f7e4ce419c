/**
 * What counts as text (docs/contract.md §14): no NUL byte in the first 8 KiB, and valid UTF-8. One
 * rule for every tool; the effect worker's search applies the same rule with its own fast scan (its
 * tests check that the two agree).
 *
 * @example
 * ```ts
 * decodeText(new TextEncoder().encode("héllo")); // "héllo"
 * decodeText(new Uint8Array([0x61, 0x00]));      // null: a NUL byte
 * decodeText(new Uint8Array([0xff]));            // null: not UTF-8
 * ```
 */

/** How far into a file a NUL byte makes it binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** A NUL byte among the first {@link BINARY_SNIFF_BYTES}. */
export function hasNul(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or null when they are not text (a NUL byte, or invalid UTF-8). */
export function decodeText(bytes: Uint8Array): string | null {
  if (hasNul(bytes)) return null;
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}
