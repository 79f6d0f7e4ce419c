/**
 * One test run again in a child `deno test` of its own file, filtered to that test alone.
 *
 * {@link inOwnProcess}: `deno test --parallel` runs test files as threads of one process, so
 * what a process holds whole — its environment above all — is shared by every file running at
 * that moment: a test that sets a variable the code under test reads (PATH, HOME, an API key)
 * would hand it to every other file's programs and lookups meanwhile. Such a test runs in a
 * child of its own, where nothing else runs. (test/support/unprivileged.ts runs its children
 * through the same {@link runChildTest}, as root without capabilities.)
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

/** Set in the child to the test's name, so that it runs the test itself, not another child. */
const OWN_PROCESS = "BRAVEBOT_TEST_OWN_PROCESS";

/** The test suite's own permission flags (deno.json's test tasks). */
const TEST_FLAGS = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-run",
  "--allow-env",
];

/**
 * Runs the test `name` of the test file `module` (its `import.meta.url`) in a child `deno test`
 * started through `wrapper` (a program and its arguments, or nothing) with `env` added to this
 * process's environment. Fails with the child's output unless it passed at least one test and
 * failed none.
 */
export async function runChildTest(
  module: string,
  name: string,
  o: { env: Record<string, string>; wrapper?: string[] },
): Promise<void> {
  const argv = [
    ...(o.wrapper ?? []),
    Deno.execPath(),
    "test",
    ...TEST_FLAGS,
    "--no-check",
    "--filter",
    `/^${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$/`,
    fileURLToPath(module),
  ];
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    env: { ...o.env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, said);
  assert.match(said, /ok \| [1-9]\d* passed/, said);
  assert.match(said, /\| 0 failed/, said);
}

/**
 * Registers the test `t` so that its body runs in a child process of its own (see the module's
 * comment): for a test that changes the process's environment.
 */
export function inOwnProcess(
  module: string,
  t: { name: string; ignore?: boolean; fn: () => void | Promise<void> },
): void {
  if (Deno.env.get(OWN_PROCESS) === t.name) {
    Deno.test(t);
    return;
  }
  Deno.test({
    name: t.name,
    ignore: t.ignore,
    fn: () => runChildTest(module, t.name, { env: { [OWN_PROCESS]: t.name } }),
  });
}
