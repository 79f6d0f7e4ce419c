/**
 * The rule → function index in `docs/architecture.md` is a test (issue 22): every symbol a row
 * names is declared in the file it names, and every file a row names lies in a layer the row's
 * `layer` column lists — `policy` (src/policy/) unless the row is marked as another layer's own
 * rule. A renamed function, a rule moved to another file or out of the policy layer, fails here
 * with the row and the symbol.
 *
 * The function column's grammar: groups separated by `;`; each group is one or more symbols in
 * backticks followed by the one file (relative to `src/`) they are declared in, also in backticks.
 * A symbol is a name (`resolvePath`) or a member (`Policy.fileLabel`, `ModelError.hint`). Words
 * outside backticks are free, and a parenthesis holds words only. What a file declares is read
 * with `deno doc --private` (exported or not, with the members of its classes and interfaces).
 */
import assert from "node:assert/strict";
import { SRC } from "./support/imports.ts";

const DOC = new URL("../docs/architecture.md", import.meta.url).pathname;
const HEADING = "## Each rule, and the one function that decides it";

export interface IndexRow {
  rule: string;
  groups: { symbols: string[]; file: string }[];
  layers: string[];
  /** What does not follow the grammar, in words. */
  problems: string[];
}

/** The index's rows, parsed; `markdown` is the whole of architecture.md. */
export function indexRows(markdown: string): IndexRow[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf(HEADING);
  assert.ok(start >= 0, `architecture.md has no heading "${HEADING}"`);
  let i = start + 1;
  while (i < lines.length && !lines[i].startsWith("|")) i++;
  const table: string[] = [];
  while (i < lines.length && lines[i].startsWith("|")) table.push(lines[i++]);
  const header = cells(table[0] ?? "");
  assert.deepEqual(
    header,
    ["rule (§: docs/contract.md)", "function", "layer"],
    "the index's columns",
  );
  return table.slice(2).map((line) => {
    const [rule, functions, layer] = cells(line);
    const problems: string[] = [];
    const words = functions.replace(/\([^()]*\)/g, (p) => {
      if (p.includes("`")) problems.push(`a parenthesis names something: ${p}`);
      return "";
    });
    const groups = words.split(";").map((group) => {
      const ticked = [...group.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
      const files = ticked.filter((t) => t.endsWith(".ts"));
      const symbols = ticked.filter((t) => !t.endsWith(".ts"));
      if (files.length !== 1 || ticked[ticked.length - 1] !== files[0]) {
        problems.push(`"${group.trim()}" does not end with the one file its symbols are in`);
      }
      if (symbols.length === 0) problems.push(`"${group.trim()}" names no symbol`);
      for (const s of symbols) {
        if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)?$/.test(s)) {
          problems.push(`\`${s}\` is not a name or a member`);
        }
      }
      return { symbols, file: files[0] ?? "" };
    });
    const layers = layer.split(",").map((l) => l.trim()).filter((l) => l !== "");
    return { rule, groups, layers, problems };
  });
}

function cells(line: string): string[] {
  return line.split("|").slice(1, -1).map((c) => c.trim());
}

/** What `deno doc` tells of one declaration: its name, and its members' names. */
interface Declared {
  name: string;
  members: Set<string>;
}

interface DocMember {
  name?: string;
}

interface DocDeclaration {
  kind: string;
  def?: {
    methods?: DocMember[];
    properties?: DocMember[];
    callSignatures?: unknown[];
  };
}

/** The declarations of each file (relative to `src/`), read by `deno doc --private --json`. */
async function declarations(files: string[]): Promise<Map<string, Map<string, Declared>>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "--private", ...files.map((f) => SRC + f)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `deno doc failed: ${new TextDecoder().decode(out.stderr)}`);
  const json = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: { name: string; declarations: DocDeclaration[] }[] }>;
  };
  const found = new Map<string, Map<string, Declared>>();
  for (const [url, node] of Object.entries(json.nodes)) {
    const rel = decodeURIComponent(new URL(url).pathname).slice(SRC.length);
    const names = new Map<string, Declared>();
    for (const symbol of node.symbols) {
      const members = new Set<string>();
      for (const d of symbol.declarations) {
        for (const m of [...(d.def?.methods ?? []), ...(d.def?.properties ?? [])]) {
          if (m.name) members.add(m.name);
        }
      }
      names.set(symbol.name, { name: symbol.name, members });
    }
    found.set(rel, names);
  }
  return found;
}

/** Each way `rows` are not true of `src/`, one line each naming the row. */
async function indexProblems(rows: IndexRow[]): Promise<string[]> {
  const problems: string[] = [];
  const files = new Set<string>();
  for (const row of rows) {
    for (const p of row.problems) problems.push(`row "${row.rule}": ${p}`);
    for (const g of row.groups) {
      if (g.file === "") continue;
      try {
        if (Deno.statSync(SRC + g.file).isFile) files.add(g.file);
      } catch {
        problems.push(`row "${row.rule}": there is no file src/${g.file}`);
      }
    }
  }
  const declared = await declarations([...files].sort());
  for (const row of rows) {
    const named = new Set<string>();
    for (const { symbols, file } of row.groups) {
      if (file !== "") named.add(file.split("/")[0]);
      const names = declared.get(file);
      if (!names) continue;
      for (const symbol of symbols) {
        const [name, member] = symbol.split(".");
        const d = names.get(name);
        if (!d) problems.push(`row "${row.rule}": \`${name}\` is not declared in src/${file}`);
        else if (member !== undefined && !d.members.has(member)) {
          problems.push(
            `row "${row.rule}": \`${name}\` in src/${file} has no member \`${member}\``,
          );
        }
      }
    }
    const listed = new Set(row.layers);
    for (const layer of named) {
      if (!listed.has(layer)) {
        problems.push(`row "${row.rule}": names a file in src/${layer}/, a layer it does not list`);
      }
    }
    for (const layer of listed) {
      if (!named.has(layer)) {
        problems.push(`row "${row.rule}": lists the layer ${layer} but names no file in it`);
      }
    }
  }
  return problems;
}

Deno.test("architecture index: the grammar of a row", () => {
  const table = (row: string) =>
    `${HEADING}\n\n| rule (§: docs/contract.md) | function | layer |\n| --- | --- | --- |\n${row}\n`;
  const [good] = indexRows(
    table(
      "| r | the walk: `walk`, `Walk.next`, `policy/walk.ts` (words); `joinLabels`, " +
        "`util/label.ts` | policy, util |",
    ),
  );
  assert.deepEqual(good, {
    rule: "r",
    groups: [
      { symbols: ["walk", "Walk.next"], file: "policy/walk.ts" },
      { symbols: ["joinLabels"], file: "util/label.ts" },
    ],
    layers: ["policy", "util"],
    problems: [],
  });
  const [bad] = indexRows(table("| r | `a`; `b`, `policy/b.ts` (run by `c`); `d / e`, `x.ts` | |"));
  assert.deepEqual(bad.problems, [
    "a parenthesis names something: (run by `c`)",
    '"`a`" does not end with the one file its symbols are in',
    "`d / e` is not a name or a member",
  ]);
});

Deno.test("architecture index: a wrong row is reported with the row and the symbol", async () => {
  const rows = indexRows(
    `${HEADING}\n\n| rule (§: docs/contract.md) | function | layer |\n| --- | --- | --- |\n` +
      "| one | `resolvePath`, `oneTarget`, `policy/paths.ts` | policy |\n" +
      "| two | `Policy.fileLabel`, `Policy.noSuchMember`, `policy/core.ts` | policy |\n" +
      "| three | `joinLabels`, `util/label.ts` | policy |\n" +
      "| four | `x`, `policy/no_such_file.ts` | policy |\n",
  );
  assert.deepEqual(await indexProblems(rows), [
    'row "four": there is no file src/policy/no_such_file.ts',
    'row "one": `oneTarget` is not declared in src/policy/paths.ts',
    'row "two": `Policy` in src/policy/core.ts has no member `noSuchMember`',
    'row "three": names a file in src/util/, a layer it does not list',
    'row "three": lists the layer policy but names no file in it',
  ]);
});

Deno.test("architecture index: every row is true of src/", async () => {
  const rows = indexRows(await Deno.readTextFile(DOC));
  assert.ok(rows.length > 50, `found ${rows.length} rows`);
  const problems = await indexProblems(rows);
  assert.deepEqual(problems, [], `the rule → function index is wrong:\n${problems.join("\n")}`);
});
