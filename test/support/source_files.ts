import { join } from "node:path";

/** Every TypeScript file under `dir` that is not a test, for the tests that read all of `src/`. */
export async function sourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) await sourceFiles(path, out);
    else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) out.push(path);
  }
  return out;
}
