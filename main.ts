/**
 * Brave Bot's entry point: the same file for `deno task start`, the tests and the compiled
 * binary, always run with the flags in permissions/main.flags.
 *
 * Before anything else: the compiled binary starts itself as the kernel wall's child
 * (src/worker/kernel.ts) with a hidden first argument; that child never reaches the CLI.
 * `bravebot --version` alone prints the version and loads nothing else: every other module is
 * imported only past this point (test/start_graph_test.ts walks the graph; issue 24).
 */
import { KERNEL_CHILD_ARG } from "./src/worker/child_arg.ts";
import { VERSION } from "./src/version.ts";
import { printOut } from "./src/util/output.ts";

/** The command line's module, loaded past `--version` (scripts/compile.ts includes it). */
export const CLI_MODULE = "./src/cli/main.ts";

if (import.meta.main) {
  if (Deno.args[0] === KERNEL_CHILD_ARG && Deno.build.standalone) {
    const { childMain } = await import("./src/worker/kernel_child.ts");
    Deno.exit(await childMain(Deno.args.slice(1), true));
  }
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    printOut(VERSION); // what commander prints for --version, without loading it
    Deno.exit(0);
  }
  // A computed specifier: Deno loads (and resolves the npm packages of) every import() it can
  // read before running anything, which cost `--version` about 15 ms of CPU. scripts/compile.ts
  // includes the module in the binary by name.
  const cli: string = CLI_MODULE;
  const { main } = await import(cli) as typeof import("./src/cli/main.ts");
  Deno.exit(await main(Deno.args));
}
