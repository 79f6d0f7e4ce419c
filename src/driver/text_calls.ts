/**
 * Tool calls a small local model wrote into its text instead of the `tool_calls` field: the
 * whole reply as a JSON call, a fenced JSON block, or `<tool_call>` tags (the usual chat
 * templates). They are handled as calls; prose that merely mentions JSON is left alone.
 *
 * The reply is the planner model's, and it can be anything (a model that loops writes the same
 * opener thousands of times), so recovery takes time linear in the reply's length whatever its
 * shape: each format is a scanner that never looks back (see {@link Format}), not a regular
 * expression that retries from every opener.
 */

export interface TextCall {
  name: string;
  /** The arguments as a JSON string, as a proper tool call would carry them. */
  arguments: string;
}

export interface Found {
  calls: TextCall[];
  /** The text with the recognised calls taken out. */
  rest: string;
}

/**
 * Counts the characters recovery examines (searched, compared, or handed to JSON.parse), so
 * that a test can bound the work as a multiple of the text's length rather than by a clock.
 */
export interface Meter {
  steps: number;
}

/** The text, with every look at it counted on the meter. */
export class Scan {
  constructor(readonly text: string, readonly meter: Meter) {}

  /** `indexOf`, counted: the characters from `from` to the end of the hit, or to the end. */
  find(needle: string, from: number): number {
    const at = this.text.indexOf(needle, from);
    this.meter.steps += Math.max(0, (at === -1 ? this.text.length : at + needle.length) - from);
    return at;
  }

  /** Whether `s` occurs at `at`, counted: the characters compared until the first mismatch. */
  has(s: string, at: number): boolean {
    let i = 0;
    while (i < s.length && this.text[at + i] === s[i]) i++;
    this.meter.steps += Math.min(i + 1, s.length);
    return i === s.length;
  }

  /** The end of the run of characters from `at` that `keep` accepts, counted. */
  skip(at: number, keep: (c: string) => boolean): number {
    let i = at;
    while (i < this.text.length && keep(this.text[i])) i++;
    this.meter.steps += i - at + 1;
    return i;
  }
}

/** One candidate for a call: the characters [start, end) it occupies and the JSON inside. */
export interface Span {
  start: number;
  end: number;
  body: string;
}

/**
 * One way of writing calls in text. `next` finds the first candidate at or after `from`, or
 * null when the rest of the text holds none. The contract that keeps recovery linear: it looks
 * at no character before `from`, no further than the end of the span it returns (or the end of
 * the text when it returns null), and returns a span that ends after `from`; a pass then looks
 * at each character a bounded number of times. An opener whose closer is missing ends the pass
 * (return null) when no later opener could be closed either, or is skipped at a cost bounded
 * by its own length — never by searching the rest of the text again for each opener, which is
 * what made the regular expressions this replaced quadratic.
 */
export interface Format {
  name: string;
  /** The literal markers of the format, for tests that build hostile text out of them. */
  markers: readonly string[];
  next(scan: Scan, from: number): Span | null;
}

const TAG_OPEN = "<tool_call>";
const TAG_CLOSE = "</tool_call>";

/** `<tool_call>…</tool_call>`: each opener is paired with the first closer after it. */
const tagged: Format = {
  name: "tool_call tags",
  markers: [TAG_OPEN, TAG_CLOSE],
  next(scan, from) {
    const start = scan.find(TAG_OPEN, from);
    if (start === -1) return null;
    const bodyStart = start + TAG_OPEN.length;
    const close = scan.find(TAG_CLOSE, bodyStart);
    // No closer after this opener means none after any later one either.
    if (close === -1) return null;
    return { start, end: close + TAG_CLOSE.length, body: scan.text.slice(bodyStart, close) };
  },
};

const FENCE = "```";
const FENCE_LANGS = ["json", "tool_call", "tool"];
const isBlank = (c: string) => c === " " || c === "\t";

/**
 * A fenced block: three backticks, an optional `json`, `tool_call` or `tool`, spaces or tabs, a
 * newline; the body runs to the next three backticks, less one newline before them.
 */
const fenced: Format = {
  name: "fenced block",
  markers: [FENCE, ...FENCE_LANGS.map((l) => FENCE + l + "\n"), "\n" + FENCE],
  next(scan, from) {
    const text = scan.text;
    for (let at = from;;) {
      const start = scan.find(FENCE, at);
      if (start === -1) return null;
      let i = start + FENCE.length;
      const lang = FENCE_LANGS.find((l) => scan.has(l, i));
      if (lang) i += lang.length;
      i = scan.skip(i, isBlank);
      if (text[i] !== "\n") {
        // Not an opener; the next fence starts after this one's first backtick.
        at = start + 1;
        continue;
      }
      const bodyStart = i + 1;
      const close = scan.find(FENCE, bodyStart);
      // Every later opener would itself be a fence after this one: none can be closed.
      if (close === -1) return null;
      const bodyEnd = close > bodyStart && text[close - 1] === "\n" ? close - 1 : close;
      return { start, end: close + FENCE.length, body: text.slice(bodyStart, bodyEnd) };
    }
  },
};

/**
 * The formats, in the order they are tried: the first that yields a call wins, as before. A new
 * format goes here, and obeys {@link Format}'s contract.
 */
export const FORMATS: readonly Format[] = [tagged, fenced];

/** Finds text-written tool calls; none when the text holds no call-shaped JSON. */
export function findTextCalls(text: string, meter: Meter = { steps: 0 }): Found {
  const trimmed = text.trim();
  meter.steps += text.length;
  if (trimmed === "") return { calls: [], rest: text };
  // The whole reply is one call (or a list of calls).
  const whole = callsIn(trimmed, meter);
  if (whole) return { calls: whole, rest: "" };
  for (const format of FORMATS) {
    const found = pass(new Scan(text, meter), format);
    if (found.calls.length) return { calls: found.calls, rest: found.rest.trim() };
  }
  return { calls: [], rest: text };
}

/** One format over the whole text: its calls, and the text with their spans taken out. */
function pass(scan: Scan, format: Format): Found {
  const calls: TextCall[] = [];
  const kept: string[] = [];
  let pos = 0;
  for (;;) {
    const span = format.next(scan, pos);
    if (span === null) break;
    if (span.start < pos || span.end <= pos) {
      throw new Error(`text call format '${format.name}' went backwards`);
    }
    scan.meter.steps += span.body.length; // the trim
    const found = callsIn(span.body.trim(), scan.meter);
    kept.push(scan.text.slice(pos, found ? span.start : span.end));
    if (found) calls.push(...found);
    pos = span.end;
  }
  kept.push(scan.text.slice(pos));
  return { calls, rest: kept.join("") };
}

function callsIn(body: string, meter: Meter): TextCall[] | null {
  if (!body.startsWith("{") && !body.startsWith("[")) return null;
  meter.steps += body.length;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: TextCall[] = [];
  for (const item of items) {
    const call = asCall(item);
    if (!call) return null;
    calls.push(call);
  }
  return calls;
}

const CALL_KEYS = new Set([
  "name",
  "tool",
  "tool_name",
  "arguments",
  "parameters",
  "args",
  "input",
  "id",
  "type",
]);

function asCall(item: unknown): TextCall | null {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return null;
  let obj = item as Record<string, unknown>;
  // `{"type": "function", "function": {...}}`, as in the API's own shape.
  if (typeof obj.function === "object" && obj.function !== null) {
    obj = obj.function as Record<string, unknown>;
  }
  const name = obj.name ?? obj.tool ?? obj.tool_name;
  if (typeof name !== "string" || name === "") return null;
  const args = obj.arguments ?? obj.parameters ?? obj.args ?? obj.input;
  // Any other key means this is data that happens to have a name, not a call.
  if (Object.keys(obj).some((k) => !CALL_KEYS.has(k))) return null;
  if (args === undefined) return { name, arguments: "{}" };
  if (typeof args === "string") return { name, arguments: args };
  if (typeof args === "object" && args !== null) {
    try {
      return { name, arguments: JSON.stringify(args) };
    } catch {
      return null; // nested too deep to write out again: not a call anyone meant
    }
  }
  return null;
}
