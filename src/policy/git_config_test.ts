import assert from "node:assert/strict";
import fc from "fast-check";
import { type ConfigEntry, entryName, parseGitConfig } from "./git_config.ts";

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
