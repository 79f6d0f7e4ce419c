/**
 * The planner-path resolver under attack: a table of hostile paths, each refused with a reason
 * naming the problem, the paths that must still work, and a property test that nothing
 * generated from a hostile alphabet ever resolves outside the workspace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../../test/support/fast_check.ts";
import { checkPathSyntax, openedAsChecked, resolvePath } from "./paths.ts";
import { isWithin, openWorkspace, type Workspace } from "./workspace.ts";

interface Fixture {
  base: string;
  root: string;
  outside: string;
  state: string;
  ws: Workspace;
  ci: Workspace;
}

/**
 * base/ws (the workspace) beside base/outside (a secret). Links inside point both ways, at
 * depth, in chains, dangling and in a loop; the state directory lives inside the workspace.
 */
async function makeFixture(): Promise<Fixture> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-paths-" }));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  const state = join(root, ".bravebot-state");
  await Deno.mkdir(join(root, "src", "lib"), { recursive: true });
  await Deno.mkdir(join(root, "deep", "x", "y"), { recursive: true });
  await Deno.mkdir(join(root, "docs"));
  await Deno.mkdir(state);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "secret");
  await Deno.writeTextFile(join(root, "src", "a.txt"), "a");
  await Deno.writeTextFile(join(root, "src", "lib", "b.ts"), "b");
  await Deno.writeTextFile(join(root, "README.md"), "readme");
  await Deno.writeTextFile(join(root, "caf\u00e9.txt"), "nfc");
  await Deno.writeTextFile(join(state, "trust.json"), "{}");
  const links: [string, string][] = [
    ["in_link", "src"],
    ["in_file_link", "src/a.txt"],
    ["chain_in1", "chain_in2"],
    ["chain_in2", "src"],
    ["out_link", outside],
    ["etc_link", "/etc"],
    ["link_to_link_out", "out_link"],
    ["chain1", "chain2"],
    ["chain2", "chain3"],
    ["chain3", "../outside"],
    ["dangling", "nowhere"],
    ["dangling_out", join(outside, "nothing")],
    ["loop", "loop"],
    ["loop_a", "loop_b"],
    ["loop_b", "loop_a"],
    ["rel_up", ".."],
    ["state_link", ".bravebot-state"],
    ["deep/x/y/z", "../../../../outside"],
    ["deep/x/y/in", "../../../src"],
    ["src/sub_out", "../../outside"],
    ["src/lib/up", "../../.."],
  ];
  for (const [at, target] of links) await Deno.symlink(target, join(root, at));
  const ws = await openWorkspace(root, state, { caseInsensitive: false });
  const ci = await openWorkspace(root, state, { caseInsensitive: true });
  return { base, root, outside, state, ws, ci };
}

async function withFixture(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await makeFixture();
  try {
    await fn(f);
  } finally {
    await Deno.remove(f.base, { recursive: true });
  }
}

const ABSOLUTE = /absolute paths are not accepted/;
const DOTDOT = /'\.\.' segments are not accepted/;
const OUTSIDE = /leads outside the workspace through a symbolic link/;
const DANGLING = /symbolic link whose target does not exist/;
const LOOP = /loop of symbolic links/;
const NUL = /NUL byte/;
const CONTROL = (cp: string) => new RegExp(`control character U\\+${cp}\\b`);
const INVISIBLE = (cp: string) => new RegExp(`invisible or bidirectional Unicode \\(U\\+${cp}\\)`);
const STATE = /state directory/;
const TWIN = /differs only by case or Unicode normalisation/;
const SEGMENT_LONG = /longer than 255 bytes/;
const PATH_LONG = /longer than 4096 characters/;
const TILDE = /~ is not expanded/;
const BACKSLASH = /backslashes are not accepted/;
const DRIVE = /drive-letter paths are not accepted/;
const DEVICE = /reserved device name on Windows/;
const PERCENT = /percent-encoded sequences are not decoded/;
const TRAILING = /ends with a dot or a space/;
const NOT_DIR = /is a file, not a directory/;
const NOT_STRING = /a path must be a string/;

/** [what it tries, the input, which workspace view, the reason it must give] */
const HOSTILE: [string, unknown, "ws" | "ci", RegExp][] = [
  // absolute paths
  ["absolute /etc/passwd", "/etc/passwd", "ws", ABSOLUTE],
  ["the file-system root", "/", "ws", ABSOLUTE],
  ["a UNC-like //server/share", "//server/share", "ws", ABSOLUTE],
  ["absolute with .. inside", "/tmp/../etc/shadow", "ws", ABSOLUTE],
  // .. escapes
  ["bare ..", "..", "ws", DOTDOT],
  ["../ to a sibling", "../outside/secret.txt", "ws", DOTDOT],
  ["down then too far up", "src/../../outside", "ws", DOTDOT],
  [".. that would stay inside", "src/..", "ws", DOTDOT],
  ["./../", "./../x", "ws", DOTDOT],
  ["three down, four up", "a/b/c/../../../../x", "ws", DOTDOT],
  ["through an internal link then up", "in_link/../../x", "ws", DOTDOT],
  // symlinks resolving outside, at any depth
  ["a link to a folder outside", "out_link", "ws", OUTSIDE],
  ["a file through a link outside", "out_link/secret.txt", "ws", OUTSIDE],
  ["a new file through a link outside", "out_link/new.txt", "ws", OUTSIDE],
  ["new folders through a link outside", "out_link/n/e/w.txt", "ws", OUTSIDE],
  ["a link to /etc", "etc_link", "ws", OUTSIDE],
  ["/etc/passwd through a link", "etc_link/passwd", "ws", OUTSIDE],
  ["a link to a link outside", "link_to_link_out/secret.txt", "ws", OUTSIDE],
  ["a chain of three links", "chain1", "ws", OUTSIDE],
  ["a file through a chain", "chain1/secret.txt", "ws", OUTSIDE],
  ["a link at depth 4", "deep/x/y/z/secret.txt", "ws", OUTSIDE],
  ["the deep link itself", "deep/x/y/z", "ws", OUTSIDE],
  ["a link to .. then back down", "rel_up/outside/secret.txt", "ws", OUTSIDE],
  ["a link to .. alone", "rel_up", "ws", OUTSIDE],
  ["a link inside src leading out", "src/sub_out/secret.txt", "ws", OUTSIDE],
  ["an internal link climbing two levels", "src/lib/up/outside/secret.txt", "ws", OUTSIDE],
  ["a dangling link", "dangling", "ws", DANGLING],
  ["a new file under a dangling link", "dangling/new.txt", "ws", DANGLING],
  ["a dangling link pointing outside", "dangling_out", "ws", DANGLING],
  ["a self loop", "loop", "ws", LOOP],
  ["below a self loop", "loop/x", "ws", LOOP],
  ["a two-link loop", "loop_a/x/y", "ws", LOOP],
  // NUL and control characters
  ["NUL in the middle", "a\0b", "ws", NUL],
  ["NUL alone", "\0", "ws", NUL],
  ["NUL to cut an extension", "src/a.txt\0.png", "ws", NUL],
  ["a newline", "a\nb", "ws", CONTROL("000A")],
  ["a carriage return", "a\rb", "ws", CONTROL("000D")],
  ["a tab", "a\tb", "ws", CONTROL("0009")],
  ["an escape sequence", "a\x1b[2Jb", "ws", CONTROL("001B")],
  ["DEL", "a\x7fb", "ws", CONTROL("007F")],
  ["a C1 control (NEL)", "a\u0085b", "ws", CONTROL("0085")],
  ["a C1 CSI", "a\u009bb", "ws", CONTROL("009B")],
  // invisible and bidirectional Unicode
  ["right-to-left override", "evil\u202Etxt.exe", "ws", INVISIBLE("202E")],
  ["zero-width space", "pass\u200Bwd", "ws", INVISIBLE("200B")],
  ["byte-order mark", "\uFEFFREADME.md", "ws", INVISIBLE("FEFF")],
  ["left-to-right isolate", "a\u2066b", "ws", INVISIBLE("2066")],
  ["zero-width joiner", "a\u200Db", "ws", INVISIBLE("200D")],
  ["Arabic letter mark", "a\u061Cb", "ws", INVISIBLE("061C")],
  ["soft hyphen", "pass\u00ADwd", "ws", INVISIBLE("00AD")],
  ["a Unicode tag character", "a\u{E0041}b", "ws", INVISIBLE("E0041")],
  ["a variation selector", "a\uFE0Fb", "ws", INVISIBLE("FE0F")],
  ["an unpaired surrogate", "a\uD800b", "ws", /unpaired UTF-16 surrogate/],
  // the state directory, inside the workspace here
  ["the state directory", ".bravebot-state", "ws", STATE],
  ["the trust map", ".bravebot-state/trust.json", "ws", STATE],
  ["a new file in the state directory", ".bravebot-state/new/x.json", "ws", STATE],
  ["the state directory through a link", "state_link/trust.json", "ws", STATE],
  ["the state directory spelled through ./", "./.bravebot-state//trust.json", "ws", STATE],
  // names that differ only by normalisation or case
  ["NFD twin of an NFC name", "cafe\u0301.txt", "ws", TWIN],
  ["a new folder beside src, by case", "SRC/new.txt", "ws", TWIN],
  ["a new file beside src/a.txt, by case", "src/A.txt", "ws", TWIN],
  ["README by case", "Readme.md", "ws", TWIN],
  ["case-insensitive: a folder by case", "SRC/a.txt", "ci", TWIN],
  ["case-insensitive: a file by case", "src/A.TXT", "ci", TWIN],
  ["case-insensitive: case and NFD", "CAFE\u0301.TXT", "ci", TWIN],
  ["case-insensitive: the state directory by case", ".BRAVEBOT-STATE/trust.json", "ci", TWIN],
  // very long names and paths
  ["a 256-byte name", "a".repeat(256), "ws", SEGMENT_LONG],
  ["a 256-byte name in UTF-8", "\u00e9".repeat(128), "ws", SEGMENT_LONG],
  ["a long name deep down", `src/${"b".repeat(300)}/c`, "ws", SEGMENT_LONG],
  ["a path over 4096 characters", "a/".repeat(2049), "ws", PATH_LONG],
  ["one huge name", "x".repeat(100_000), "ws", PATH_LONG],
  // ~
  ["~", "~", "ws", TILDE],
  ["~/.ssh", "~/.ssh/id_rsa", "ws", TILDE],
  ["~user", "~root/.bashrc", "ws", TILDE],
  // Windows separators, drives and devices
  ["backslash separators", "src\\a.txt", "ws", BACKSLASH],
  ["backslash .. escape", "..\\..\\x", "ws", BACKSLASH],
  ["a UNC path", "\\\\server\\share\\x", "ws", BACKSLASH],
  ["a drive with backslash", "C:\\Windows\\system32", "ws", DRIVE],
  ["a drive with slash", "C:/Windows", "ws", DRIVE],
  ["a drive-relative path", "c:foo", "ws", DRIVE],
  ["the CON device", "CON", "ws", DEVICE],
  ["nul.txt, still NUL", "src/nul.txt", "ws", DEVICE],
  ["COM1 with an extension", "logs/com1.log", "ws", DEVICE],
  // percent-encoding
  ["encoded ..", "%2e%2e/outside", "ws", PERCENT],
  ["encoded slashes", "%2Fetc%2Fpasswd", "ws", PERCENT],
  ["encoded traversal inside a name", "src%2f..%2f..%2fx", "ws", PERCENT],
  ["encoded NUL", "a%00b", "ws", PERCENT],
  // trailing dots and spaces
  ["a trailing dot", "file.", "ws", TRAILING],
  ["a trailing space", "file ", "ws", TRAILING],
  ["a folder with a trailing dot", "src./a.txt", "ws", TRAILING],
  ["three dots", "...", "ws", TRAILING],
  ["a trailing space after an existing file", "src/a.txt ", "ws", TRAILING],
  ["only a space", " ", "ws", TRAILING],
  // through a file
  ["a file used as a folder", "src/a.txt/x", "ws", NOT_DIR],
  ["a link to a file used as a folder", "in_file_link/x/y", "ws", NOT_DIR],
  // not a path at all
  ["the empty string", "", "ws", /the path is empty/],
  ["a number", 42, "ws", NOT_STRING],
  ["null", null, "ws", NOT_STRING],
  ["undefined", undefined, "ws", NOT_STRING],
  ["an array", ["src", "a.txt"], "ws", NOT_STRING],
  ["an object", { path: "src" }, "ws", NOT_STRING],
];

Deno.test(`paths: ${HOSTILE.length} hostile paths are each refused with the right reason`, async () => {
  assert.ok(HOSTILE.length >= 50);
  await withFixture(async (f) => {
    const failures: string[] = [];
    for (const [what, input, view, reason] of HOSTILE) {
      const r = await resolvePath(view === "ws" ? f.ws : f.ci, input);
      if (r.ok) failures.push(`${what}: accepted as ${r.value.abs}`);
      else if (!reason.test(r.error)) failures.push(`${what}: refused, but said "${r.error}"`);
      else if (r.error.includes(f.outside) || r.error.includes("/etc/")) {
        failures.push(`${what}: the reason reveals a real outside path: "${r.error}"`);
      }
    }
    assert.deepEqual(failures, []);
  });
});

Deno.test("paths: nothing outside the fixture was touched by the hostile table", async () => {
  await withFixture(async (f) => {
    for (const [, input, view] of HOSTILE) await resolvePath(view === "ws" ? f.ws : f.ci, input);
    const names = [];
    for await (const e of Deno.readDir(f.outside)) names.push(e.name);
    assert.deepEqual(names, ["secret.txt"]);
  });
});

Deno.test("paths: a new file in new folders resolves through its nearest existing parent", async () => {
  await withFixture(async (f) => {
    const r = await resolvePath(f.ws, "docs/new/deeper/file.md");
    assert.ok(r.ok, !r.ok ? r.error : "");
    assert.deepEqual(r.value, {
      rel: "docs/new/deeper/file.md",
      abs: join(f.root, "docs", "new", "deeper", "file.md"),
      exists: false,
      kind: "missing",
      id: null,
    });
  });
});

Deno.test("paths: internal symlinks resolve to their real relative path", async () => {
  await withFixture(async (f) => {
    const cases: [string, string, string][] = [
      ["in_link/a.txt", "src/a.txt", "file"],
      ["in_link", "src", "directory"],
      ["in_file_link", "src/a.txt", "file"],
      ["chain_in1/lib/b.ts", "src/lib/b.ts", "file"],
      ["deep/x/y/in/a.txt", "src/a.txt", "file"],
      ["src/lib/up/ws/README.md", "README.md", "file"],
    ];
    for (const [input, rel, kind] of cases) {
      const r = await resolvePath(f.ws, input);
      assert.ok(r.ok, `${input}: ${!r.ok ? r.error : ""}`);
      assert.equal(r.value.rel, rel, input);
      assert.equal(r.value.kind, kind, input);
      assert.equal(r.value.exists, true, input);
      assert.equal(r.value.abs, join(f.root, rel), input);
    }
    const created = await resolvePath(f.ws, "in_link/new/n.txt");
    assert.ok(created.ok);
    assert.equal(created.value.rel, "src/new/n.txt");
    assert.equal(created.value.exists, false);
  });
});

Deno.test("paths: ordinary spellings are accepted and normalised", async () => {
  await withFixture(async (f) => {
    const cases: [string, string][] = [
      [".", "."],
      ["./", "."],
      ["./src//a.txt", "src/a.txt"],
      ["src/", "src"],
      ["caf\u00e9.txt", "caf\u00e9.txt"],
      ["..foo", "..foo"],
      [".hidden/x", ".hidden/x"],
      ["a~b", "a~b"],
      ["100%.txt", "100%.txt"],
      ["con_notes.txt", "con_notes.txt"],
      ["a".repeat(255), "a".repeat(255)],
    ];
    for (const [input, rel] of cases) {
      const r = await resolvePath(f.ws, input);
      assert.ok(r.ok, `${input}: ${!r.ok ? r.error : ""}`);
      assert.equal(r.value.rel, rel);
    }
    const exact = await resolvePath(f.ci, "src/a.txt");
    assert.ok(exact.ok, "a case-insensitive workspace accepts the exact spelling");
  });
});

Deno.test("paths: a state directory not created yet is still protected, in any case", async () => {
  await withFixture(async (f) => {
    const later = join(f.root, ".bb-later");
    const ws = await openWorkspace(f.root, later, { caseInsensitive: false });
    const ci = await openWorkspace(f.root, later, { caseInsensitive: true });
    for (const [view, input] of [[ws, ".bb-later/trust.json"], [ci, ".BB-LATER/trust.json"]]) {
      const r = await resolvePath(view as typeof ws, input);
      assert.equal(r.ok, false, String(input));
      if (!r.ok) assert.match(r.error, STATE);
    }
    // Given through a link to its parent, it is the same place.
    const viaLink = await openWorkspace(join(f.root, "in_link", ".."), join(f.root, "s2"));
    assert.equal(viaLink.protectedDirs[0], join(f.root, "s2"));
  });
});

Deno.test("paths: a state directory outside the workspace does not block names inside", async () => {
  await withFixture(async (f) => {
    const ws = await openWorkspace(f.root, join(f.base, "state-elsewhere"));
    const r = await resolvePath(ws, ".bravebot-state/trust.json");
    assert.ok(r.ok);
  });
});

Deno.test("paths: syntax checks need no file system and give segments", () => {
  assert.deepEqual(checkPathSyntax("./a//b/"), { ok: true, value: ["a", "b"] });
  assert.deepEqual(checkPathSyntax("."), { ok: true, value: [] });
});

Deno.test("paths: isWithin only treats a whole .. segment as leaving", () => {
  assert.equal(isWithin("/w", "/w"), true);
  assert.equal(isWithin("/w", "/w/..foo"), true);
  assert.equal(isWithin("/w", "/w/a/b"), true);
  assert.equal(isWithin("/w", "/"), false);
  assert.equal(isWithin("/w", "/wx"), false);
  assert.equal(isWithin("/w", "/other"), false);
});

/** Tokens joined freely: separators, dots, links inside and out, encodings, odd Unicode. */
const TOKENS = [
  "/",
  "/",
  "/",
  ".",
  "..",
  "\\",
  "%",
  "%2e",
  "~",
  ":",
  "C:",
  " ",
  "\u00e9",
  "e\u0301",
  "\u202E",
  "\0",
  "src",
  "SRC",
  "a.txt",
  "lib",
  "in_link",
  "in_file_link",
  "chain_in1",
  "out_link",
  "etc_link",
  "link_to_link_out",
  "chain1",
  "dangling",
  "dangling_out",
  "loop",
  "rel_up",
  "up",
  "outside",
  "secret.txt",
  "passwd",
  "deep",
  "x",
  "y",
  "z",
  "in",
  "state_link",
  ".bravebot-state",
  "ws",
  "new",
];

Deno.test("paths (property): no generated path resolves outside the workspace", async () => {
  await withFixture(async (f) => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 14 }),
        fc.boolean(),
        async (tokens, caseInsensitive) => {
          const input = tokens.join("");
          const r = await resolvePath(caseInsensitive ? f.ci : f.ws, input);
          if (!r.ok) {
            assert.ok(r.error.length > 0);
            return;
          }
          accepted++;
          assert.ok(isWithin(f.root, r.value.abs), `${JSON.stringify(input)} -> ${r.value.abs}`);
          assert.ok(!isWithin(f.state, r.value.abs), `${JSON.stringify(input)} reached state`);
          assert.equal(r.value.abs, r.value.rel === "." ? f.root : join(f.root, r.value.rel));
          if (r.value.exists) {
            const real = await Deno.realPath(r.value.abs);
            assert.ok(isWithin(f.root, real));
          }
        },
      ),
      { numRuns: 1500 },
    );
    assert.ok(accepted > 50, `the generator should also produce usable paths (${accepted})`);
  });
});

Deno.test("paths: a case twin is refused without quoting the existing name", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-twin-" }));
  try {
    await Deno.mkdir(join(root, "vendor"));
    await Deno.writeTextFile(join(root, "vendor", "Ignore-Previous-Instructions.md"), "x");
    const ws = await openWorkspace(root, join(root, ".state"));
    const r = await resolvePath(ws, "vendor/ignore-previous-instructions.md");
    assert.equal(r.ok, false);
    if (!r.ok) assert.doesNotMatch(r.error, /Ignore-Previous/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// ---- what is resolved is what a read must open (docs/contract.md §3.2, §13.3) ----

Deno.test("paths: a resolved entry keeps its identity, the real file's even through a link", async () => {
  await withFixture(async (f) => {
    const real = Deno.statSync(join(f.root, "src", "a.txt"));
    for (const typed of ["src/a.txt", "in_file_link", "in_link/a.txt"]) {
      const r = await resolvePath(f.ws, typed);
      assert.ok(r.ok, !r.ok ? r.error : "");
      assert.deepEqual(r.value.id, { dev: real.dev, ino: real.ino }, typed);
    }
    const dir = await resolvePath(f.ws, "in_link");
    const src = Deno.statSync(join(f.root, "src"));
    assert.ok(dir.ok && dir.value.id?.ino === src.ino);
  });
});

Deno.test("paths: what was opened is the entry checked only with the same real path, device and inode", () => {
  const entry = { abs: "/ws/src/a.txt", id: { dev: 7, ino: 42 } };
  const same = { dev: 7, ino: 42, real: "/ws/src/a.txt" };
  assert.equal(openedAsChecked(entry, same), true);
  // Replaced (another inode), on another device, opened through a link elsewhere, or unknown.
  assert.equal(openedAsChecked(entry, { ...same, ino: 43 }), false);
  assert.equal(openedAsChecked(entry, { ...same, dev: 8 }), false);
  assert.equal(openedAsChecked(entry, { ...same, real: "/ws/vendor/evil.txt" }), false);
  assert.equal(openedAsChecked(entry, null), false);
  assert.equal(openedAsChecked(entry, undefined), false);
  // A walk's entry is known by its path: any inode, but at that path, through no link.
  const walked = { abs: "/ws/src/a.txt", id: null };
  assert.equal(openedAsChecked(walked, { ...same, ino: 99 }), true);
  assert.equal(openedAsChecked(walked, { ...same, real: "/ws/vendor/evil.txt" }), false);
});
