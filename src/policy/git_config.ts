/**
 * A small, strict parser for git's configuration syntax (docs/contract.md §13.6, "Programs that
 * obey the repository"): the repository's `.git/config` is untrusted content, read as data and
 * never handed to git to interpret for us. What git itself accepts is accepted here; anything this
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
 *
 * It also holds what an untrusted configuration may set ({@link untrustedKeyRefusal}): a short
 * allow-list of keys known to run nothing and to name no file, every other key refused.
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

// ---- What an untrusted configuration may set (docs/contract.md §13.6) ----

/**
 * How an allowed key's value is judged (docs/decisions.md, "Git", says why each key is here):
 * - `any`: git reads the value as data; it runs nothing and names no file outside git's own.
 * - `overridden`: a key of the guard's fixed overrides (`GIT_OVERRIDES`), which decide what git
 *   runs whatever the repository says.
 * - `url`: only a URL git reaches over the network ({@link isNetworkUrl}).
 * - `remote`: `.`, a remote the same configuration gives a URL, or a network URL.
 * - `place`: a path the guard resolves and requires inside the workspace (`core.worktree`).
 * - `include`: a file the guard reads with these same rules.
 * - a list: only those values.
 */
export type ValueRule =
  | "any"
  | "overridden"
  | "url"
  | "remote"
  | "place"
  | "include"
  | readonly string[];

/**
 * The allow-list, in git's own spelling (`<name>` is any subsection; another subsection is matched
 * as written): what `git init`, `clone`, `remote`, `branch`, `submodule`, `worktree`,
 * `sparse-checkout` and `maintenance register` write, a commit identity, git-lfs's format
 * marker, and the keys the fixed overrides decide.
 */
export const ALLOWED: readonly (readonly [key: string, rule: ValueRule])[] = [
  ["core.repositoryFormatVersion", "any"],
  ["core.bare", "any"],
  ["core.fileMode", "any"],
  ["core.logAllRefUpdates", "any"],
  ["core.ignoreCase", "any"],
  ["core.precomposeUnicode", "any"],
  ["core.symlinks", "any"],
  ["core.autocrlf", "any"],
  ["core.eol", "any"],
  ["core.safecrlf", "any"],
  ["core.sparseCheckout", "any"],
  ["core.sparseCheckoutCone", "any"],
  ["core.worktree", "place"],
  ["core.fsmonitor", "overridden"],
  ["core.hooksPath", "overridden"],
  ["core.pager", "overridden"],
  ["core.sshCommand", "overridden"],
  ["credential.helper", "overridden"],
  ["gpg.program", "overridden"],
  ["gpg.openpgp.program", "overridden"],
  ["gpg.ssh.program", "overridden"],
  ["gpg.x509.program", "overridden"],
  ["extensions.objectFormat", "any"],
  ["extensions.worktreeConfig", "any"],
  ["extensions.partialClone", "any"],
  ["extensions.preciousObjects", "any"],
  ["extensions.refStorage", "any"],
  ["index.sparse", "any"],
  ["remote.<name>.url", "url"],
  ["remote.<name>.pushurl", "url"],
  ["remote.<name>.fetch", "any"],
  ["remote.<name>.push", "any"],
  ["remote.<name>.tagOpt", "any"],
  ["remote.<name>.mirror", "any"],
  ["remote.<name>.prune", "any"],
  ["remote.<name>.promisor", "any"],
  ["remote.<name>.partialCloneFilter", "any"],
  ["branch.<name>.remote", "remote"],
  ["branch.<name>.pushRemote", "remote"],
  ["branch.<name>.merge", "any"],
  ["branch.<name>.rebase", "any"],
  ["branch.<name>.description", "any"],
  ["submodule.<name>.url", "url"],
  ["submodule.<name>.active", "any"],
  ["submodule.<name>.update", ["checkout", "rebase", "merge", "none"]],
  ["submodule.active", "any"],
  ["user.name", "any"],
  ["user.email", "any"],
  ["maintenance.auto", "any"],
  ["maintenance.strategy", "any"],
  ["lfs.repositoryFormatVersion", "any"],
  ["include.path", "include"],
  ["includeIf.<condition>.path", "include"],
];

/**
 * The lookup name of a key as git's documentation spells it: section and key without case, a
 * placeholder (`<name>`) as `*`, a literal subsection as written.
 */
function lookupName(key: string): string {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  const section = key.slice(0, first).toLowerCase();
  const name = key.slice(last + 1).replace(/^<.*>$/, "*").toLowerCase();
  if (first === last) return `${section}.${name}`;
  return `${section}.${key.slice(first + 1, last).replace(/^<.*>$/, "*")}.${name}`;
}

const ALLOWED_BY_NAME = new Map(
  ALLOWED.map(([key, rule]) => [lookupName(key), { rule, category: key }]),
);

/** The entry's row of the allow-list, or null when the key is not on it. */
function allowedRow(e: ConfigEntry): { rule: ValueRule; category: string } | null {
  if (e.subsection === null) return ALLOWED_BY_NAME.get(`${e.section}.${e.key}`) ?? null;
  return ALLOWED_BY_NAME.get(`${e.section}.${e.subsection}.${e.key}`) ??
    ALLOWED_BY_NAME.get(`${e.section}.*.${e.key}`) ?? null;
}

/** Values of `pager.<command>` that page through nothing the repository chose. */
const HARMLESS_PAGER = new Set([
  "true",
  "false",
  "yes",
  "no",
  "on",
  "off",
  "1",
  "0",
  "cat",
  "less",
]);

/** git's own network transports: each runs git's own program or ssh (overridden), none a URL names. */
const NETWORK_SCHEME = /^(?:https?|ftps?|ssh|git|git\+ssh|ssh\+git):\/\/[^-]/;
/** `[user@]host:path`, which git reaches over ssh. */
const SCP_LIKE = /^(?:[A-Za-z0-9._~+-]+@)?(?:[A-Za-z0-9][A-Za-z0-9.-]*|\[[^\]/]+\]):(?!:)/;

/**
 * Whether git reaches this URL over the network with its own programs. Refused: `<transport>::…`
 * and any other `scheme://` (git runs a helper program named after it), a path or `file://` URL
 * (a repository on this machine: git clears its `-c` overrides for the other side, so a push runs
 * that repository's hooks), a value that begins with `-`, and control characters.
 */
export function isNetworkUrl(v: string | null): boolean {
  if (v === null || v.startsWith("-") || [...v].some((c) => c < " " || c === "\x7f")) return false;
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(v)) return false;
  if (NETWORK_SCHEME.test(v)) return true;
  if (v.includes("://")) return false;
  const colon = v.indexOf(":");
  const slash = v.indexOf("/");
  if (colon < 0 || (slash >= 0 && slash < colon)) return false; // a path, as git tells them
  return SCP_LIKE.test(v);
}

const COMMAND = "a command git would run";
const FILE = "a file git would read, wherever the repository points it";
const CONNECTS = "where or how git connects";
const CREDENTIALS = "how git finds credentials";
const PROTOCOLS = "which transports git may use, some of which run commands";
const REWRITES = "a rewriting of URLs, which can turn one into a command";
const TOOL = "a tool git would start";

/**
 * Refused keys Brave Bot names to the planner, spelt as git's documentation spells them (a
 * placeholder such as `<driver>` is any subsection; `alias.<name>` is any key of the section). Only words: whether a key is refused is the
 * allow-list's decision; a key refused and not named here reaches the planner as "a key not on
 * the list", its name only the person's.
 */
const NAMED: readonly (readonly [category: string, what: string])[] = [
  ["alias.<name>", COMMAND],
  ["diff.external", COMMAND],
  ["diff.<driver>.command", COMMAND],
  ["diff.<driver>.textconv", COMMAND],
  ["filter.<driver>.clean", COMMAND],
  ["filter.<driver>.smudge", COMMAND],
  ["filter.<driver>.process", COMMAND],
  ["merge.<driver>.driver", COMMAND],
  ["merge.tool", TOOL],
  ["merge.guitool", TOOL],
  ["diff.tool", TOOL],
  ["diff.guitool", TOOL],
  ["difftool.<tool>.cmd", COMMAND],
  ["difftool.<tool>.path", COMMAND],
  ["mergetool.<tool>.cmd", COMMAND],
  ["mergetool.<tool>.path", COMMAND],
  ["man.<tool>.cmd", COMMAND],
  ["man.<tool>.path", COMMAND],
  ["browser.<tool>.cmd", COMMAND],
  ["browser.<tool>.path", COMMAND],
  ["guitool.<name>.cmd", COMMAND],
  ["man.viewer", TOOL],
  ["web.browser", TOOL],
  ["help.browser", TOOL],
  ["trailer.<token>.command", COMMAND],
  ["trailer.<token>.cmd", COMMAND],
  ["submodule.<name>.update", COMMAND],
  ["remote.<name>.uploadpack", COMMAND],
  ["remote.<name>.receivepack", COMMAND],
  ["remote.<name>.vcs", COMMAND],
  ["remote.<name>.proxy", CONNECTS],
  ["uploadpack.packObjectsHook", COMMAND],
  ["core.alternateRefsCommand", COMMAND],
  ["core.gitProxy", COMMAND],
  ["core.editor", COMMAND],
  ["core.askPass", COMMAND],
  ["core.excludesFile", FILE],
  ["core.attributesFile", FILE],
  ["sequence.editor", COMMAND],
  ["interactive.diffFilter", COMMAND],
  ["gpg.ssh.defaultKeyCommand", COMMAND],
  ["gpg.ssh.allowedSignersFile", FILE],
  ["gpg.ssh.revocationFile", FILE],
  ["tar.<format>.command", COMMAND],
  ["imap.tunnel", COMMAND],
  ["sendemail.toCmd", COMMAND],
  ["sendemail.ccCmd", COMMAND],
  ["sendemail.headerCmd", COMMAND],
  ["sendemail.sendmailCmd", COMMAND],
  ["sendemail.smtpServer", COMMAND],
  ["sendemail.<identity>.toCmd", COMMAND],
  ["sendemail.<identity>.ccCmd", COMMAND],
  ["sendemail.<identity>.headerCmd", COMMAND],
  ["sendemail.<identity>.sendmailCmd", COMMAND],
  ["sendemail.<identity>.smtpServer", COMMAND],
  ["instaweb.httpd", TOOL],
  ["instaweb.browser", TOOL],
  ["instaweb.modulePath", TOOL],
  ["instaweb.local", TOOL],
  ["instaweb.port", TOOL],
  ["svn.authorsProg", COMMAND],
  ["svn.authorsFile", FILE],
  ["credential.<url>.helper", COMMAND],
  ["credential.username", CREDENTIALS],
  ["credential.useHttpPath", CREDENTIALS],
  ["credential.protectProtocol", CREDENTIALS],
  ["protocol.allow", PROTOCOLS],
  ["protocol.<name>.allow", PROTOCOLS],
  ["http.proxy", CONNECTS],
  ["http.<url>.proxy", CONNECTS],
  ["http.cookieFile", FILE],
  ["url.<base>.insteadOf", REWRITES],
  ["url.<base>.pushInsteadOf", REWRITES],
  ["mailmap.file", FILE],
  ["commit.template", FILE],
  ["blame.ignoreRevsFile", FILE],
  ["pager.<command>", COMMAND],
];

const NAMED_BY_NAME = new Map(
  NAMED.map(([category, what]) => [lookupName(category), { category, what }]),
);

/** Brave Bot's own name for a refused key, or null when it has none. */
function namedRow(e: ConfigEntry): { category: string; what: string } | null {
  if (e.subsection === null) {
    return NAMED_BY_NAME.get(`${e.section}.${e.key}`) ?? NAMED_BY_NAME.get(`${e.section}.*`) ??
      null;
  }
  return NAMED_BY_NAME.get(`${e.section}.${e.subsection}.${e.key}`) ??
    NAMED_BY_NAME.get(`${e.section}.*.${e.key}`) ?? null;
}

export interface KeyRefusal {
  /**
   * Brave Bot's own name for the key's kind (`tar.<format>.command`), for the planner; null for
   * a key it does not name, whose name is the repository's text and only the person's to see.
   */
  category: string | null;
  /** What setting it would decide, in Brave Bot's words. */
  what: string;
}

/**
 * Why an untrusted configuration may not hold this entry, or null when it may (the one rule of
 * docs/contract.md §13.6's allow-list): a key not on {@link ALLOWED} is refused, and an allowed key
 * whose value would make git run something (a `pager.<command>` other than a boolean, `cat` or
 * `less`; a URL git hands to a helper or to a repository on this machine). `remotes` are the remote
 * names the same configuration gives a URL. `core.worktree` and includes are allowed here: the
 * guard decides where they lead.
 */
export function untrustedKeyRefusal(
  e: ConfigEntry,
  remotes: ReadonlySet<string>,
): KeyRefusal | null {
  if (e.section === "pager" && e.subsection === null) {
    if (e.value === null || HARMLESS_PAGER.has(e.value.trim().toLowerCase())) return null;
    return { category: "pager.<command>", what: COMMAND };
  }
  const row = allowedRow(e);
  if (row === null) {
    return namedRow(e) ?? {
      category: null,
      what: "a key that is not on the list of keys known to run nothing",
    };
  }
  const { rule, category } = row;
  const v = e.value;
  if (Array.isArray(rule)) {
    return v !== null && rule.includes(v) ? null : { category, what: COMMAND };
  }
  switch (rule) {
    case "url":
      return isNetworkUrl(v) ? null : {
        category,
        what: "a URL git would hand to a helper program or to a repository on this machine",
      };
    case "remote":
      return v === "." || (v !== null && remotes.has(v)) || isNetworkUrl(v) ? null : {
        category,
        what: "a remote it gives no URL, which git would take as a path or a helper's URL",
      };
    default:
      return null;
  }
}

/** The remote names a configuration gives a URL (what `branch.<name>.remote` may name). */
export function definedRemotes(entries: readonly ConfigEntry[]): Set<string> {
  return new Set(
    entries.flatMap((e) =>
      e.section === "remote" && e.subsection !== null && e.key === "url" ? [e.subsection] : []
    ),
  );
}
