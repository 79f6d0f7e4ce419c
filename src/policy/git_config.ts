/**
 * A small, strict parser for git's configuration syntax (design.md §13, "Programs that obey the
 * repository"): the repository's `.git/config` is untrusted content, read as data and never
 * handed to git to interpret for us. What git itself accepts is accepted here; anything this
 * parser cannot read with certainty is an error, and the caller refuses the stage (fail closed).
 *
 * - `[section]`, `[section "subsection"]` (quoted, `\"` and `\\` escapes, case-sensitive) and the
 *   legacy `[section.subsection]` (lower-cased, as git does); section names are letters, digits,
 *   `-` and `.`, compared without case.
 * - `key = value`, or a bare `key` (boolean true); keys are a letter then letters, digits and
 *   `-`, compared without case. A key may follow its section header on the same line.
 * - Values: leading and trailing blanks dropped outside quotes, `"` toggles quoting, escapes
 *   `\n`, `\t`, `\b`, `\\`, `\"`, and `\` at the end of a line continues the value.
 * - Comments: `#` or `;` to the end of the line, outside quotes.
 * - CRLF line ends and a leading UTF-8 byte-order mark, as git allows. A NUL byte is an error.
 */
import { err, ok, type Result } from "../util/result.ts";

export interface ConfigEntry {
  /** Lower-cased. */
  section: string;
  /** As written (quoted form), lower-cased for the legacy dotted form; null when none. */
  subsection: string | null;
  /** Lower-cased. */
  key: string;
  /** Null for a bare key (git reads it as boolean true). */
  value: string | null;
  /** 1-based line of the key, for tests and messages about the file (never its content). */
  line: number;
}

const SECTION_CHAR = /[A-Za-z0-9.-]/;
const KEY_START = /[A-Za-z]/;
const KEY_CHAR = /[A-Za-z0-9-]/;

/** The full name of an entry as git prints it: `section.subsection.key` (`section.key`). */
export function entryName(e: ConfigEntry): string {
  return e.subsection === null ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
}

/** Parses one configuration file's text; an error says where, never what the file holds. */
export function parseGitConfig(input: string): Result<ConfigEntry[]> {
  if (input.includes("\0")) return err("it contains a NUL byte");
  let text = input.startsWith("\uFEFF") ? input.slice(1) : input;
  text = text.replace(/\r\n/g, "\n");
  const entries: ConfigEntry[] = [];
  let i = 0;
  let line = 1;
  let section: string | null = null;
  let subsection: string | null = null;
  const fail = (what: string) => err<ConfigEntry[]>(`line ${line}: ${what}`);
  const blank = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\f";

  const skipComment = () => {
    while (i < text.length && text[i] !== "\n") i++;
  };

  while (i < text.length) {
    const c = text[i];
    if (c === "\n") {
      line++;
      i++;
      continue;
    }
    if (blank(c)) {
      i++;
      continue;
    }
    if (c === "#" || c === ";") {
      skipComment();
      continue;
    }
    if (c === "[") {
      i++;
      let name = "";
      while (i < text.length && SECTION_CHAR.test(text[i])) name += text[i++];
      if (name === "") return fail("a section header has no name");
      if (text[i] === "]") {
        i++;
        const dot = name.indexOf(".");
        if (dot === 0 || name.endsWith(".")) return fail("a section name is malformed");
        if (dot > 0) {
          // Legacy `[section.subsection]`: the subsection is compared without case.
          section = name.slice(0, dot).toLowerCase();
          subsection = name.slice(dot + 1).toLowerCase();
        } else {
          section = name.toLowerCase();
          subsection = null;
        }
        continue;
      }
      if (!blank(text[i])) return fail("a section header is malformed");
      while (blank(text[i])) i++;
      if (text[i] !== '"') return fail("a subsection name must be quoted");
      if (name.includes(".")) return fail("a section name with a subsection may not hold a dot");
      i++;
      let sub = "";
      for (;;) {
        const s = text[i];
        if (s === undefined || s === "\n") return fail("a subsection name is not closed");
        if (s === '"') {
          i++;
          break;
        }
        if (s === "\\") {
          const next = text[i + 1];
          if (next === undefined || next === "\n") return fail("a subsection name is not closed");
          sub += next;
          i += 2;
          continue;
        }
        sub += s;
        i++;
      }
      if (text[i] !== "]") return fail("a section header is not closed");
      i++;
      section = name.toLowerCase();
      subsection = sub;
      continue;
    }
    if (!KEY_START.test(c)) return fail("a line is neither a section, a key nor a comment");
    if (section === null) return fail("a key comes before any section");
    let key = "";
    const keyLine = line;
    while (i < text.length && KEY_CHAR.test(text[i])) key += text[i++];
    while (blank(text[i])) i++;
    const after = text[i];
    if (after === undefined || after === "\n" || after === "#" || after === ";") {
      entries.push({ section, subsection, key: key.toLowerCase(), value: null, line: keyLine });
      if (after === "#" || after === ";") skipComment();
      continue;
    }
    if (after !== "=") return fail("a key is followed by something other than =");
    i++;
    // The value, as git reads it.
    let value = "";
    let pending = ""; // blanks seen outside quotes, kept only if more value follows
    let quoted = false;
    let started = false;
    for (;;) {
      const v = text[i];
      if (v === undefined || v === "\n") {
        if (quoted) return fail("a quoted value is not closed");
        break;
      }
      if (!quoted && (v === "#" || v === ";")) {
        skipComment();
        break;
      }
      if (!quoted && blank(v)) {
        if (started) pending += v;
        i++;
        continue;
      }
      if (v === '"') {
        value += pending;
        pending = "";
        started = true;
        quoted = !quoted;
        i++;
        continue;
      }
      if (v === "\\") {
        const next = text[i + 1];
        if (next === "\n") {
          // A continued line: the value goes on after the line break, and the blanks before the
          // backslash are kept (git adds them before it looks at the backslash).
          value += pending;
          pending = "";
          line++;
          i += 2;
          continue;
        }
        const escaped = next === "n"
          ? "\n"
          : next === "t"
          ? "\t"
          : next === "b"
          ? "\b"
          : next === "\\" || next === '"'
          ? next
          : null;
        if (escaped === null) return fail("a value holds an unknown escape");
        value += pending + escaped;
        pending = "";
        started = true;
        i += 2;
        continue;
      }
      value += (quoted ? "" : pending) + v;
      pending = "";
      started = true;
      i++;
    }
    entries.push({ section, subsection, key: key.toLowerCase(), value, line: keyLine });
  }
  return ok(entries);
}
