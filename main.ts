/**
 * Brave Bot's entry point: the same file for `deno task start`, the tests and the compiled
 * binary, always run with the flags in permissions/main.flags.
 *
 * Before anything else: the compiled binary starts itself as the kernel wall's child
 * (src/worker/kernel.ts) with a hidden first argument; that child never reaches the CLI.
 */
import { main } from "./src/cli/main.ts";
import { KERNEL_CHILD_ARG } from "./src/worker/kernel.ts";

if (import.meta.main) {
  if (Deno.args[0] === KERNEL_CHILD_ARG && Deno.build.standalone) {
    const { childMain } = await import("./src/worker/kernel_child.ts");
    Deno.exit(await childMain(Deno.args.slice(1), true));
  }
  Deno.exit(await main(Deno.args));
}
