import assert from "node:assert/strict";
import fc from "../../test/support/fast_check.ts";
import stringWidth from "string-width";
import { escapeForScreen, isControl, isInvisible } from "../util/escape.ts";
import { renderMarkdown, splitStable } from "./markdown.ts";

const ESC = "\u001b";
/** SGR sequences, the only escape sequences the renderer may write. */
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, "g");
const plain = (lines: string[]) => lines.map((l) => l.replace(SGR, ""));
const md = (text: string, width = 80) => renderMarkdown(text, width);

function assertFits(lines: string[], width: number) {
  for (const l of lines) {
    const w = stringWidth(l);
    assert.ok(w <= width, `${w} > ${width} cells: ${JSON.stringify(l)}`);
  }
}

function assertOnlySgr(lines: string[]) {
  for (const l of lines) {
    assert.ok(!l.replace(SGR, "").includes(ESC), `an escape other than SGR: ${JSON.stringify(l)}`);
  }
}

Deno.test("markdown: headings lose their marks in colour and keep them without", () => {
  assert.deepEqual(md("# Done\n\n## Next steps"), ["# Done", "", "## Next steps"]);
  const coloured = renderMarkdown("## Done", 80, { color: true });
  assert.deepEqual(plain(coloured), ["Done"]);
  assert.ok(coloured[0].includes(`${ESC}[1m`), "bold");
});

Deno.test("markdown: emphasis, strong, strike and code spans", () => {
  assert.deepEqual(md("a **b** *c* ~~d~~ `e  f` g"), ["a b c d `e  f` g"]);
  const [line] = renderMarkdown("**b** *c* `e`", 80, { color: true });
  assert.ok(line.includes(`${ESC}[1mb${ESC}[22m`), "bold");
  assert.ok(line.includes(`${ESC}[3mc${ESC}[23m`), "italic");
  assert.ok(!plain([line])[0].includes("`"), "colour sets code apart without backticks");
  assert.ok(!plain([line])[0].includes("*"));
});

Deno.test("markdown: character references are decoded, then escaped like raw characters", () => {
  assert.deepEqual(md("a &amp; b &lt;c&gt; &#x41;"), ["a & b <c> A"]);
  const [line] = md("x&#27;[31my &#8238;z");
  assert.ok(!line.includes(ESC) && !line.includes("\u202E"));
  assert.ok(line.includes(escapeForScreen("\u001b")) && line.includes(escapeForScreen("\u202E")));
});

Deno.test("markdown: ordered, unordered, nested and task lists", () => {
  const out = md("1. one\n2. two\n   - inner\n     - deeper\n3. three\n\n- [ ] todo\n- [x] done");
  assert.deepEqual(out, [
    "1. one",
    "2. two",
    "   ◦ inner",
    "     ▪ deeper",
    "3. three",
    "",
    "[ ] todo",
    "[x] done",
  ]);
  assert.deepEqual(md("- a\n- b"), ["• a", "• b"]);
  // A list item's continuation lines line up under its text.
  assert.deepEqual(md("- alpha beta gamma delta epsilon", 20), [
    "• alpha beta gamma",
    "  delta epsilon",
  ]);
  assert.deepEqual(md("9. x\n10. y"), [" 9. x", "10. y"], "numbers right-aligned");
});

Deno.test("markdown: a block quote is barred, nested ones twice", () => {
  assert.deepEqual(md("> quoted **text**\n>\n> > inner"), ["│ quoted text", "│", "│ │ inner"]);
});

Deno.test("markdown: a table is laid out in aligned columns", () => {
  const table = "| Name | Size | Note |\n|---|--:|:-:|\n| alpha | 1 | x |\n| beta | 22 | yy |";
  assert.deepEqual(md(table), [
    "Name  │ Size │ Note",
    "──────┼──────┼─────",
    "alpha │    1 │  x",
    "beta  │   22 │  yy",
  ]);
});

Deno.test("markdown: a wide table wraps its cells, and a table with no room becomes records", () => {
  const long = "word ".repeat(30).trim();
  const wide = `| key | text |\n|---|---|\n| a | ${long} |`;
  const lines = md(wide, 40);
  assertFits(lines, 40);
  assert.ok(lines.length > 3, "the long cell wraps over several rows");
  assert.ok(lines.every((l) => l.includes("│") || l.includes("┼")));
  const many = `| ${"h |".repeat(8)}\n|${"---|".repeat(8)}\n| ${"v |".repeat(8)}`;
  const records = md(many, 40);
  assertFits(records, 40);
  assert.equal(
    records[0],
    "h: v",
    "eight columns cannot share 40 cells: one `header: value` a line",
  );
});

Deno.test("markdown: fenced code is highlighted in colour, its text unchanged", () => {
  const src = '```ts\nconst re = /x/; // note\nfunction f(a: string) { return "s"; }\n```';
  const coloured = renderMarkdown(src, 120, { color: true });
  assert.ok(coloured.some((l) => l.includes(`${ESC}[`)), "some SGR colour");
  assertOnlySgr(coloured);
  assert.deepEqual(plain(coloured), [
    "  const re = /x/; // note",
    '  function f(a: string) { return "s"; }',
  ]);
  assert.deepEqual(md(src, 120), plain(coloured), "without colour: the same text, no SGR");
  // An unknown language is shown plain rather than guessed.
  assert.deepEqual(renderMarkdown("```nosuchlang\nx = 1\n```", 80, { color: true }), ["  x = 1"]);
});

Deno.test("markdown: highlight.js's token classes get their colours", () => {
  const [line] = renderMarkdown('```js\nconst s = "x"; // why\n```', 80, { color: true });
  assert.ok(line.includes(`${ESC}[34mconst${ESC}[39m`), `keyword blue: ${JSON.stringify(line)}`);
  assert.ok(line.includes(`${ESC}[32m"x"${ESC}[39m`), `string green: ${JSON.stringify(line)}`);
  assert.ok(line.includes(`${ESC}[90m// why${ESC}[39m`), `comment gray: ${JSON.stringify(line)}`);
  // A nested token without a style of its own keeps its parent's: the `${x}` inside a template
  // string is green like the string around it.
  const [nested] = renderMarkdown("```js\nlet t = `a ${x} b`;\n```", 80, { color: true });
  assert.deepEqual(plain([nested]), ["  let t = `a ${x} b`;"]);
  assert.ok(nested.includes(`${ESC}[32m\`a \${x} b\`${ESC}[39m`), JSON.stringify(nested));
  // A class styled plain on purpose (parameters) stays plain; the number inside is yellow.
  const [def] = renderMarkdown("```python\ndef f(a, b=1):\n```", 80, { color: true });
  assert.ok(def.includes(`(a, b=${ESC}[33m1${ESC}[39m):`), JSON.stringify(def));
});

Deno.test("markdown: highlighted code still shows untrusted control characters as markers", () => {
  const osc52 = "\u001b]52;c;aGVsbG8=\u0007";
  const csi = "\u001b[2J";
  const hostile: [string, string][] = [
    ["js", `const s = "${osc52}"; // ${csi} \u202Etxt.exe`],
    ["ts", `let t = \`\${a}${csi}\`; /* \u200B */`],
    ["python", `print("${osc52}")  # \u0000 \u009b`],
    ["sh", `echo '${csi}' "$HOME${osc52}" # \u2066`],
    ["json", `{"k": "${osc52}", "n": 1}`],
    ["html", `<a href="${osc52}">${csi}</a><!-- \u202E -->`],
    ["diff", `+added ${csi}`],
  ];
  for (const [lang, line] of hostile) {
    const text = "```" + lang + "\n" + line + "\n```";
    const coloured = renderMarkdown(text, 200, { color: true });
    // Highlighted, not the plain fallback: the markers did not put the highlighter off.
    assert.ok(coloured[0].includes(`${ESC}[3`), `${lang}: not highlighted`);
    assertOnlySgr(coloured);
    assert.deepEqual(plain(coloured), [`  ${escapeForScreen(line)}`], lang);
    assert.ok(plain(coloured)[0].includes("\u27E6U+"), `${lang}: no marker`);
    assert.deepEqual(md(text, 200), plain(coloured), `${lang}: colour changed the text`);
  }
});

const CODE_FRAGMENTS = [
  "const ",
  "x",
  " = ",
  '"',
  "'",
  "`",
  "${",
  "}",
  "//",
  "/*",
  "*/",
  "#",
  "<a>",
  "</a>",
  "<!--",
  "\\",
  "\n",
  "1.5",
  "\u001b]52;c;YQ==\u0007",
  "\u001b[31m",
  "\u009b",
  "\u0000",
  "\u202E",
  "\u200B",
  "\u27E6",
  "\r",
  "\t",
];

Deno.test("markdown: property: highlighting never changes code's text or lets an escape through", () => {
  const code = fc.array(fc.constantFrom(...CODE_FRAGMENTS), { minLength: 1, maxLength: 40 })
    .map((a) => a.join(""));
  const lang = fc.constantFrom("js", "ts", "python", "sh", "json", "html", "c", "yaml", "diff");
  fc.assert(
    fc.property(code, lang, (body, l) => {
      const text = "```" + l + "\n" + body + "\n```";
      const coloured = renderMarkdown(text, 120, { color: true });
      assertOnlySgr(coloured);
      assert.deepEqual(plain(coloured), md(text, 120));
      for (const line of coloured) {
        const raw = [...line].find((ch) => (isControl(ch) && ch !== ESC) || isInvisible(ch));
        assert.equal(raw, undefined, JSON.stringify(line));
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("markdown: a long code line is wrapped onto marked rows, every character kept", () => {
  const code = "const value = compute(alpha, beta, gamma) + another_function_name(delta);";
  const lines = md("```\n" + code + "\n```", 40);
  assertFits(lines, 40);
  assert.ok(lines.length > 1 && lines.slice(1).every((l) => l.startsWith("↪ ")));
  assert.equal(lines.map((l) => l.slice(2)).join(""), code);
});

Deno.test("markdown: a link hiding its target shows the target; no OSC 8", () => {
  assert.deepEqual(md("see [the docs](https://evil.example/x)"), [
    "see the docs (https://evil.example/x)",
  ]);
  assert.deepEqual(md("[https://good.example](https://evil.example)"), [
    "https://good.example (https://evil.example)",
  ]);
  assert.deepEqual(md("<https://x.example> and www.y.example"), [
    "https://x.example and www.y.example",
  ]);
  const coloured = renderMarkdown("[a](https://b.example) <https://c.example>", 80, {
    color: true,
  });
  assertOnlySgr(coloured);
  assert.ok(!coloured.join("").includes("\u001b]"));
  assert.deepEqual(md("![diagram](https://img.example/a.png)"), [
    "[diagram] (https://img.example/a.png)",
  ]);
});

Deno.test("markdown: OSC 52, OSC 8 and bidi characters show as markers wherever they are", () => {
  const osc52 = "\u001b]52;c;aGVsbG8=\u0007";
  const osc8 = "\u001b]8;;https://evil.example\u001b\\text\u001b]8;;\u001b\\";
  const bidi = "\u202Etxt.exe";
  const hostile = [
    `plain ${osc52} ${osc8} ${bidi}`,
    `# heading ${osc52}`,
    `\`code ${osc8}\``,
    "```sh\necho " + osc52 + " " + bidi + "\n```",
    `[link ${bidi}](https://x.example/${osc8})`,
    `| a |\n|---|\n| ${osc52} ${bidi} |`,
    `- item ${osc8}`,
    `> quote ${bidi}`,
    `<span>${osc52}</span>`,
  ];
  for (const text of hostile) {
    for (const color of [false, true]) {
      const out = renderMarkdown(text, 60, { color }).join("\n");
      assert.ok(!out.includes("\u001b]"), `raw OSC from ${JSON.stringify(text)}`);
      assert.ok(!out.includes("\u202E"), `raw bidi override from ${JSON.stringify(text)}`);
      assert.ok(!out.includes("\u0007"));
      if (!color) assert.ok(!out.includes(ESC));
      else assertOnlySgr(out.split("\n"));
      assert.ok(out.includes(escapeForScreen("\u001b")) || out.includes(escapeForScreen("\u202E")));
    }
  }
});

Deno.test("markdown: prose wraps at word boundaries at 40 columns", () => {
  const text = "The quick brown fox jumps over the lazy dog and keeps running far away " +
    "until the sun sets behind the distant hills.";
  const lines = md(text, 40);
  assertFits(lines, 40);
  assert.equal(lines.join(" "), text, "breaks only where a space was");
  const long = "x".repeat(90);
  assert.deepEqual(md(`a ${long} b`, 40), [
    "a",
    "x".repeat(40),
    "x".repeat(40),
    "x".repeat(10) + " b",
  ]);
  assert.deepEqual(md("one  \ntwo"), ["one", "two"], "a hard break");
});

Deno.test("markdown: wide characters count two cells", () => {
  const lines = md("中文".repeat(30), 40);
  assertFits(lines, 40);
  assert.equal(stringWidth(lines[0]), 40);
  const emoji = md("👍 ".repeat(30), 40);
  assertFits(emoji, 40);
});

Deno.test("markdown: deep nesting keeps every line within the width", () => {
  const deep = Array.from({ length: 30 }, (_, i) => `${"  ".repeat(i)}- level ${i} words here`)
    .join("\n");
  assertFits(md(deep, 40), 40);
  assertFits(md(">".repeat(60) + " deep quote with words", 40), 40);
});

const FRAGMENTS = [
  "# ",
  "## ",
  "- ",
  "1. ",
  "> ",
  "**",
  "*",
  "_",
  "`",
  "```",
  "```ts",
  "~~",
  "[",
  "](",
  ")",
  "<",
  ">",
  "|",
  "|---|",
  "---",
  "\n",
  "\n\n",
  "  ",
  "    ",
  "\t",
  "word",
  "longer-words-joined-by-hyphens",
  "x".repeat(70),
  "中文字符",
  "👍",
  "é",
  "e\u0301",
  "&amp;",
  "&#27;",
  "\\",
  "\u001b]52;c;YQ==\u0007",
  "\u001b]8;;http://e\u001b\\",
  "\u001b[31m",
  "\u202E",
  "\u200B",
  "\u0000",
  "\r",
  "https://x.example/path",
];

const markdownish = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 60 }).map((a) =>
  a.join("")
);

Deno.test("markdown: property: any markdown-ish text fits 40 and 120 columns and writes no raw escape", () => {
  fc.assert(
    fc.property(markdownish, fc.constantFrom(40, 120), fc.boolean(), (text, width, color) => {
      const lines = renderMarkdown(text, width, { color });
      assertFits(lines, width);
      if (color) assertOnlySgr(lines);
      else for (const l of lines) assert.ok(!l.includes(ESC), JSON.stringify(l));
      for (const l of lines) {
        const raw = [...l].find((ch) => (isControl(ch) && ch !== ESC) || isInvisible(ch));
        assert.equal(raw, undefined, JSON.stringify(l));
      }
    }),
    { numRuns: 400 },
  );
});

Deno.test("markdown: property: plain words are never split when they fit", () => {
  const word = fc.stringMatching(/^[a-z]{1,12}$/);
  fc.assert(
    fc.property(
      fc.array(word, { minLength: 1, maxLength: 80 }),
      fc.integer({ min: 20, max: 130 }),
      (words, width) => {
        const lines = renderMarkdown(words.join(" "), width);
        assertFits(lines, width);
        assert.deepEqual(lines.join(" ").split(" "), words);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("splitStable: cuts after the last blank line before a line in the first column", () => {
  assert.deepEqual(splitStable("para one\n\npara tw"), { stable: "para one\n\n", rest: "para tw" });
  assert.deepEqual(splitStable("para one\n\n"), { stable: "", rest: "para one\n\n" });
  assert.deepEqual(splitStable("no blank line yet"), { stable: "", rest: "no blank line yet" });
  assert.deepEqual(splitStable("# A\n\ntext\n\n- b"), { stable: "# A\n\ntext\n\n", rest: "- b" });
});

Deno.test("splitStable: never cuts inside a fenced code block or an indented continuation", () => {
  const fenced = "intro\n\n```py\ndef f():\n\nreturn 1\n";
  assert.deepEqual(splitStable(fenced), {
    stable: "intro\n\n",
    rest: "```py\ndef f():\n\nreturn 1\n",
  });
  const closed = fenced + "```\n\nafter";
  assert.equal(splitStable(closed).rest, "after");
  const tildes = "~~~\n```\n\nstill code\n";
  assert.equal(splitStable(tildes).stable, "");
  const item = "- item\n\n  continued\n\n    code in item";
  assert.equal(splitStable(item).stable, "");
});

Deno.test("splitStable: property: stable only grows, and stable + rest is the text", () => {
  fc.assert(
    fc.property(markdownish, fc.nat(), (text, n) => {
      const cut = n % (text.length + 1);
      const early = splitStable(text.slice(0, cut));
      const late = splitStable(text);
      assert.equal(late.stable + late.rest, text);
      assert.equal(early.stable + early.rest, text.slice(0, cut));
      assert.ok(late.stable.startsWith(early.stable));
    }),
    { numRuns: 500 },
  );
});

Deno.test("splitStable: rendering the stable pieces one by one gives the lines of the whole", () => {
  const text = "# Title\n\nA paragraph of words.\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n" +
    "- one\n- two\n\nlast words";
  const pieces: string[][] = [];
  let shown = 0;
  for (let end = 1; end <= text.length; end++) {
    const { stable } = splitStable(text.slice(0, end));
    if (stable.length > shown) {
      pieces.push(md(stable.slice(shown)));
      shown = stable.length;
    }
  }
  pieces.push(md(text.slice(shown)));
  const joined = pieces.flatMap((p, i) => i ? ["", ...p] : p);
  assert.deepEqual(joined, md(text));
});

Deno.test("markdown: code keeps its backslashes as escapeForScreen shows them, escaped once", () => {
  const line = "const re = /\\d+\\.\\d+/;";
  assert.deepEqual(md("```js\n" + line + "\n```"), [`  ${escapeForScreen(line)}`]);
  assert.deepEqual(plain(renderMarkdown("```js\n" + line + "\n```", 80, { color: true })), [
    `  ${escapeForScreen(line)}`,
  ]);
  assert.deepEqual(md("`a\\b`"), [`\`${escapeForScreen("a\\b")}\``]);
});

Deno.test("markdown: tabs in a code block become spaces to the next stop of four", () => {
  assert.deepEqual(md("```go\nfunc f() {\n\treturn\n\ta\tb\n}\n```"), [
    "  func f() {",
    "      return",
    "      a   b",
    "  }",
  ]);
});
