/**
 * For test/no_color_test.ts: starts the command line as the binary does (`main`), then imports a
 * colour library that reads the environment at import (chalk, the version Ink uses) and prints
 * what it makes of some code, with its escape sequences visible as JSON.
 */
import process from "node:process";
import { main } from "../../src/cli/main.ts";

await main(["--version"]);
// Ink's own chalk, pinned as the lock has it under ink: the probe is a test, not a dependency.
const { default: chalk } = await import("npm:chalk@6.0.1");
console.log(`FORCE_COLOR=${process.env.FORCE_COLOR ?? "unset"}`);
console.log(JSON.stringify(chalk.blue("const x = 1;")));
