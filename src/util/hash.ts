import { createHash } from "node:crypto";

/** SHA-256 of bytes or text, lowercase hex: what vouches and per-file trust entries bind to. */
export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
