import "./src/cli/one_shot.ts";
