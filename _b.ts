import "commander";
import "./src/cli/main.ts";
