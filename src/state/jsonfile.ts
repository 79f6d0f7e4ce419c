/**
 * Reading and writing the small JSON state files. A file that cannot be parsed or validated
 * is renamed aside (never silently replaced, never trusted) and reported with its path.
 */
import { dirname } from "node:path";
import type { z } from "zod";
import { ensurePrivateDir } from "./dirs.ts";

export type Loaded<T> =
  | { status: "missing" }
  | { status: "ok"; value: T }
  | { status: "corrupt"; problem: string };

/** Loads and validates `path`; a corrupt file is moved to `path.corrupt-<time>` and reported. */
export async function loadJsonFile<T>(path: string, schema: z.ZodType<T>): Promise<Loaded<T>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { status: "missing" };
    throw e;
  }
  let why: string;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return { status: "ok", value: parsed.data };
    const issue = parsed.error.issues[0];
    why = `${issue.path.join(".") || "(top level)"}: ${issue.message}`;
  } catch (e) {
    why = `not valid JSON (${(e as Error).message})`;
  }
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  await Deno.rename(path, aside);
  return { status: "corrupt", problem: `${path} was corrupt (${why}); it was moved to ${aside}` };
}

/** Writes JSON atomically: a temporary file in the same folder, then a rename over the old one. */
export async function saveJsonFile(path: string, value: unknown): Promise<void> {
  await ensurePrivateDir(dirname(path));
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/** Appends one JSON line; an append of one short line is all-or-nothing in practice. */
export async function appendJsonLine(path: string, value: unknown): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(value) + "\n", { append: true, mode: 0o600 });
}

/**
 * Reads a JSON-lines file written by {@link appendJsonLine}. A torn last line (a kill mid-write)
 * is dropped and reported; a bad line elsewhere is reported and skipped.
 */
export async function readJsonLines(
  path: string,
): Promise<{ rows: unknown[]; problems: string[] }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { rows: [], problems: [] };
    throw e;
  }
  const rows: unknown[] = [];
  const problems: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      rows.push(JSON.parse(line));
    } catch {
      const torn = i === lines.length - 1;
      problems.push(
        `${path}: line ${i + 1} ${torn ? "was cut off (dropped)" : "is not JSON (skipped)"}`,
      );
    }
  });
  return { rows, problems };
}
