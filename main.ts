/**
 * Brave Bot's entry point: the same file for `deno task start`, the tests and the compiled
 * binary, always run with the flags in permissions/main.flags.
 */
import { main } from "./src/cli/main.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
