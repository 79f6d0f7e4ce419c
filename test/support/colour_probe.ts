/**
 * For test/no_color_test.ts: starts the command line as the binary does (`main`), then imports a
 * colour library that reads the environment at import (chalk, under cli-highlight, as Ink's does)
 * and prints what it makes of some code, with its escape sequences visible as JSON.
 */
import process from "node:process";
import { main } from "../../src/cli/main.ts";

await main(["--version"]);
const { highlight } = await import("cli-highlight");
console.log(`FORCE_COLOR=${process.env.FORCE_COLOR ?? "unset"}`);
console.log(JSON.stringify(highlight("const x = 1;", { language: "js" })));
