/**
 * The main thread's permission flags, read from the one file the tasks and the compile script
 * read, so tests run Brave Bot exactly as the binary does.
 */
const FLAGS_FILE = new URL("../../permissions/main.flags", import.meta.url);

export function mainFlags(): string[] {
  return Deno.readTextFileSync(FLAGS_FILE).split("\n").map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("#")
  );
}

export const MAIN_TS = new URL("../../main.ts", import.meta.url).pathname;
