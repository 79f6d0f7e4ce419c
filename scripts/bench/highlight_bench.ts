/**
 * The code highlighter, candidates side by side (docs/decisions.md, "Code highlighting"): what
 * importing each costs a fresh process (wall and CPU time, the CPU steadier on a shared machine),
 * highlighting a 500-line TypeScript block (the first call compiles the grammar), how many of 66
 * fence names it knows, and its output on twelve snippets in twelve languages: the share of
 * non-blank characters it colours, and the share coloured as the chosen one colours them.
 *
 * Only the chosen one is a dependency. Each candidate runs in `deno eval --no-config --no-lock`
 * from its full specifier, so neither the import map nor the lock learns of the others (the
 * first run downloads them), and the code that imports them is a string `deno check` never sees.
 */
import { join } from "node:path";
import { CODE_STYLE } from "../../src/person/markdown.ts";
import { median } from "./measure.ts";
import type { Row } from "./report.ts";

/** Fence names an answer might use; what each candidate registers is counted. */
export const FENCE_NAMES = ("ts tsx js jsx javascript typescript py python sh bash shell zsh " +
  "console json jsonc yaml yml toml go rust rs c cpp c++ h java kotlin kt swift rb ruby php sql " +
  "html xml css scss diff patch makefile make dockerfile docker md markdown ini lua perl r cs " +
  "csharp graphql proto hcl terraform nix zig elixir haskell scala dart powershell ps1 text txt " +
  "plaintext").split(" ");

/** The output snippets: [fence name, code]. Every candidate knows these names. */
export const SNIPPETS: [string, string][] = [
  [
    "ts",
    [
      'import { join } from "node:path";',
      "/** Reads the config. */",
      "export async function readConfig(dir: string, limit = 256): Promise<Config | null> {",
      "  const re = /^[a-z]+\\d*$/i;",
      "  try {",
      "    return JSON.parse(await Deno.readTextFile(join(dir, `${limit}.json`))); // trusted",
      "  } catch (e) {",
      "    if (e instanceof Deno.errors.NotFound) return null;",
      "    throw new Error(`bad config: ${String(e)}`);",
      "  }",
      "}",
      "class Store<T> extends Base implements Iterable<T> {",
      "  private items: T[] = [];",
      "}",
    ].join("\n"),
  ],
  [
    "python",
    [
      "from typing import Optional",
      "",
      "@dataclass",
      "class Job:",
      "    retries: int = 3",
      "",
      "def run(job: Job, env: Optional[dict] = None) -> bool:",
      '    """Runs the job."""',
      "    for i in range(job.retries):",
      '        if os.system(f"make {job.name}") == 0:',
      "            return True",
      "    return False  # gave up",
    ].join("\n"),
  ],
  [
    "sh",
    [
      "#!/usr/bin/env bash",
      "set -euo pipefail",
      "for f in src/*.ts; do",
      '  if [ -s "$f" ]; then',
      '    echo "checking ${f}" >&2',
      '    deno check "$f" || exit 1',
      "  fi",
      "done",
      'export PATH="$HOME/.deno/bin:$PATH"',
    ].join("\n"),
  ],
  [
    "json",
    '{\n  "name": "brave-bot",\n  "private": true,\n  "limits": { "bytes": 262144, ' +
    '"ratio": 0.5, "none": null },\n  "tags": ["cli", "agent"]\n}',
  ],
  [
    "go",
    [
      "package main",
      "",
      'import "fmt"',
      "",
      "// Config holds settings.",
      "type Config struct {",
      '\tName  string `json:"name"`',
      "\tLimit int",
      "}",
      "",
      "func main() {",
      '\tc := Config{Name: "x", Limit: 42}',
      '\tfmt.Println("hello", c.Name, 3.14)',
      "}",
    ].join("\n"),
  ],
  [
    "rust",
    [
      "use std::collections::HashMap;",
      "",
      "#[derive(Debug, Clone)]",
      "pub struct Entry<'a> {",
      "    key: &'a str,",
      "    count: u64,",
      "}",
      "",
      "fn tally(words: &[&str]) -> HashMap<String, usize> {",
      "    let mut m = HashMap::new();",
      "    for w in words {",
      "        *m.entry(w.to_string()).or_insert(0) += 1; // count",
      "    }",
      '    println!("{} words", m.len());',
      "    m",
      "}",
    ].join("\n"),
  ],
  [
    "yaml",
    [
      "name: ci",
      "on:",
      "  push:",
      "    branches: [main]",
      "jobs:",
      "  test:",
      "    steps:",
      "      - uses: actions/checkout@v4",
      "      - run: deno task test # all",
      "        env:",
      "          CI: true",
      "          RETRIES: 3",
    ].join("\n"),
  ],
  [
    "diff",
    [
      "diff --git a/src/a.ts b/src/a.ts",
      "--- a/src/a.ts",
      "+++ b/src/a.ts",
      "@@ -1,3 +1,3 @@",
      " const a = 1;",
      "-const b = 2;",
      "+const b = 3;",
      " export { a, b };",
    ].join("\n"),
  ],
  [
    "html",
    [
      "<!DOCTYPE html>",
      '<html lang="en">',
      "  <head><title>Report</title></head>",
      '  <body class="main">',
      "    <!-- generated -->",
      '    <p id="x">Hello &amp; welcome</p>',
      "    <script>const n = 1;</script>",
      "  </body>",
      "</html>",
    ].join("\n"),
  ],
  [
    "css",
    [
      "@media (max-width: 600px) {",
      "  .card > h2:hover, #main {",
      "    color: #ff0066;",
      "    margin: 0 auto !important;",
      '    font-family: "Inter", sans-serif;',
      "  }",
      "}",
    ].join("\n"),
  ],
  [
    "sql",
    [
      "SELECT u.id, COUNT(*) AS n",
      "FROM users u",
      "LEFT JOIN orders o ON o.user_id = u.id",
      "WHERE u.created_at > '2024-01-01' AND o.total >= 10.5",
      "GROUP BY u.id",
      "ORDER BY n DESC",
      "LIMIT 20; -- top",
    ].join("\n"),
  ],
  [
    "c",
    [
      "#include <stdio.h>",
      "#define MAX 16",
      "",
      "static int sum(const int *xs, size_t n) {",
      "    int s = 0;",
      "    for (size_t i = 0; i < n; i++) s += xs[i];",
      "    return s; /* total */",
      "}",
      "",
      "int main(void) {",
      '    printf("%d\\n", sum((int[]){1, 2, 3}, 3));',
      "    return 0;",
      "}",
    ].join("\n"),
  ],
];

/** A 500-line TypeScript block, for the highlighting time. */
function largeBlock(): string {
  const out: string[] = [];
  for (let i = 1; out.length < 500; i++) {
    out.push(
      `export function parse${i}(text: string): Token[] {`,
      "  const out: Token[] = [];",
      "  for (let at = 0; at < text.length; at++) out.push(read(text, at));",
      `  return out; // pass ${i}`,
      "}",
      `const re${i} = /\\d+\\.\\d+/g; const s${i} = "str ${i}";`,
      "",
    );
  }
  return out.slice(0, 500).join("\n");
}

/**
 * Classes of Prism's tokens and a style like CODE_STYLE's for each; punctuation and operators
 * stay plain, as highlight.js leaves them.
 */
const PRISM_STYLE: Record<string, string[]> = {
  keyword: ["blue"],
  builtin: ["cyan"],
  "class-name": ["cyan"],
  boolean: ["blue"],
  constant: ["blue"],
  number: ["yellow"],
  string: ["green"],
  char: ["green"],
  "template-string": ["green"],
  "attr-value": ["green"],
  url: ["green"],
  regex: ["red"],
  comment: ["gray"],
  prolog: ["gray"],
  doctype: ["gray"],
  function: ["yellow"],
  "attr-name": ["cyan"],
  property: ["cyan"],
  selector: ["yellow"],
  tag: ["gray"],
  atrule: ["blue"],
  important: ["blue"],
  symbol: ["magenta"],
  variable: ["magenta"],
  inserted: ["green"],
  deleted: ["red"],
  coord: ["bold"],
  punctuation: [],
  operator: [],
};

interface Candidate {
  name: string;
  /** Module code defining `known(name)` and `chains(lang, text)`. */
  setup: string;
  styles: Record<string, readonly string[]>;
}

/**
 * `chains` gives, for each UTF-16 unit of the text, the class lists of the tokens around it,
 * innermost first; the style is the innermost one the table names (a token without a style of
 * its own keeps its parent's, as src/person/markdown.ts renders).
 */
const HAST_CHAINS = `
const chains = (lang, text) => {
  const out = [];
  const walk = (node, chain) => {
    if (node.type === "text") { for (let i = 0; i < node.value.length; i++) out.push(chain); return; }
    const cls = node.properties?.className;
    const next = Array.isArray(cls) ? [cls, ...chain] : chain;
    for (const c of node.children ?? []) walk(c, next);
  };
  walk(tree(lang, text), []);
  return out;
};`;

const lowlight = (grammars: "all" | "common"): string => `
const { createLowlight, ${grammars}: grammars } = await import("npm:lowlight@3.3.0");
const low = createLowlight(grammars);
const known = (name) => low.registered(name);
const tree = (lang, text) => low.highlight(lang, text, { prefix: "" });
${HAST_CHAINS}`;

const refractor = (entry: "refractor" | "refractor/all"): string => `
const { refractor } = await import("npm:${entry.replace("refractor", "refractor@5.0.0")}");
const known = (name) => refractor.registered(name);
const tree = (lang, text) => refractor.highlight(text, lang);
${HAST_CHAINS}`;

/** The highlighter before lowlight, driven as it was: a theme that marks tokens. */
const CLI_HIGHLIGHT = `
const { highlight, supportsLanguage } = await import("npm:cli-highlight@2.1.11");
const known = (name) => supportsLanguage(name);
const theme = new Proxy({}, { get: (_, k) => (s) => "\\u0001" + String(k) + "\\u0002" + s + "\\u0003" });
const chains = (lang, text) => {
  const m = highlight(text, { language: lang, ignoreIllegals: true, theme });
  const out = [];
  const stack = [];
  for (let i = 0; i < m.length; i++) {
    if (m[i] === "\\u0001") {
      const mid = m.indexOf("\\u0002", i);
      const k = m.slice(i + 1, mid);
      stack.unshift(k === "default" ? [] : [k]);
      i = mid;
    } else if (m[i] === "\\u0003") stack.shift();
    else out.push([...stack]);
  }
  return out;
};`;

const CHOSEN = "lowlight 3.3.0, every grammar";

export const CANDIDATES: readonly Candidate[] = [
  { name: CHOSEN, setup: lowlight("all"), styles: CODE_STYLE },
  { name: "lowlight 3.3.0, common grammars", setup: lowlight("common"), styles: CODE_STYLE },
  { name: "refractor 5.0.0, common", setup: refractor("refractor"), styles: PRISM_STYLE },
  { name: "refractor 5.0.0, all", setup: refractor("refractor/all"), styles: PRISM_STYLE },
  { name: "cli-highlight 2.1.11 (before)", setup: CLI_HIGHLIGHT, styles: CODE_STYLE },
];

interface Sample {
  importMs: number;
  importCpuMs: number;
  firstMs: number;
  steadyMs: number;
  known: number;
  /** Per snippet, per UTF-16 unit: the class chain. */
  chains: string[][][][];
}

/** One fresh process: import, highlight, report as JSON. */
async function sample(c: Candidate, inputPath: string): Promise<Sample | null> {
  const code = `import process from "node:process";
const input = JSON.parse(await Deno.readTextFile(${JSON.stringify(inputPath)}));
const c0 = process.cpuUsage();
const t0 = performance.now();
${c.setup}
const t1 = performance.now();
const cpu = process.cpuUsage(c0);
chains("ts", input.large);
const t2 = performance.now();
const steady = [];
for (let i = 0; i < 5; i++) { const s = performance.now(); chains("ts", input.large); steady.push(performance.now() - s); }
steady.sort((a, b) => a - b);
console.log(JSON.stringify({
  importMs: t1 - t0, importCpuMs: (cpu.user + cpu.system) / 1000, firstMs: t2 - t1, steadyMs: steady[2],
  known: input.fences.filter(known).length,
  chains: input.snippets.map(([lang, text]) => chains(lang, text)),
}));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", "--no-lock", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) return null;
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The style of each non-blank character of each snippet, by the candidate's table. */
function stylesOf(c: Candidate, chains: string[][][][]): string[] {
  const out: string[] = [];
  chains.forEach((perUnit, k) => {
    const text = SNIPPETS[k][1];
    perUnit.forEach((chain, i) => {
      if (!/\S/.test(text[i] ?? "")) return;
      const named = chain.find((classes) => classes.some((x) => Object.hasOwn(c.styles, x)));
      const cls = named?.find((x) => Object.hasOwn(c.styles, x));
      out.push(cls === undefined ? "" : c.styles[cls].join("+"));
    });
  });
  return out;
}

const pct = (n: number, of: number) => `${Math.round((100 * n) / Math.max(of, 1))}%`;

export async function highlightBench(
  dataDir: string,
  rounds: number,
  log: (s: string) => void,
): Promise<Row[]> {
  const inputPath = join(dataDir, "highlight-input.json");
  await Deno.mkdir(dataDir, { recursive: true });
  await Deno.writeTextFile(
    inputPath,
    JSON.stringify({ large: largeBlock(), fences: FENCE_NAMES, snippets: SNIPPETS }),
  );
  const samples = CANDIDATES.map(() => [] as Sample[]);
  // A warm-up (downloads, module cache), then rounds alternated with a rotating order.
  for (const c of CANDIDATES) await sample(c, inputPath);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < CANDIDATES.length; k++) {
      const i = (k + r) % CANDIDATES.length;
      const s = await sample(CANDIDATES[i], inputPath);
      if (s) samples[i].push(s);
    }
  }
  const chosen = samples[0][0] ? stylesOf(CANDIDATES[0], samples[0][0].chains) : [];
  const rows: Row[] = [];
  CANDIDATES.forEach((c, i) => {
    const s = samples[i];
    if (!s.length) {
      log(`highlight: ${c.name} did not run (not downloadable here?)`);
      return;
    }
    const m = (f: (x: Sample) => number) => median(s.map(f));
    const styles = stylesOf(c, s[0].chains);
    const coloured = styles.filter((x) => x !== "").length;
    const same = styles.filter((x, k) => x === chosen[k]).length;
    const line = `import ${m((x) => x.importMs).toFixed(0)} ms (CPU ${
      m((x) => x.importCpuMs).toFixed(0)
    } ms) · 500 lines ${m((x) => x.firstMs).toFixed(0)} ms first, ${
      m((x) => x.steadyMs).toFixed(0)
    } ms after · ${s[0].known}/${FENCE_NAMES.length} fence names`;
    const output = `${pct(coloured, styles.length)} coloured, ${
      pct(same, styles.length)
    } as the chosen`;
    log(`highlight: ${c.name}: ${line}; ${output}`);
    rows.push({
      bench: "highlight",
      case: c.name,
      ours: `import ${m((x) => x.importMs).toFixed(0)} ms, CPU ${
        m((x) => x.importCpuMs).toFixed(0)
      } ms`,
      others: `${line.replace(/^import [0-9]+ ms \(CPU [0-9]+ ms\) · /, "")} · ${output}`,
      ratio: "",
      target: "",
      met: null,
    });
  });
  return rows;
}
