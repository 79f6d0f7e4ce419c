/**
 * The shapes of run output the approval policy file may assert in advance (docs/contract.md §16.3,
 * docs/cli.md#readoutput): `version`, `yes-no`, `letter`, `integer`, `hex`. Each is a
 * fixed whole-match rule written here, byte by byte: no user pattern, and no regular expression
 * engine, ever meets an output. A shape admits numbers, yes or no, and one letter, nothing that
 * could spell an instruction; what the planner is shown is the shape's canonical form.
 *
 * The match is a pure function of the bytes and the shapes: {@link matchShape} returns a verdict
 * and the policy layer (outputs.ts) decides what follows from it.
 */

export const SHAPES = ["version", "yes-no", "letter", "integer", "hex"] as const;
export type Shape = typeof SHAPES[number];

/**
 * At most this many outputs are asserted by shape in one run (docs/contract.md §16.3); then it
 * asks.
 */
export const MAX_SHAPE_ASSERTIONS = 16;

export type ShapeVerdict =
  | { matched: true; shape: Shape; canonical: string }
  | { matched: false };

const NO_MATCH: ShapeVerdict = Object.freeze({ matched: false });

/** The longest output any shape admits, in bytes: 64 hex digits. */
const LONGEST = 64;

/**
 * The first of `shapes` (in the policy file's order) that `bytes` match whole, with its
 * canonical form. One trailing newline is removed first; then every byte must be printable ASCII
 * (0x20–0x7E) and the whole must be the shape, within its length. Bytes are compared as bytes:
 * a fullwidth digit, a homoglyph, a zero-width or bidi character, a carriage return, a space or
 * a second line are each not the shape.
 */
export function matchShape(bytes: Uint8Array, shapes: readonly Shape[]): ShapeVerdict {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a
    ? bytes.length - 1
    : bytes.length;
  if (end === 0 || end > LONGEST) return NO_MATCH;
  const body = bytes.subarray(0, end);
  for (const b of body) if (b < 0x20 || b > 0x7e) return NO_MATCH;
  // Printable ASCII only: one byte is one character.
  const text = String.fromCharCode(...body);
  for (const shape of shapes) {
    const canonical = RULES[shape](text);
    if (canonical !== null) return { matched: true, shape, canonical };
  }
  return NO_MATCH;
}

const RULES: Readonly<Record<Shape, (s: string) => string | null>> = {
  version: matchVersion,
  "yes-no": matchYesNo,
  letter: matchLetter,
  integer: matchInteger,
  hex: matchHex,
};

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

function allDigits(s: string, min: number, max: number): boolean {
  if (s.length < min || s.length > max) return false;
  for (const c of s) if (!isDigit(c)) return false;
  return true;
}

/** 1 to 4 dot-separated parts of 1 to 6 digits each (`3.1.4`); shown as it is. At most 80 bits. */
function matchVersion(s: string): string | null {
  const parts = s.split(".");
  if (parts.length > 4) return null;
  return parts.every((p) => allDigits(p, 1, 6)) ? s : null;
}

/** `yes` or `no` in any case; shown lower-case, so case carries nothing: 1 bit. */
function matchYesNo(s: string): string | null {
  const lower = s.toLowerCase();
  return lower === "yes" || lower === "no" ? lower : null;
}

/** One upper-case letter from `A` to `J`: 3.3 bits. */
function matchLetter(s: string): string | null {
  return s.length === 1 && s >= "A" && s <= "J" ? s : null;
}

/** An optional minus and 1 to 18 digits; shown without leading zeros (`-0` as `0`): 61 bits. */
function matchInteger(s: string): string | null {
  const negative = s.startsWith("-");
  const digits = negative ? s.slice(1) : s;
  if (!allDigits(digits, 1, 18)) return null;
  let i = 0;
  while (i < digits.length - 1 && digits[i] === "0") i++;
  const bare = digits.slice(i);
  return negative && bare !== "0" ? `-${bare}` : bare;
}

/** 7 to 64 hex digits in either case; shown lower-case, so case carries nothing: 256 bits. */
function matchHex(s: string): string | null {
  if (s.length < 7 || s.length > 64) return null;
  for (const c of s) {
    if (!isDigit(c) && !((c >= "a" && c <= "f") || (c >= "A" && c <= "F"))) return null;
  }
  return s.toLowerCase();
}
