import assert from "node:assert/strict";
import fc from "fast-check";
import {
  escapeForScreen,
  formatArgv,
  hasHiddenCharacters,
  isControl,
  isInvisible,
} from "./escape.ts";

Deno.test("escape: control characters become visible escapes", () => {
  assert.equal(escapeForScreen("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  assert.equal(escapeForScreen("\x1b[2J\0\x7f\u0085"), "\\u{1B}[2J\\u{0}\\u{7F}\\u{85}");
  assert.equal(escapeForScreen("line1\nline2", true), "line1\nline2");
});

Deno.test("escape: invisible and bidirectional Unicode shows", () => {
  assert.equal(escapeForScreen("evil\u202Etxt.exe"), "evil\\u{202E}txt.exe");
  assert.equal(escapeForScreen("pass\u200Bwd"), "pass\\u{200B}wd");
  assert.equal(escapeForScreen("\uFEFFx"), "\\u{FEFF}x");
  assert.equal(escapeForScreen("a\u2028b"), "a\\u{2028}b");
  assert.equal(escapeForScreen("tag\u{E0041}"), "tag\\u{E0041}");
  for (const ch of ["\u2066", "\u2069", "\u200E", "\u061C", "\u00AD", "\uFE0F", "\u{E007F}"]) {
    assert.ok(isInvisible(ch), ch.codePointAt(0)!.toString(16));
  }
});

Deno.test("escape: ordinary text, accents and emoji pass unchanged", () => {
  for (const text of ["hello", "caf\u00e9", "\u65e5\u672c\u8a9e", "\u{1F600}", "a b"]) {
    assert.equal(escapeForScreen(text), text);
    assert.equal(hasHiddenCharacters(text), false);
  }
  assert.equal(isControl(" "), false);
});

Deno.test("escape: a backslash is escaped, so a literal \\u{202E} cannot pose as an escape", () => {
  assert.equal(escapeForScreen("\\u{202E}"), "\\\\u{202E}");
  assert.notEqual(escapeForScreen("\\u{202E}"), escapeForScreen("\u202E"));
});

Deno.test("escape (property): output holds no control or invisible character, and is injective", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
      const ea = escapeForScreen(a);
      assert.equal(hasHiddenCharacters(ea), false);
      if (a !== b) assert.notEqual(ea, escapeForScreen(b));
    }),
  );
});

Deno.test("escape: argv is shown quoted where a space or oddity would hide", () => {
  assert.equal(formatArgv(["git", "status", "--short"]), "git status --short");
  assert.equal(formatArgv(["rm", "a b"]), "rm 'a b'");
  assert.equal(formatArgv(["echo", "x\u202Ey"]), "echo 'x\\u{202E}y'");
  assert.equal(formatArgv(["echo", ""]), "echo ''");
});
