import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import {
  escapeForScreen,
  formatArgv,
  formatToolArguments,
  guardTerminal,
  hasHiddenCharacters,
  isControl,
  isInvisible,
  marker,
  MARKER_CLOSE,
  MARKER_OPEN,
  MARKER_PATTERN,
  safeJson,
} from "./escape.ts";

/** What a person reading the screen does: every `⟦U+…⟧` back to its character. */
function readMarkers(shown: string): string {
  let out = "";
  let i = 0;
  while (i < shown.length) {
    if (shown[i] !== MARKER_OPEN) {
      out += shown[i++];
      continue;
    }
    const end = shown.indexOf(MARKER_CLOSE, i);
    const m = /^U\+([0-9A-F]{4,6})$/.exec(shown.slice(i + 1, end));
    if (end < 0 || !m) throw new Error(`a ⟦ that opens no marker at ${i}: ${shown}`);
    out += String.fromCodePoint(parseInt(m[1], 16));
    i = end + 1;
  }
  return out;
}

/** Reads an argv back from {@link formatArgv}'s line: bare words and '…' quoted ones. */
function readArgv(shown: string): string[] {
  const argv: string[] = [];
  let i = 0;
  while (i < shown.length) {
    if (argv.length > 0) {
      assert.equal(shown[i], " ", `arguments are separated by one space: ${shown}`);
      i++;
    }
    if (shown[i] === "'") {
      const end = shown.indexOf("'", i + 1);
      assert.ok(end > i, `an unclosed quote: ${shown}`);
      argv.push(readMarkers(shown.slice(i + 1, end)));
      i = end + 1;
    } else {
      let end = shown.indexOf(" ", i);
      if (end < 0) end = shown.length;
      const word = shown.slice(i, end);
      assert.match(word, /^[\w@%+=:,./-]+$/, `a bare argument of odd characters: ${shown}`);
      argv.push(word);
      i = end;
    }
  }
  return argv;
}

const ESC = "\x1b";
const BEL = "\x07";

Deno.test("escape: control characters become markers naming their code point", () => {
  assert.equal(
    escapeForScreen("a\nb\tc\rd"),
    "a⟦U+000A⟧b⟦U+0009⟧c⟦U+000D⟧d",
  );
  assert.equal(
    escapeForScreen("\x1b[2J\0\x7f\u0085"),
    "⟦U+001B⟧[2J⟦U+0000⟧⟦U+007F⟧⟦U+0085⟧",
  );
  assert.equal(escapeForScreen("line1\nline2", true), "line1\nline2");
  assert.equal(marker("\u{E0041}"), "⟦U+E0041⟧");
});

Deno.test("escape: a tab is a marker in one line, four spaces in multi-line text", () => {
  assert.equal(escapeForScreen("a\tb"), "a⟦U+0009⟧b");
  assert.equal(escapeForScreen("\tx\n", true), "    x\n");
  // A carriage return could overwrite a line: a marker in multi-line text too.
  assert.equal(escapeForScreen("safe\rrm -rf ~\n", true), "safe⟦U+000D⟧rm -rf ~\n");
});

Deno.test("escape (adversarial): bidi override, zero-width and other invisible Unicode show", () => {
  assert.equal(escapeForScreen("evil\u202Etxt.exe"), "evil⟦U+202E⟧txt.exe");
  assert.equal(escapeForScreen("pass\u200Bwd"), "pass⟦U+200B⟧wd");
  assert.equal(escapeForScreen("\uFEFFx"), "⟦U+FEFF⟧x");
  assert.equal(escapeForScreen("a\u2028b", true), "a⟦U+2028⟧b");
  assert.equal(escapeForScreen("tag\u{E0041}"), "tag⟦U+E0041⟧");
  for (
    const ch of ["\u2066", "\u2069", "\u200E", "\u061C", "\u00AD", "\uFE0F", "\u{E007F}", "\u0600"]
  ) {
    assert.ok(isInvisible(ch), ch.codePointAt(0)!.toString(16));
  }
  // A lone surrogate (what a broken decode leaves) is shown, not drawn as whatever it becomes.
  assert.equal(escapeForScreen("a\uD800b"), "a⟦U+D800⟧b");
});

Deno.test("escape (adversarial): CSI, OSC 52 and OSC 8 are shown, never sent", () => {
  const csi = `${ESC}[31mred${ESC}[0m${ESC}[2J\u009B1A`;
  const osc52 = `${ESC}]52;c;cm0gLXJmIH4=${BEL}`;
  const osc8 = `${ESC}]8;;https://evil.example/${ESC}\\docs${ESC}]8;;${ESC}\\`;
  assert.equal(
    escapeForScreen(csi, true),
    "⟦U+001B⟧[31mred⟦U+001B⟧[0m⟦U+001B⟧[2J⟦U+009B⟧1A",
  );
  assert.equal(escapeForScreen(osc52, true), "⟦U+001B⟧]52;c;cm0gLXJmIH4=⟦U+0007⟧");
  assert.equal(
    escapeForScreen(osc8, true),
    "⟦U+001B⟧]8;;https://evil.example/⟦U+001B⟧\\docs⟦U+001B⟧]8;;⟦U+001B⟧\\",
  );
  for (const text of [csi, osc52, osc8]) {
    for (const keep of [false, true]) {
      const shown = escapeForScreen(text, keep);
      for (const ch of shown) assert.ok(ch === "\n" || !isControl(ch), JSON.stringify(shown));
    }
  }
});

Deno.test("escape: backslashes and ordinary text, accents and emoji pass unchanged", () => {
  const code = "const re = /\\d+\\.\\d+/;";
  assert.equal(escapeForScreen(code), code);
  assert.equal(escapeForScreen(`+${code}\n`, true), `+${code}\n`);
  for (const text of ["hello", "caf\u00e9", "\u65e5\u672c\u8a9e", "\u{1F600}", "a b", "x ⟧ y"]) {
    assert.equal(escapeForScreen(text), text);
    assert.equal(hasHiddenCharacters(text), false);
  }
  assert.equal(isControl(" "), false);
});

Deno.test("escape (adversarial): a literal marker in the text is itself shown as a marker", () => {
  assert.equal(escapeForScreen("⟦U+202E⟧"), "⟦U+27E6⟧U+202E⟧");
  assert.notEqual(escapeForScreen("⟦U+202E⟧"), escapeForScreen("\u202E"));
  assert.equal(readMarkers(escapeForScreen("⟦U+202E⟧")), "⟦U+202E⟧");
  assert.equal(hasHiddenCharacters("⟦"), true);
  // Every ⟦ on the screen opens a real marker.
  const shown = escapeForScreen("a⟦U+0041⟧\u202Eb⟦");
  assert.equal(shown.split(MARKER_OPEN).length - 1, shown.match(MARKER_PATTERN)!.length);
});

Deno.test("escape (property): no control or invisible character survives; reading back gives the text", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
      const ea = escapeForScreen(a);
      for (const ch of ea) assert.ok(!isControl(ch) && !isInvisible(ch), JSON.stringify(ea));
      assert.equal(readMarkers(ea), a);
      if (a !== b) assert.notEqual(ea, escapeForScreen(b));
      const kept = escapeForScreen(a, true);
      for (const ch of kept) assert.ok(ch === "\n" || (!isControl(ch) && !isInvisible(ch)));
      assert.equal(readMarkers(kept), a.replaceAll("\t", "    "));
    }),
  );
});

Deno.test("escape: argv is shown quoted where a space, quote or oddity would hide", () => {
  assert.equal(formatArgv(["git", "status", "--short"]), "git status --short");
  assert.equal(formatArgv(["rm", "a b"]), "rm 'a b'");
  assert.equal(formatArgv(["echo", "x\u202Ey"]), "echo 'x⟦U+202E⟧y'");
  assert.equal(formatArgv(["echo", ""]), "echo ''");
  assert.equal(formatArgv(["echo", "a' 'b"]), "echo 'a⟦U+0027⟧ ⟦U+0027⟧b'");
  assert.equal(formatArgv(["grep", "\\d+\\.\\d+"]), "grep '\\d+\\.\\d+'");
  assert.equal(formatArgv(["echo", "⟦U+0020⟧"]), "echo '⟦U+27E6⟧U+0020⟧'");
  assert.equal(formatArgv(["printf", "a\tb\n"]), "printf 'a⟦U+0009⟧b⟦U+000A⟧'");
});

Deno.test("escape (property): an argv read back from the screen is the argv", () => {
  const tricky = fc.constantFrom(
    "",
    " ",
    "'",
    "''",
    "\\",
    "\\'",
    "⟦",
    "⟧",
    "⟦U+0027⟧",
    "⟦U+0020⟧",
    "\u202E",
    "\t",
    "\n",
    "\x1b]52;c;eA==\x07",
    "a b",
  );
  const arg = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.string({ unit: fc.constantFrom("a", " ", "'", "\\", "⟦", "⟧", "U", "+", "0", "\u200B") }),
    tricky,
  );
  fc.assert(
    fc.property(fc.array(arg, { minLength: 1, maxLength: 6 }), (argv) => {
      const shown = formatArgv(argv);
      for (const ch of shown) assert.ok(!isControl(ch) && !isInvisible(ch));
      assert.deepEqual(readArgv(shown), argv);
    }),
    { numRuns: 2000 },
  );
});

/** styleMarkers in a fresh process with the given environment (colour is decided at start). */
async function styledIn(env: Record<string, string>, text: string): Promise<string> {
  const url = new URL("./escape_style.ts", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { escapeStyled } from "${url}"; ` +
      `Deno.stdout.writeSync(new TextEncoder().encode(escapeStyled(${JSON.stringify(text)})));`,
    ],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(out.code, 0);
  return new TextDecoder().decode(out.stdout);
}

Deno.test("escape: markers are styled with colour, plain with NO_COLOR", async () => {
  const text = "x\u202Ey";
  const styled = await styledIn({ FORCE_COLOR: "1" }, text);
  assert.equal(styled, `x${ESC}[7m⟦U+202E⟧${ESC}[27my`);
  assert.equal(await styledIn({ FORCE_COLOR: "1", NO_COLOR: "1" }, text), "x⟦U+202E⟧y");
});

Deno.test("escape: a tool call's arguments show code as it is, not as JSON writes it", () => {
  assert.equal(
    formatToolArguments({ path: "re.ts", contents: "const re = /\\d+\\.\\d+/;\n" }),
    "path=re.ts contents='const re = /\\d+\\.\\d+/;⟦U+000A⟧'",
  );
  assert.equal(
    formatToolArguments({ pipeline: [{ program: "echo", args: ["a b", "x=y", "1,2"] }], n: 3 }),
    "pipeline=[{program=echo, args=['a b', 'x=y', '1,2']}] n=3",
  );
  assert.equal(
    formatToolArguments({ ok: true, none: null, it: "it's" }),
    "ok=true none=null it='it⟦U+0027⟧s'",
  );
  // Not JSON: the planner's text, escaped as it is.
  assert.equal(formatToolArguments('{"path": "a\x1b[2J'), '{"path": "a⟦U+001B⟧[2J');
});

Deno.test("escape: a long tool line is cut, never inside a marker", () => {
  const line = formatToolArguments({ text: "abcd\u202Eefgh" }, 12);
  assert.equal(line, "text='abcd…");
  assert.equal(formatToolArguments({ text: "short" }, 12), "text=short");
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), fc.integer({ min: 1, max: 40 }), (s, max) => {
      const cut = formatToolArguments({ s }, max);
      const body = cut.endsWith("…") ? cut.slice(0, -1) : cut;
      assert.equal(body.split(MARKER_OPEN).length - 1, body.match(MARKER_PATTERN)?.length ?? 0);
      assert.ok(body.length <= max);
    }),
  );
});

Deno.test("escape (property): a character is a marker exactly when it is a control, invisible or ⟦", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
      for (const ch of text) {
        const hidden = ch === MARKER_OPEN || isControl(ch) || isInvisible(ch);
        assert.equal(escapeForScreen(ch), hidden ? marker(ch) : ch);
        assert.equal(hasHiddenCharacters(ch), hidden);
      }
      assert.equal(hasHiddenCharacters(text), escapeForScreen(text) !== text);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("guardTerminal: the screen's own colour codes pass; anything raw that slipped through is a marker", () => {
  const ours = "\x1b[2mdim\x1b[22m \x1b[7m \x1b[27m";
  assert.equal(guardTerminal(ours), ours);
  assert.equal(
    guardTerminal("a\x1b]52;c;eA==\x07b\u202Ec\x1b[2Jd\u{E0041}"),
    "a⟦U+001B⟧]52;c;eA==⟦U+0007⟧b⟦U+202E⟧c⟦U+001B⟧[2Jd⟦U+E0041⟧",
  );
  // Escaped text is unchanged by it.
  const escaped = escapeForScreen("x\x1b]8;;https://e/\x1b\\y\u00A0z");
  assert.equal(guardTerminal(escaped), escaped);
  assert.ok(escaped.includes("⟦U+00A0⟧"), "a no-break space passes for a space: marked");
});

Deno.test("guardTerminal without own colour: no escape sequence at all passes; a line break does", () => {
  assert.equal(
    guardTerminal("\x1b[31mred\x1b[0m\n\x1b[8mhidden\u{E0041}\t", false),
    "⟦U+001B⟧[31mred⟦U+001B⟧[0m\n⟦U+001B⟧[8mhidden⟦U+E0041⟧⟦U+0009⟧",
  );
  const escaped = escapeForScreen("a\u202Eb⟦c\n", true);
  assert.equal(guardTerminal(escaped, false), escaped);
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), fc.boolean(), (text, colour) => {
      const guarded = guardTerminal(text, colour);
      for (const ch of guarded) {
        if (ch === "\n" || (colour && ch === ESC)) continue;
        assert.ok(!isControl(ch) && !isInvisible(ch), JSON.stringify(guarded));
      }
      // With colour, ESC survives only as the start of an SGR code.
      if (colour) {
        const bare = guarded.replace(new RegExp(`${ESC}\\[[0-9;]*m`, "g"), "");
        assert.ok(!bare.includes(ESC), JSON.stringify(guarded));
      }
    }),
    { numRuns: 2000 },
  );
});

Deno.test("safeJson (adversarial): controls, bidi and invisible characters are \\u escapes; the value is the same", () => {
  assert.equal(safeJson({ a: "x\u202Ey" }), '{"a":"x\\u202ey"}');
  assert.equal(safeJson(["\u0085\u00A0\u2028\x7f"]), '["\\u0085\\u00a0\\u2028\\u007f"]');
  // Past U+FFFF: the surrogate pair JSON spells it with.
  assert.equal(safeJson("tag\u{E0041}"), '"tag\\udb40\\udc41"');
  // Keys are strings too; ordinary text is left as JSON.stringify writes it.
  assert.equal(safeJson({ "k\u200B": "caf\u00e9 ⟦ \u65e5" }), '{"k\\u200b":"caf\u00e9 ⟦ \u65e5"}');
  assert.equal(safeJson({ n: 1, b: true, z: null }), JSON.stringify({ n: 1, b: true, z: null }));
  fc.assert(
    fc.property(
      fc.jsonValue({ depthSize: "small" }),
      fc.string({ unit: "binary" }),
      (value, text) => {
        for (const v of [value, { [text]: text, list: [text, value] }]) {
          const json = safeJson(v);
          for (const ch of json) {
            assert.ok(!isControl(ch) && !isInvisible(ch), JSON.stringify(json));
          }
          assert.deepEqual(JSON.parse(json), JSON.parse(JSON.stringify(v)));
        }
      },
    ),
    { numRuns: 1000 },
  );
});
