/**
 * `bravebot --help` (issue 25): wrapped to the terminal it is shown on (a real pseudo-terminal at
 * two widths; a pipe gets 80 columns), and ending with examples, the config file's path and the
 * exit statuses — those from `EXIT_MEANINGS`, the one list that docs/cli.md#exit-status tables.
 */
import assert from "node:assert/strict";
import { drivePty } from "./support/pty.ts";
import { runMain } from "./support/run_main.ts";
import { EXIT, EXIT_MEANINGS } from "../src/cli/exit_codes.ts";

/** The help's own lines: the pseudo-terminal's driver may add lines of its own after them. */
function helpLines(screen: string): string[] {
  const lines = screen.replace(/\r/g, "").split("\n");
  const start = lines.findIndex((l) => l.startsWith("Usage: bravebot"));
  const end = lines.findIndex((l, i) => i > start && /^130 {2}|^ {2}130 {2}/.test(l));
  assert.ok(start >= 0 && end > start, screen);
  return lines.slice(start, end + 1);
}

/**
 * The program's whole environment. Not HOME: Deno keeps its module cache under HOME, and a HOME of
 * its own made the program download every package on a fresh machine, into the screen read here.
 */
const ENV = { TERM: "xterm-256color", NO_COLOR: "1", XDG_CONFIG_HOME: "/tmp/cfg-home" };

for (const columns of [120, 44]) {
  Deno.test(`help: at ${columns} columns --help is wrapped to the terminal's width`, async () => {
    const run = await drivePty([{ expect: "Exit status:" }], ["--help"], ENV, { columns });
    assert.ok(run.ok, run.screen);
    const lines = helpLines(run.screen);
    const widest = Math.max(...lines.map((l) => l.length));
    assert.ok(
      widest <= columns,
      `a line of ${widest} columns: ${lines.find((l) => l.length === widest)}`,
    );
    // Wide enough: a description that 80 columns would wrap is on one line.
    const prompt = lines.find((l) => l.trimStart().startsWith("prompt "));
    if (columns === 120) {
      assert.match(prompt ?? "", /the first message \(interactive\) or the task \(with -p\)$/);
      assert.ok(widest > 80, `nothing wider than 80:\n${lines.join("\n")}`);
    } else {
      assert.doesNotMatch(prompt ?? "", /\(with -p\)$/);
    }
  });
}

Deno.test("help: a pipe gets 80 columns, examples, the config path and every exit status", async () => {
  const r = await runMain(["--help"], { env: { XDG_CONFIG_HOME: "/tmp/cfg-home" } });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.ok(Math.max(...lines.map((l) => l.length)) <= 80, r.stdout);
  const section = (title: string) => {
    const at = lines.indexOf(title);
    assert.ok(at >= 0, `${title} missing:\n${r.stdout}`);
    const end = lines.findIndex((l, i) => i > at && l === "");
    return lines.slice(at + 1, end < 0 ? undefined : end);
  };
  const examples = section("Examples:");
  assert.ok(examples.some((l) => l.startsWith("  $ bravebot -p ")), examples.join("\n"));
  assert.ok(examples.some((l) => l.startsWith("  $ bravebot doctor")), examples.join("\n"));
  assert.match(section("Config file:").join(" "), /\/tmp\/cfg-home\/bravebot\/config\.json/);
  const codes = section("Exit status:").map((l) => l.match(/^ {2}(\d+) {2,}\S/)?.[1]);
  assert.deepEqual(codes.map(Number), EXIT_MEANINGS.map(([c]) => c));
  // The list in the code covers every code the program uses, and the contract's table agrees.
  assert.deepEqual(new Set(EXIT_MEANINGS.map(([c]) => c)), new Set(Object.values(EXIT)));
  const doc = await Deno.readTextFile(new URL("../docs/cli.md", import.meta.url));
  const table = doc.slice(doc.indexOf("### Exit status"), doc.indexOf("### Output formats"));
  const documented = [...table.matchAll(/^\| (\d+) +\|/gm)].map((m) => Number(m[1]));
  assert.deepEqual(documented, EXIT_MEANINGS.map(([c]) => c));
});

Deno.test("help: a subcommand's help has no examples or exit statuses of the program's", async () => {
  const r = await runMain(["doctor", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /Examples:|Exit status:/);
});
