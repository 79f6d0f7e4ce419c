import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import { compileGlob, hasBraces, matchGlob } from "./glob.ts";

Deno.test("glob: * stays within one segment", () => {
  assert.equal(matchGlob("src/*.ts", "src/a.ts"), true);
  assert.equal(matchGlob("src/*.ts", "src/a/b.ts"), false);
});

Deno.test("glob: ? matches exactly one character, never /", () => {
  assert.equal(matchGlob("a?c", "abc"), true);
  assert.equal(matchGlob("a?c", "ac"), false);
  assert.equal(matchGlob("x/a?c", "x/a/c"), false);
  assert.equal(matchGlob("?", "é"), true);
});

Deno.test("glob: ** spans any number of segments, including none", () => {
  const g = compileGlob("**/*.ts");
  assert.equal(g.matches("a.ts"), true);
  assert.equal(g.matches("x/y/z/a.ts"), true);
  assert.equal(g.matches("x/y/z/a.js"), false);
  assert.equal(matchGlob("src/**/x.md", "src/x.md"), true);
  assert.equal(matchGlob("src/**/x.md", "src/a/b/x.md"), true);
  assert.equal(matchGlob("src/**/x.md", "srcx.md"), false);
  assert.equal(matchGlob("src/**", "src/a/b"), true);
  assert.equal(matchGlob("src/**", "other/a"), false);
  assert.equal(matchGlob("src/**", "src"), true);
  assert.equal(matchGlob("src/**", "srcx"), false);
  assert.equal(matchGlob("**", "any/thing/at/all"), true);
  assert.equal(matchGlob("**/secrets/**", "a/secrets/b/c.txt"), true);
  assert.equal(matchGlob("**/secrets/**", "secrets/x"), true);
  assert.equal(matchGlob("**/secrets/**", "a/nosecrets/x"), false);
});

Deno.test("glob: braces and brackets are literal", () => {
  assert.equal(matchGlob("{a,b}.ts", "a.ts"), false);
  assert.equal(matchGlob("{a,b}.ts", "{a,b}.ts"), true);
  assert.equal(matchGlob("[ab].ts", "a.ts"), false);
  assert.equal(matchGlob("[ab].ts", "[ab].ts"), true);
  assert.equal(matchGlob("a+b(c)|d$.^", "a+b(c)|d$.^"), true);
  assert.equal(hasBraces("*.{ts,js}"), true);
  assert.equal(hasBraces("*.ts"), false);
});

Deno.test("glob: a pattern without / matches the last segment", () => {
  assert.equal(matchGlob("*.pem", "deep/dir/server.pem"), true);
  assert.equal(matchGlob(".env.*", "app/.env.local"), true);
  assert.equal(matchGlob("id_rsa*", "home/.ssh/id_rsa.pub"), true);
  assert.equal(matchGlob("*.pem", "server.pem/notes.txt"), false);
});

Deno.test("glob: pathological pattern against a long name returns at once", () => {
  const pattern = "*a*a*a*a*a*a*a*a*b";
  const name = "a".repeat(10_000);
  assert.equal(matchGlob(pattern, name), false);
  assert.equal(matchGlob("**/".repeat(50) + "x", "a/".repeat(2_000) + "y"), false);
  assert.equal(matchGlob(pattern, "a".repeat(5_000) + "b"), true);
});

/** A reference matcher by plain recursion over segments, to compare against on small inputs. */
function reference(pattern: string, path: string): boolean {
  const segMatch = (p: string, s: string): boolean => {
    if (p === "") return s === "";
    if (p[0] === "*") return segMatch(p.slice(1), s) || (s !== "" && segMatch(p, s.slice(1)));
    if (s === "") return false;
    if (p[0] === "?" || p[0] === s[0]) return segMatch(p.slice(1), s.slice(1));
    return false;
  };
  const go = (ps: string[], ss: string[]): boolean => {
    if (ps.length === 0) return ss.length === 0;
    if (ps[0] === "**") {
      if (ps.length === 1) return true;
      for (let k = 0; k <= ss.length; k++) if (go(ps.slice(1), ss.slice(k))) return true;
      return false;
    }
    return ss.length > 0 && segMatch(ps[0], ss[0]) && go(ps.slice(1), ss.slice(1));
  };
  return go(pattern.split("/"), path.split("/"));
}

Deno.test("glob: agrees with a naive reference matcher on random inputs", () => {
  const seg = fc.stringMatching(/^[ab*?]{0,4}$/).map((s) => s.replace(/\*\*+/g, "*"));
  const patSeg = fc.oneof(seg, fc.constant("**"));
  const pattern = fc.array(patSeg, { minLength: 1, maxLength: 4 }).map((a) => a.join("/"));
  const path = fc.array(fc.stringMatching(/^[ab]{1,3}$/), { minLength: 1, maxLength: 5 })
    .map((a) => a.join("/"));
  fc.assert(
    fc.property(pattern, path, (p, s) => {
      const anchoredPattern = p.includes("/") ? p : p;
      const expected = p.includes("/") ? reference(p, s) : reference(p, s.split("/").at(-1)!);
      return compileGlob(anchoredPattern).matches(s) === expected;
    }),
    { numRuns: 2_000 },
  );
});

Deno.test("glob: anchored: true matches the whole path even without a slash", () => {
  assert.equal(compileGlob("README.md", { anchored: true }).matches("README.md"), true);
  assert.equal(compileGlob("README.md", { anchored: true }).matches("docs/README.md"), false);
  assert.equal(compileGlob("*.md", { anchored: true }).matches("docs/a.md"), false);
  assert.equal(compileGlob("README.md").matches("docs/README.md"), true, "default unchanged");
});

Deno.test("glob: `*` then literals agrees with a regular expression, lone surrogates and slashes included", () => {
  const chars = ["a", ".", "/", "\uD83D", "\uDE00", "\uD83D\uDE00", "t"];
  const text = fc.array(fc.constantFrom(...chars), { maxLength: 6 }).map((a) => a.join(""));
  const literal = fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 3 })
    .map((a) => a.join(""));
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  fc.assert(
    fc.property(literal, text, fc.boolean(), (lit, s, anchored) => {
      const pattern = `*${lit}`;
      // `*` is any run of code points but `/`; with the `u` flag a lone surrogate is one.
      const whole = new RegExp(`^[^/]*${escape(lit)}$`, "u");
      const subject = anchored || pattern.includes("/") ? s : s.split("/").at(-1)!;
      const glob = compileGlob(pattern, anchored ? { anchored } : {});
      return glob.matches(s) === whole.test(subject);
    }),
    { numRuns: 5_000 },
  );
  assert.equal(compileGlob("*.ts").matches("src/a.ts"), true);
  assert.equal(compileGlob("*/a.ts").matches("src/a.ts"), true);
  assert.equal(compileGlob("*/a.ts").matches("x/src/a.ts"), false);
  assert.equal(compileGlob("*\uDE00").matches("\uD83D\uDE00"), false, "half a pair is no match");
});

Deno.test("glob: long patterns (past the bit-parallel limit) agree with the reference too", () => {
  // Segments of literal characters and ?, padded so every pattern has well over 30 tokens.
  const seg = fc.stringMatching(/^[ab?]{1,3}$/);
  const patSeg = fc.oneof(seg, fc.constant("**"), fc.constant("*"), seg.map((s) => `${s}*`));
  const pattern = fc.array(patSeg, { minLength: 2, maxLength: 6 })
    .map((a) => "ab/ab/ab/ab/ab/ab/ab/ab/ab/ab/ab/" + a.join("/"));
  const path = fc.array(fc.stringMatching(/^[ab]{1,3}$/), { minLength: 1, maxLength: 6 })
    .map((a) => "ab/ab/ab/ab/ab/ab/ab/ab/ab/ab/ab/" + a.join("/"));
  fc.assert(
    fc.property(pattern, path, (p, s) => compileGlob(p).matches(s) === reference(p, s)),
    { numRuns: 1_000 },
  );
});
