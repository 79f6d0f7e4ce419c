/**
 * Tool calls a small local model wrote into its text instead of the `tool_calls` field: the
 * whole reply as a JSON call (or Llama's calls joined by `;`), a fenced JSON block,
 * `<tool_call>` tags holding JSON, a Python dict literal (Hermes) or Qwen3-Coder's
 * `<function=…>` markup, Mistral's `[TOOL_CALLS]` in both its forms, and Llama 3's
 * `<|python_tag|>` (the chat templates and servers as they are: docs/model.md). They are handled
 * as calls; prose that merely mentions JSON or a marker is left alone. Reasoning at the start of
 * the reply (`<think>…</think>`, src/util/reasoning.ts) is taken out first: a call written
 * inside it was only thought about, and is never a call.
 *
 * The reply is the planner model's, and it can be anything (a model that loops writes the same
 * opener thousands of times), so recovery takes time linear in the reply's length whatever its
 * shape: each format is a scanner that never looks back (see {@link Format}), not a regular
 * expression that retries from every opener.
 */

import { isSpace, stripReasoning } from "../util/reasoning.ts";

export interface TextCall {
  name: string;
  /** The arguments as a JSON string, as a proper tool call would carry them. */
  arguments: string;
}

export interface Found {
  calls: TextCall[];
  /** The text with the leading reasoning and the recognised calls taken out. */
  rest: string;
  /** The leading reasoning taken out (blocks without their tags); empty when there was none. */
  reasoning: string[];
}

/**
 * The JSON type a tool's schema gives a parameter (`"string"`, `"integer"`, …), or undefined
 * when the tool or the parameter is unknown. Qwen3-Coder writes every value as raw text; this
 * is how a value is typed (see {@link typedValue}).
 */
export type ParamType = (tool: string, param: string) => string | undefined;

export interface Options {
  paramType?: ParamType;
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
  constructor(
    readonly text: string,
    readonly meter: Meter,
    readonly paramType: ParamType = () => undefined,
  ) {}

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

/**
 * One candidate for a call: the characters [start, end) it occupies and the body inside, which
 * the format's `read` (JSON by default) turns into calls — or the calls themselves, for a
 * format that parsed them while finding the span (null: the span is not a call after all).
 */
export interface Span {
  start: number;
  end: number;
  body: string;
  calls?: TextCall[] | null;
}

/**
 * One way of writing calls in text. `next` finds the first candidate at or after `from`, or
 * null when the rest of the text holds none. The contract that keeps recovery linear: it looks
 * at no character before `from`, no further than the end of the span it returns (or the end of
 * the text when it returns null), and returns a span that ends after `from`; a pass then looks
 * at each character a bounded number of times. An opener whose closer is missing ends the pass
 * (return null) — when no later opener could be closed either, or because a call that never
 * ends leaves nothing after it that can be trusted to be a call — or is skipped at a cost
 * bounded by its own length; never by searching the rest of the text again for each opener,
 * which is what made the regular expressions this replaced quadratic.
 */
export interface Format {
  name: string;
  /** The literal markers of the format, for tests that build hostile text out of them. */
  markers: readonly string[];
  next(scan: Scan, from: number): Span | null;
  /** A span's body as calls, or null; JSON ({@link callsIn}) when absent. Linear in the body. */
  read?(body: string, scan: Scan): TextCall[] | null;
}

const TAG_OPEN = "<tool_call>";
const TAG_CLOSE = "</tool_call>";
const FUNCTION_OPEN = "<function=";
const FUNCTION_CLOSE = "</function>";
const PARAM_OPEN = "<parameter=";
const PARAM_CLOSE = "</parameter>";
const MISTRAL = "[TOOL_CALLS]";
const MISTRAL_ARGS = "[ARGS]";
const MISTRAL_ID = "[CALL_ID]";
const PYTHON_TAG = "<|python_tag|>";

/**
 * `<tool_call>…</tool_call>`: each opener is paired with the first closer after it. The body is
 * JSON (Hermes, Qwen 2.5), a Python dict literal (Hermes 2 Pro's own prompt asks for
 * `{'arguments': <args-dict>, 'name': <function-name>}`), or Qwen3-Coder's `<function=…>`.
 */
const tagged: Format = {
  name: "tool_call tags",
  markers: [TAG_OPEN, TAG_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE],
  read(body, scan) {
    const trimmed = body.trim();
    scan.meter.steps += body.length;
    if (trimmed.startsWith(FUNCTION_OPEN)) return xmlCalls(trimmed, scan);
    const json = callsIn(trimmed, scan.meter);
    if (json || !trimmed.startsWith("{")) return json;
    scan.meter.steps += trimmed.length;
    const value = pythonLiteral(trimmed);
    const call = value === undefined ? null : asCall(value);
    return call ? [call] : null;
  },
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

const isNameChar = (c: string) => /[A-Za-z0-9_.-]/.test(c);

/**
 * The end (exclusive) of the JSON object or array that starts at `at`, found by counting
 * brackets outside strings; -1 when it never closes. Only the extent: JSON.parse judges it.
 */
function extent(scan: Scan, at: number): number {
  const text = scan.text;
  let depth = 0;
  let inString = false;
  let i = at;
  for (; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) break;
    }
  }
  scan.meter.steps += i - at + 1;
  return i < text.length ? i + 1 : -1;
}

/** The JSON at [start, end) as one object, or undefined. */
function objectAt(scan: Scan, start: number, end: number): Record<string, unknown> | undefined {
  scan.meter.steps += end - start;
  try {
    const value = JSON.parse(scan.text.slice(start, end));
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    // not JSON: not a call
  }
  return undefined;
}

/**
 * Llama 3's calls from `at` (a `{`): JSON objects joined by `;`, each a call. The end of the
 * last object and the calls (null when one is not a call), or null when an object never closes.
 */
function llamaCalls(scan: Scan, at: number): { end: number; calls: TextCall[] | null } | null {
  const calls: TextCall[] = [];
  let ok = true;
  let end = at;
  for (let i = at;;) {
    const close = extent(scan, i);
    if (close === -1) return null;
    const value = objectAt(scan, i, close);
    const call = value === undefined ? null : asCall(value);
    if (call) calls.push(call);
    else ok = false;
    end = close;
    const semi = scan.skip(close, isSpace);
    if (scan.text[semi] !== ";") break;
    const next = scan.skip(semi + 1, isSpace);
    if (scan.text[next] !== "{") break;
    i = next;
  }
  return { end, calls: ok ? calls : null };
}

/**
 * Mistral's `[TOOL_CALLS]`: followed by a JSON list of `{"name", "arguments", "id"}` (Mistral 7B
 * v0.3, Nemo), or by `name[ARGS]{…}` (the newer tokenizers; the older v11 form `name{…}` and a
 * `[CALL_ID]id` before `[ARGS]` are taken too), possibly repeated. A marker followed by anything
 * else is prose about the marker.
 */
const mistral: Format = {
  name: "mistral [TOOL_CALLS]",
  markers: [MISTRAL, MISTRAL_ARGS, MISTRAL_ID],
  next(scan, from) {
    const text = scan.text;
    for (let at = from;;) {
      const start = scan.find(MISTRAL, at);
      if (start === -1) return null;
      const i = scan.skip(start + MISTRAL.length, isSpace);
      // A list holds objects: `[` and anything else (another marker, prose) is not a call.
      const listed = text[i] === "[" && text[scan.skip(i + 1, isSpace)] === "{";
      if (listed || text[i] === "{") {
        const end = extent(scan, i);
        // A list that never closes: nothing after it can be trusted to be a call.
        if (end === -1) return null;
        return { start, end, body: text.slice(i, end) };
      }
      const nameEnd = scan.skip(i, isNameChar);
      if (nameEnd === i) {
        at = i;
        continue;
      }
      let j = nameEnd;
      if (scan.has(MISTRAL_ID, j)) j = scan.skip(j + MISTRAL_ID.length, isNameChar);
      if (scan.has(MISTRAL_ARGS, j)) j += MISTRAL_ARGS.length;
      if (text[j] !== "{") {
        at = j;
        continue;
      }
      const end = extent(scan, j);
      if (end === -1) return null;
      const args = objectAt(scan, j, end);
      const name = text.slice(i, nameEnd);
      return {
        start,
        end,
        body: "",
        calls: args === undefined ? null : [{ name, arguments: JSON.stringify(args) }],
      };
    }
  },
};

/**
 * Llama 3.x's `<|python_tag|>`: JSON calls (`{"name", "parameters"}`, with or without
 * `"type": "function"`), several joined by `;`. A tag not followed by `{` is prose.
 */
const pythonTag: Format = {
  name: "llama <|python_tag|>",
  markers: [PYTHON_TAG, ";"],
  next(scan, from) {
    for (let at = from;;) {
      const start = scan.find(PYTHON_TAG, at);
      if (start === -1) return null;
      const i = scan.skip(start + PYTHON_TAG.length, isSpace);
      if (scan.text[i] !== "{") {
        at = i;
        continue;
      }
      const found = llamaCalls(scan, i);
      if (found === null) return null;
      return { start, end: found.end, body: "", calls: found.calls };
    }
  },
};

/**
 * The formats, in the order they are tried: the first that yields a call wins, as before. A new
 * format goes here, and obeys {@link Format}'s contract.
 */
export const FORMATS: readonly Format[] = [tagged, fenced, mistral, pythonTag];

/** Finds text-written tool calls; none when the text holds no call-shaped JSON. */
export function findTextCalls(
  text: string,
  meter: Meter = { steps: 0 },
  options: Options = {},
): Found {
  meter.steps += text.length;
  const { text: answer, reasoning } = stripReasoning(text, (n) => meter.steps += n);
  const trimmed = answer.trim();
  if (trimmed === "") return { calls: [], rest: answer, reasoning };
  // The whole reply is one call (or a list of calls, or Llama's calls joined by `;`).
  const whole = callsIn(trimmed, meter) ?? llamaWhole(new Scan(trimmed, meter));
  if (whole) return { calls: whole, rest: "", reasoning };
  for (const format of FORMATS) {
    const found = pass(new Scan(answer, meter, options.paramType), format);
    if (found.calls.length) return { calls: found.calls, rest: found.rest.trim(), reasoning };
  }
  return { calls: [], rest: answer, reasoning };
}

/** `{…}; {…}` making up the whole text, each a call. */
function llamaWhole(scan: Scan): TextCall[] | null {
  if (!scan.text.startsWith("{")) return null;
  const found = llamaCalls(scan, 0);
  if (found === null) return null;
  // A `;` may end the last call too.
  let end = found.end;
  if (scan.text[end] === ";") end = scan.skip(end + 1, isSpace);
  return end === scan.text.length ? found.calls : null;
}

/** One format over the whole text: its calls, and the text with their spans taken out. */
function pass(scan: Scan, format: Format): { calls: TextCall[]; rest: string } {
  const calls: TextCall[] = [];
  const kept: string[] = [];
  let pos = 0;
  for (;;) {
    const span = format.next(scan, pos);
    if (span === null) break;
    if (span.start < pos || span.end <= pos) {
      throw new Error(`text call format '${format.name}' went backwards`);
    }
    let found: TextCall[] | null;
    if (span.calls !== undefined) found = span.calls;
    else if (format.read) found = format.read(span.body, scan);
    else {
      scan.meter.steps += span.body.length; // the trim
      found = callsIn(span.body.trim(), scan.meter);
    }
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

/**
 * Qwen3-Coder's calls inside one `<tool_call>`: `<function=NAME>`, then `<parameter=P>` value
 * `</parameter>` for each parameter, then `</function>` (one or more functions). A value is the
 * raw text between the tags, less one newline after the opener and one before the closer; it is
 * typed by {@link typedValue}. Anything else in the body, a tag left open, or a parameter given
 * twice, and the body is not a call.
 */
function xmlCalls(body: string, scan: Scan): TextCall[] | null {
  const calls: TextCall[] = [];
  const at = new Scan(body, scan.meter);
  let pos = 0;
  for (;;) {
    pos = at.skip(pos, isSpace);
    if (pos === body.length) break;
    if (!at.has(FUNCTION_OPEN, pos)) return null;
    const nameStart = pos + FUNCTION_OPEN.length;
    const nameEnd = at.skip(nameStart, isNameChar);
    if (nameEnd === nameStart || body[nameEnd] !== ">") return null;
    const name = body.slice(nameStart, nameEnd);
    const args: Record<string, unknown> = {};
    pos = nameEnd + 1;
    for (;;) {
      pos = at.skip(pos, isSpace);
      if (at.has(FUNCTION_CLOSE, pos)) {
        pos += FUNCTION_CLOSE.length;
        break;
      }
      if (!at.has(PARAM_OPEN, pos)) return null;
      const keyStart = pos + PARAM_OPEN.length;
      const keyEnd = at.skip(keyStart, isNameChar);
      if (keyEnd === keyStart || body[keyEnd] !== ">") return null;
      const key = body.slice(keyStart, keyEnd);
      if (Object.hasOwn(args, key)) return null;
      const close = at.find(PARAM_CLOSE, keyEnd + 1);
      if (close === -1) return null;
      let value = body.slice(keyEnd + 1, close);
      if (value.startsWith("\n")) value = value.slice(1);
      if (value.endsWith("\n")) value = value.slice(0, -1);
      args[key] = typedValue(value, scan.paramType(name, key));
      pos = close + PARAM_CLOSE.length;
    }
    calls.push({ name, arguments: JSON.stringify(args) });
  }
  return calls.length ? calls : null;
}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * A Qwen3-Coder value as the tool's schema types the parameter. The decision (docs/model.md):
 * a value is the string as written unless the schema gives the parameter another type and the
 * value is exactly one of that type — an integer or number written as JSON writes it, `true` or
 * `false`, `null`, or JSON of an object or array. Anything else stays the string it was, for
 * the schema check to report; an unknown tool or parameter gets the string.
 */
export function typedValue(value: string, type: string | undefined): unknown {
  if (type === undefined || type === "string") return value;
  const v = value.trim();
  switch (type) {
    case "integer":
      return INTEGER.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : value;
    case "number":
      return NUMBER.test(v) && Number.isFinite(Number(v)) ? Number(v) : value;
    case "boolean":
      return v === "true" ? true : v === "false" ? false : value;
    case "null":
      return v === "null" ? null : value;
    case "object":
    case "array": {
      if (!v.startsWith(type === "object" ? "{" : "[")) return value;
      try {
        const parsed = JSON.parse(v);
        return Array.isArray(parsed) === (type === "array") ? parsed : value;
      } catch {
        return value;
      }
    }
    default:
      return value;
  }
}

/** How deep a Python literal may nest before it is refused. */
const PY_DEPTH = 64;

/**
 * A Python literal read as DATA, never evaluated: dicts with string keys, lists, strings in
 * `'` or `"` (the escapes `\\ \' \" \n \r \t \b \f \/ \xHH \uHHHH`), integers and decimals
 * written plainly, `True`, `False`, `None`. Anything else — a name, a call, an operator, an
 * f-string or other prefixed string, a tuple, a set, adjacent strings — and the text is
 * refused (undefined). One pass over the text, nesting at most {@link PY_DEPTH} deep.
 */
export function pythonLiteral(text: string): unknown {
  let i = 0;
  const fail = Symbol("fail");
  const space = () => {
    while (i < text.length && isSpace(text[i])) i++;
  };
  const value = (depth: number): unknown => {
    if (depth > PY_DEPTH) return fail;
    space();
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      const obj: Record<string, unknown> = {};
      const list: unknown[] = [];
      space();
      while (text[i] !== close) {
        if (c === "{") {
          const key = value(depth + 1);
          if (typeof key !== "string") return fail;
          space();
          if (text[i++] !== ":") return fail;
          const v = value(depth + 1);
          if (v === fail || Object.hasOwn(obj, key)) return fail;
          obj[key] = v;
        } else {
          const v = value(depth + 1);
          if (v === fail) return fail;
          list.push(v);
        }
        space();
        if (text[i] === ",") {
          i++;
          space();
        } else if (text[i] !== close) return fail;
      }
      i++;
      return c === "{" ? obj : list;
    }
    if (c === "'" || c === '"') return str(c);
    if (c === "-" || (c >= "0" && c <= "9")) {
      const start = i;
      if (text[i] === "-") i++;
      while (i < text.length && /[0-9.eE+-]/.test(text[i])) i++;
      const n = text.slice(start, i);
      return NUMBER.test(n) && Number.isFinite(Number(n)) ? Number(n) : fail;
    }
    for (const [word, v] of [["True", true], ["False", false], ["None", null]] as const) {
      if (text.startsWith(word, i) && !/[A-Za-z0-9_]/.test(text[i + word.length] ?? "")) {
        i += word.length;
        return v;
      }
    }
    return fail;
  };
  const ESCAPES: Record<string, string> = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    n: "\n",
    r: "\r",
    t: "\t",
    b: "\b",
    f: "\f",
    "/": "/",
  };
  const str = (quote: string): string | typeof fail => {
    i++;
    let out = "";
    for (;;) {
      const c = text[i++];
      if (c === undefined || c === "\n") return fail;
      if (c === quote) break;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = text[i++];
      if (e === "x" || e === "u") {
        const digits = text.slice(i, i + (e === "x" ? 2 : 4));
        if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== (e === "x" ? 2 : 4)) return fail;
        out += String.fromCharCode(parseInt(digits, 16));
        i += digits.length;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) out += ESCAPES[e];
      else return fail;
    }
    // 'a' 'b' is concatenation in Python: an expression, refused.
    const after = i;
    space();
    if (text[i] === "'" || text[i] === '"') return fail;
    i = after;
    return out;
  };
  const result = value(0);
  space();
  return result === fail || i !== text.length ? undefined : result;
}
