import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  ALLOWED,
  type ConfigEntry,
  definedRemotes,
  entryName,
  isNetworkUrl,
  type KeyRefusal,
  parseGitConfig,
  untrustedKeyRefusal,
} from "./git_config.ts";
import { GIT_OVERRIDES } from "./git_guard.ts";

function parsed(text: string): ConfigEntry[] {
  const r = parseGitConfig(text);
  assert.ok(r.ok, r.ok ? "" : r.error);
  return r.value;
}

const pairs = (text: string) => parsed(text).map((e) => [entryName(e), e.value]);

Deno.test("git config: sections, subsections, legacy form, keys without case", () => {
  const text = [
    "# comment",
    "; another",
    "[Core]",
    "\tFileMode = true",
    "\tbare",
    '[remote "Origin"] url = x',
    "[Branch.Main]",
    "  remote=origin",
    '[diff "a\\"b\\\\c"]',
    "\ttextconv = t",
  ].join("\n");
  assert.deepEqual(pairs(text), [
    ["core.filemode", "true"],
    ["core.bare", null],
    ["remote.Origin.url", "x"],
    ["branch.main.remote", "origin"],
    ['diff.a"b\\c.textconv', "t"],
  ]);
});

Deno.test("git config: values — quotes, escapes, comments, continuation, blanks", () => {
  const text = [
    "[a]",
    'k1 = "  spaced  " tail  ',
    "k2 = one # comment",
    'k3 = "has # and ;" ; comment',
    'k4 = a\\tb\\nc\\\\d\\"e',
    "k5 = first \\",
    "  second",
    "k6 =",
    "k7 = x  y",
  ].join("\r\n");
  assert.deepEqual(pairs(text), [
    ["a.k1", "  spaced   tail"],
    ["a.k2", "one"],
    ["a.k3", "has # and ;"],
    ["a.k4", 'a\tb\nc\\d"e'],
    ["a.k5", "first   second"],
    ["a.k6", ""],
    ["a.k7", "x  y"],
  ]);
});

Deno.test("git config: what cannot be read with certainty is an error (fail closed)", () => {
  for (
    const bad of [
      "k = v", // a key before any section
      "[core",
      '[core "x]',
      "[core x]",
      '[a.b "c"]',
      "[]",
      '[a]\nk = "open',
      "[a]\nk = \\q",
      "[a]\n1k = v",
      "[a]\nk : v",
      "[a]\nk = v\0",
      "[a]\n=v",
    ]
  ) {
    assert.equal(parseGitConfig(bad).ok, false, JSON.stringify(bad));
  }
  // The error says where, never what the file holds.
  const r = parseGitConfig("[a]\nsecret-key : SECRET");
  assert.ok(!r.ok && r.error.startsWith("line 2:") && !r.error.includes("SECRET"));
});

// ---- properties ----

const sectionName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,8}$/);
const keyName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,8}$/);
const subName = fc.string({ maxLength: 8 }).filter((s) => !/[\n\0]/.test(s));
const valueText = fc.string({ maxLength: 16 }).filter((s) => !/[\0\r]/.test(s));

/** A value written the way git writes one: quoted, with its specials escaped. */
function quote(v: string): string {
  return '"' + v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
    .replace(/\t/g, "\\t").replaceAll("\b", "\\b") +
    '"';
}

const sectionArb = fc.record({
  section: sectionName,
  subsection: fc.option(subName, { nil: null }),
  entries: fc.array(fc.record({ key: keyName, value: fc.option(valueText, { nil: null }) }), {
    maxLength: 4,
  }),
});

interface Section {
  section: string;
  subsection: string | null;
  entries: { key: string; value: string | null }[];
}

function write(sections: Section[]): string {
  return sections.map((s) => {
    const sub = s.subsection === null
      ? ""
      : ` "${s.subsection.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    const lines = s.entries.map((e) =>
      e.value === null ? `\t${e.key}` : `\t${e.key} = ${quote(e.value)}`
    );
    return [`[${s.section}${sub}]`, ...lines].join("\n");
  }).join("\n") + "\n";
}

Deno.test("git config (property): what is written as git writes it reads back exactly", () => {
  fc.assert(
    fc.property(fc.array(sectionArb, { maxLength: 4 }), (sections) => {
      const got = parsed(write(sections)).map((e) => [e.section, e.subsection, e.key, e.value]);
      const want = sections.flatMap((s) =>
        s.entries.map((e) => [s.section.toLowerCase(), s.subsection, e.key.toLowerCase(), e.value])
      );
      assert.deepEqual(got, want);
    }),
  );
});

Deno.test("git config (property): no input throws; every input parses or is refused", () => {
  const chars = fc.constantFrom(...'[]"\\=#; \t\nabcAB.-1\r');
  fc.assert(
    fc.property(fc.array(chars, { maxLength: 60 }).map((a) => a.join("")), (text) => {
      const r = parseGitConfig(text);
      assert.ok(r.ok || typeof r.error === "string");
    }),
    { numRuns: 2000 },
  );
});

/** What git itself reads from a file: `name\nvalue` pairs (value null for a bare key). */
async function gitReads(text: string): Promise<[string, string | null][] | null> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/c`, text);
    const out = await new Deno.Command("git", {
      args: ["config", "--file", `${dir}/c`, "--null", "--list"],
      env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!out.success) return null;
    const records = new TextDecoder().decode(out.stdout).split("\0").filter((r) => r !== "");
    return records.map((r) => {
      const nl = r.indexOf("\n");
      return nl < 0 ? [r, null] : [r.slice(0, nl), r.slice(nl + 1)];
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("git config (property): whatever git reads, this parser reads the same or refuses", async () => {
  // Lines in the shapes git accepts and a few it does not, unquoted values included.
  const line = fc.oneof(
    sectionName.map((s) => `[${s}]`),
    fc.tuple(sectionName, subName.filter((s) => !s.includes('"') && !s.includes("\\")))
      .map(([s, sub]) => `[${s} "${sub}"]`),
    fc.tuple(keyName, fc.stringMatching(/^[ a-z#;"\\=]{0,10}$/)).map(([k, v]) => `${k} = ${v}`),
    keyName,
    fc.constantFrom("# c", "; c", "", "  \t"),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 6 }), async (lines) => {
      const text = lines.join("\n") + "\n";
      const ours = parseGitConfig(text);
      const theirs = await gitReads(text);
      if (!ours.ok) return; // refusing is always allowed: fail closed
      assert.notEqual(theirs, null, `we read what git refuses: ${JSON.stringify(text)}`);
      assert.deepEqual(
        ours.value.map((e) => [entryName(e), e.value]),
        theirs,
        JSON.stringify(text),
      );
    }),
    { numRuns: 60 },
  );
});

// ---- what an untrusted configuration may set ----

/** The refusal of each entry of a configuration text, keyed by the entry's name. */
function verdicts(text: string): [string, KeyRefusal | null][] {
  const entries = parsed(text);
  const remotes = definedRemotes(entries);
  return entries.map((e) => [entryName(e), untrustedKeyRefusal(e, remotes)]);
}

const refusedAs = (text: string) => verdicts(text).map(([, v]) => v?.category ?? v?.what ?? null);

Deno.test("git keys: what git init and clone write is allowed", () => {
  const text = [
    "[core]",
    "\trepositoryformatversion = 0",
    "\tfilemode = true",
    "\tbare = false",
    "\tlogallrefupdates = true",
    "\tignorecase = true",
    "\tprecomposeunicode = true",
    '[remote "origin"]',
    "\turl = https://example.com/x.git",
    "\tfetch = +refs/heads/*:refs/remotes/origin/*",
    '[branch "main"]',
    "\tremote = origin",
    "\tmerge = refs/heads/main",
    '[submodule "lib"]',
    "\turl = git@example.com:lib.git",
    "\tactive = true",
    "[extensions]",
    "\tobjectformat = sha256",
  ].join("\n");
  assert.deepEqual(verdicts(text).filter(([, v]) => v !== null), []);
});

Deno.test("git keys: the commands issue 21 names are refused, each by Brave Bot's name", () => {
  const cases: [string, string][] = [
    ['[tar "tgz"]\ncommand = x', "tar.<format>.command"],
    ["[imap]\ntunnel = x", "imap.tunnel"],
    ["[sendemail]\ntocmd = x", "sendemail.toCmd"],
    ["[sendemail]\nsmtpserver = mail.example.com", "sendemail.smtpServer"],
    ['[sendemail "work"]\nsendmailcmd = x', "sendemail.<identity>.sendmailCmd"],
    ["[instaweb]\nhttpd = x", "instaweb.httpd"],
    ["[svn]\nauthorsprog = x", "svn.authorsProg"],
    ['[remote "o"]\nuploadpack = x', "remote.<name>.uploadpack"],
    ['[remote "o"]\nreceivepack = x', "remote.<name>.receivepack"],
    ['[remote "o"]\nvcs = x', "remote.<name>.vcs"],
    ["[protocol]\nallow = always", "protocol.allow"],
    ['[protocol "ext"]\nallow = always', "protocol.<name>.allow"],
    ["[uploadpack]\npackobjectshook = x", "uploadpack.packObjectsHook"],
    ['[merge "m"]\ndriver = x', "merge.<driver>.driver"],
    ['[diff "d"]\ncommand = x', "diff.<driver>.command"],
    ['[diff "d"]\ntextconv = x', "diff.<driver>.textconv"],
    ['[filter "f"]\nclean = x', "filter.<driver>.clean"],
    ["[core]\neditor = x", "core.editor"],
    ["[sequence]\neditor = x", "sequence.editor"],
    ["[core]\naskpass = x", "core.askPass"],
    ['[credential "https://x"]\nhelper = x', "credential.<url>.helper"],
    ["[http]\nproxy = http://p", "http.proxy"],
    ['[http "https://x"]\nproxy = http://p', "http.<url>.proxy"],
    ["[alias]\nst = !x", "alias.<name>"],
    ["[pager]\nlog = x", "pager.<command>"],
    ['[submodule "s"]\nupdate = !x', "submodule.<name>.update"],
    ['[url "evil::x"]\ninsteadof = https://', "url.<base>.insteadOf"],
  ];
  for (const [text, category] of cases) {
    assert.deepEqual(refusedAs(`${text}\n`), [category], text);
  }
});

Deno.test("git keys: a key nobody listed is refused with no name the planner could be given", () => {
  const [[name, v]] = verdicts('[x-Leak "Secret Sub"]\nleakKey = 1\n');
  assert.equal(name, "x-leak.Secret Sub.leakkey");
  assert.equal(v?.category, null);
  assert.ok(!v!.what.includes("Secret") && !v!.what.toLowerCase().includes("leak"));
  // A key of a known section that is not on the list: refused the same way.
  assert.equal(verdicts("[core]\nsomethingnew = 1\n")[0][1]?.category, null);
  assert.equal(verdicts("[log]\nshowsignature = true\n")[0][1]?.category, null);
});

Deno.test("git keys: sections and keys are matched without case, subsections with it", () => {
  assert.deepEqual(refusedAs('[TAR "tgz"]\nCOMMAND = x\n'), ["tar.<format>.command"]);
  assert.deepEqual(refusedAs("[CORE]\nRepositoryFormatVersion = 0\n"), [null]);
  // gpg.ssh.program is overridden; gpg.SSH.program is another key to git, not on the list.
  assert.deepEqual(refusedAs('[gpg "ssh"]\nprogram = x\n'), [null]);
  assert.equal(verdicts('[gpg "SSH"]\nprogram = x\n')[0][1]?.category, null);
  assert.notEqual(verdicts('[gpg "SSH"]\nprogram = x\n')[0][1], null);
  // The legacy dotted form is lower-cased, as git does.
  assert.deepEqual(refusedAs("[gpg.SSH]\nprogram = x\n"), [null]);
  // A remote is named as written: `o` is not `O`.
  const remote = '[remote "O"]\nurl = https://x\n[branch "main"]\nremote = ';
  assert.deepEqual(refusedAs(remote + "O\n"), [null, null]);
  assert.deepEqual(refusedAs(remote + "o\n"), [null, "branch.<name>.remote"]);
});

Deno.test("git keys: values that make an allowed key run something are refused", () => {
  const url = (v: string) => refusedAs(`[remote "o"]\nurl = ${v}\n`)[0];
  for (const v of ["https://h/x", "http://h/x", "ssh://git@h/x", "git://h/x", "git@h:x/y", "h:x"]) {
    assert.equal(url(v), null, v);
  }
  for (
    const v of [
      "evil::x", // git-remote-evil
      "fd::1",
      "ext::sh -c x",
      "gcrypt::https://h/x",
      "h::x", // a helper named h
      "evil+x://h/x", // an unknown scheme: a helper
      "HTTPS://h/x",
      "file:///tmp/x", // a repository on this machine
      "/tmp/x",
      "./x",
      "x",
      "-oProxyCommand=x:y",
      "ssh://-oProxyCommand=x/y",
      "https://h/x\u0007",
    ]
  ) assert.equal(url(v), "remote.<name>.url", v);
  assert.equal(isNetworkUrl(null), false);
  assert.deepEqual(refusedAs('[branch "b"]\nremote = .\n'), [null]);
  assert.deepEqual(refusedAs('[branch "b"]\nremote = https://h/x\n'), [null]);
  assert.deepEqual(refusedAs('[branch "b"]\npushremote = ../x\n'), ["branch.<name>.pushRemote"]);
  for (const mode of ["checkout", "rebase", "merge", "none"]) {
    assert.deepEqual(refusedAs(`[submodule "s"]\nupdate = ${mode}\n`), [null]);
  }
  assert.deepEqual(refusedAs('[submodule "s"]\nupdate = x\n'), ["submodule.<name>.update"]);
  for (const v of ["true", "false", "0", "cat", "less"]) {
    assert.deepEqual(refusedAs(`[pager]\nlog = ${v}\n`), [null]);
  }
  assert.deepEqual(refusedAs("[pager]\nlog\n"), [null]);
});

Deno.test("git keys: every key the allow-list calls overridden is one the guard overrides", () => {
  const lower = (k: string) => {
    const parts = k.split(".");
    parts[0] = parts[0].toLowerCase();
    parts[parts.length - 1] = parts[parts.length - 1].toLowerCase();
    return parts.join(".");
  };
  const overridden = new Set(GIT_OVERRIDES.map(([k]) => lower(k)));
  const listed = ALLOWED.filter(([, rule]) => rule === "overridden").map(([k]) => lower(k));
  assert.ok(listed.length > 0);
  for (const k of listed) assert.ok(overridden.has(k), k);
});

Deno.test("git keys: every allowed key is one git documents (no key is misspelt)", async () => {
  const out = await new Deno.Command("git", { args: ["help", "--config"], stdout: "piped" })
    .output();
  const documented = new Set(
    new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().toLowerCase()),
  );
  // Documented elsewhere (git's repository-format notes), or by git-lfs, or named by format.
  const elsewhere = new Set([
    "extensions.partialclone",
    "extensions.preciousobjects",
    "extensions.refstorage",
    "lfs.repositoryformatversion",
    "gpg.openpgp.program",
    "gpg.ssh.program",
    "gpg.x509.program",
  ]);
  for (const [key] of ALLOWED) {
    const k = key.toLowerCase();
    if (elsewhere.has(k)) continue;
    assert.ok(documented.has(k), key);
  }
});

Deno.test("git keys (property): Brave Bot's name for a key never carries the repository's text", () => {
  const part = fc.oneof(
    fc.constantFrom("core", "remote", "branch", "tar", "sendemail", "credential", "http", "x"),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/),
  );
  const key = fc.oneof(
    fc.constantFrom("url", "command", "tocmd", "helper", "proxy", "editor", "remote", "path"),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/),
  );
  fc.assert(
    fc.property(
      part,
      fc.option(fc.string({ minLength: 1, maxLength: 6 }).map((s) => `§${s}`), { nil: null }),
      key,
      fc.option(fc.string({ maxLength: 12 }), { nil: null }),
      (section, subsection, k, value) => {
        const e: ConfigEntry = { section, subsection, key: k, value, line: 1 };
        const v = untrustedKeyRefusal(e, new Set());
        if (v === null) return;
        assert.ok(!v.what.includes("§"));
        if (v.category !== null) assert.ok(!v.category.includes("§"), v.category);
      },
    ),
    { numRuns: 2000 },
  );
});
