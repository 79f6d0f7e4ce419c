import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "../../../test/support/fast_check.ts";
import { findInFiles } from "./search.ts";
import { FIND, type FindInFilesRequest, type FindInFilesResult } from "../search_protocol.ts";
import { sha256 } from "../../util/hash.ts";
import { setSwapHook } from "./wall.ts";

async function withFiles(
  files: Record<string, string | Uint8Array>,
  fn: (paths: (name: string) => string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "bb-find-" });
  try {
    for (const [name, body] of Object.entries(files)) {
      if (typeof body === "string") await Deno.writeTextFile(join(dir, name), body);
      else await Deno.writeFile(join(dir, name), body);
    }
    await fn((name) => join(dir, name));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function request(
  paths: string[],
  needle: string,
  over: Partial<FindInFilesRequest> = {},
): FindInFilesRequest {
  return {
    op: "findInFiles",
    paths,
    needle: new TextEncoder().encode(needle),
    maxBytes: 1024 * 1024,
    maxLines: 200,
    lineChars: 500,
    hashWanted: new Uint8Array(paths.length).fill(1),
    ...over,
  };
}

/** Each matched file's lines, unpacked. */
function linesOf(r: FindInFilesResult): { line: number; text: string }[][] {
  const texts = r.lineNumbers.length > 0 ? r.texts.split("\n") : [];
  assert.equal(texts.length, r.lineNumbers.length);
  let at = 0;
  return r.found.map((f) => {
    const lines = [];
    for (let k = 0; k < f.lines; k++) {
      lines.push({ line: r.lineNumbers[at + k], text: texts[at + k] });
    }
    at += f.lines;
    return lines;
  });
}

/** The search tool's own line rule before the search moved into the worker, over decoded text. */
function reference(text: string, needle: string, room: number, lineChars: number) {
  const lines: { line: number; text: string }[] = [];
  let at = text.indexOf(needle);
  let start = 0;
  let lineNo = 1;
  while (at !== -1) {
    if (lines.length >= room) return { lines, more: true };
    let nl = text.indexOf("\n", start);
    while (nl !== -1 && nl < at) {
      lineNo++;
      start = nl + 1;
      nl = text.indexOf("\n", start);
    }
    let line = text.slice(start, nl === -1 ? text.length : nl);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > lineChars) {
      line = `${line.slice(0, lineChars)} … [line cut: ${line.length} characters]`;
    }
    lines.push({ line: lineNo, text: line });
    if (nl === -1) break;
    start = nl + 1;
    lineNo++;
    at = text.indexOf(needle, start);
  }
  return { lines, more: false };
}

Deno.test("findInFiles: matching lines with line numbers, CR stripped, the BOM kept; the hash is of the bytes searched", async () => {
  const body = "\uFEFFhit first\r\nmiss\nsecond hit hit\nlast hit";
  await withFiles({ "a.txt": body, "b.txt": "nothing\n" }, async (p) => {
    const r = await findInFiles(request([p("a.txt"), p("b.txt")], "hit"));
    assert.deepEqual([...r.status], [FIND.matched, FIND.none]);
    const info = Deno.statSync(p("a.txt"));
    assert.deepEqual(r.found, [{
      index: 0,
      lines: 3,
      more: false,
      sha256: sha256(new TextEncoder().encode(body)),
      // The file searched, as the policy layer is told it (its lines are labelled as it).
      opened: { dev: info.dev, ino: info.ino, real: p("a.txt") },
    }]);
    assert.deepEqual(linesOf(r), [[
      { line: 1, text: "\uFEFFhit first" },
      { line: 3, text: "second hit hit" },
      { line: 4, text: "last hit" },
    ]]);
    const unhashed = await findInFiles(
      request([p("a.txt")], "hit", { hashWanted: new Uint8Array(1) }),
    );
    assert.equal(unhashed.found[0].sha256, null, "hashed only when asked");
  });
});

Deno.test("findInFiles: binary (NUL in the first 8 KiB, or a match in bytes that are not UTF-8), too big, unreadable", async () => {
  const lateNul = new Uint8Array(9000).fill(0x61);
  lateNul[8999] = 0;
  lateNul.set(new TextEncoder().encode("hit"), 10);
  await withFiles({
    "nul.bin": new Uint8Array([0x68, 0x69, 0x74, 0, 1]),
    "late-nul.txt": lateNul,
    "bad.txt": new Uint8Array([0x68, 0x69, 0x74, 0xff, 0x0a]),
    "bad-nomatch.txt": new Uint8Array([0x61, 0xff, 0x0a]),
    "exact.txt": "hit".padEnd(64, "."),
    "big.txt": "hit".padEnd(65, "."),
  }, async (p) => {
    const names = ["nul.bin", "late-nul.txt", "bad.txt", "bad-nomatch.txt", "exact.txt", "big.txt"];
    const r = await findInFiles(
      request([...names.map(p), p("missing.txt"), p(".")], "hit", { maxBytes: 64 }),
    );
    assert.deepEqual([...r.status], [
      FIND.binary,
      FIND.tooBig, // 9000 bytes > 64
      FIND.binary,
      FIND.none,
      FIND.matched,
      FIND.tooBig,
      FIND.unreadable,
      FIND.unreadable,
    ]);
    assert.deepEqual(r.errors.map((e) => [e.index, e.name]), [[6, "NotFound"], [
      7,
      "IsADirectory",
    ]]);
    const big = await findInFiles(request([p("late-nul.txt")], "hit"));
    assert.deepEqual([...big.status], [FIND.matched], "a NUL after 8 KiB is not binary");
  });
});

Deno.test("findInFiles: a file that grows between its check and its open is read as the handle finds it, and a cap's worth at most", async () => {
  await withFiles({
    "grows.txt": "first line\n",
    "grows-past.txt": "first line\n",
    "plain.txt": "hit in a file that does not change\n",
  }, async (p) => {
    setSwapHook((stage, real) => {
      if (stage !== "open") return;
      if (real.endsWith("/grows.txt")) {
        Deno.writeTextFileSync(real, "hit, written after\n", { append: true });
      }
      if (real.endsWith("/grows-past.txt")) {
        Deno.writeTextFileSync(real, "hit".padEnd(80, "."), { append: true });
      }
    });
    try {
      const r = await findInFiles(
        request([p("grows.txt"), p("grows-past.txt"), p("plain.txt")], "hit", { maxBytes: 64 }),
      );
      // The bytes past the size the check saw are read (the handle's size, not the check's),
      // and a file grown past the cap is too big, never read whole.
      assert.deepEqual([...r.status], [FIND.matched, FIND.tooBig, FIND.matched]);
      assert.deepEqual(linesOf(r)[0], [{ line: 2, text: "hit, written after" }]);
      assert.equal(
        r.found[0].sha256,
        sha256(new TextEncoder().encode("first line\nhit, written after\n")),
      );
    } finally {
      setSwapHook(null);
    }
  });
});

Deno.test("findInFiles: a file removed or swapped between its check and its open is refused, under Deno's error names", async () => {
  await withFiles(
    { "gone.txt": "hit\n", "swapped.txt": "hit\n", "other.txt": "hit, other\n" },
    async (p) => {
      setSwapHook((stage, real) => {
        if (stage !== "open") return;
        if (real.endsWith("/gone.txt")) Deno.removeSync(real);
        if (real.endsWith("/swapped.txt")) Deno.renameSync(p("other.txt"), real);
      });
      try {
        const r = await findInFiles(request([p("gone.txt"), p("swapped.txt")], "hit"));
        assert.deepEqual([...r.status], [FIND.unreadable, FIND.unreadable]);
        assert.deepEqual(r.errors.map((e) => [e.index, e.name]), [[0, "NotFound"], [
          1,
          "OutsideWall",
        ]]);
        assert.equal(r.found.length, 0);
      } finally {
        setSwapHook(null);
      }
    },
  );
});

Deno.test("findInFiles: a reused buffer never matches what an earlier, longer file left in it", async () => {
  await withFiles({
    "long.txt": "x".repeat(5000) + "needle at the end of a long file\n",
    "short.txt": "x".repeat(4990) + "nee",
    "tiny.txt": "",
  }, async (p) => {
    const r = await findInFiles(request([p("long.txt"), p("short.txt"), p("tiny.txt")], "needle"));
    assert.deepEqual([...r.status], [FIND.matched, FIND.none, FIND.none]);
    const one = await findInFiles(request([p("long.txt"), p("short.txt")], "e"));
    assert.deepEqual([...one.status], [FIND.matched, FIND.matched]);
    assert.equal(linesOf(one)[1][0].line, 1);
  });
});

Deno.test("findInFiles: the line cap holds over the whole request; later files are not read", async () => {
  await withFiles({
    "a.txt": "hit\nhit\nhit\n",
    "b.txt": "hit\nhit\nhit\n",
    "c.txt": "hit\n",
  }, async (p) => {
    const r = await findInFiles(
      request([p("a.txt"), p("b.txt"), p("c.txt")], "hit", { maxLines: 4 }),
    );
    assert.deepEqual([...r.status], [FIND.matched, FIND.matched, FIND.notReached]);
    assert.equal(r.found[0].lines, 3);
    assert.equal(r.found[0].more, false);
    assert.deepEqual(linesOf(r)[1], [{ line: 1, text: "hit" }]);
    assert.equal(r.found[1].more, true);
  });
});

Deno.test("findInFiles: a long line is cut at lineChars code units, and its whole length is said", async () => {
  const wide = "é".repeat(30) + "hit" + "😀".repeat(10);
  await withFiles({ "a.txt": `${wide}\n${"a".repeat(40)}hit\nshort hit\n` }, async (p) => {
    const r = await findInFiles(request([p("a.txt")], "hit", { lineChars: 20 }));
    assert.deepEqual(linesOf(r)[0].map((l) => l.text), [
      `${wide.slice(0, 20)} … [line cut: ${wide.length} characters]`,
      `${"a".repeat(20)} … [line cut: 43 characters]`,
      "short hit",
    ]);
  });
});

Deno.test("findInFiles: the same lines as the tool's rule over decoded text, for any text and literal", async () => {
  const chars = fc.constantFrom("a", "b", "\n", "\r", "é", "😀", " ");
  const text = fc.array(chars, { maxLength: 120 }).map((a) => a.join(""));
  const needle = fc.array(chars, { minLength: 1, maxLength: 4 }).map((a) => a.join(""));
  const dir = await Deno.makeTempDir({ prefix: "bb-find-prop-" });
  try {
    await fc.assert(
      fc.asyncProperty(
        text,
        needle,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        async (t, n, room, chars) => {
          const path = join(dir, "f.txt");
          await Deno.writeTextFile(path, t);
          const r = await findInFiles(request([path], n, { maxLines: room, lineChars: chars }));
          const want = reference(t, n, room, chars);
          if (want.lines.length === 0) {
            assert.deepEqual([...r.status], [FIND.none]);
            return;
          }
          assert.deepEqual([...r.status], [FIND.matched]);
          assert.deepEqual(linesOf(r)[0], want.lines);
          assert.equal(r.found[0].more, want.more);
        },
      ),
      { numRuns: 400 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findInFiles: what it skips as binary is exactly what util/text.ts calls not text", async () => {
  const { decodeText } = await import("../../util/text.ts");
  const byte = fc.oneof(
    fc.constant(0),
    fc.constant(0x61),
    fc.constant(0xc3),
    fc.constant(0xa9),
    fc.constant(0xff),
    fc.integer({ min: 0, max: 255 }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(byte, { maxLength: 64 }),
      fc.integer({ min: 0, max: 9000 }),
      async (tail, pad) => {
        // "a" padding moves the odd bytes across the 8 KiB sniff boundary.
        const bytes = new Uint8Array([...new Uint8Array(pad).fill(0x61), ...tail, 0x61]);
        await withFiles({ f: bytes }, async (path) => {
          const r = await findInFiles(request([path("f")], "a"));
          assert.equal(r.status[0] === FIND.binary, decodeText(bytes) === null);
        });
      },
    ),
    { numRuns: 60 },
  );
});
