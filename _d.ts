import "./src/session/runtime.ts";
