import "./src/tools/registry.ts";
