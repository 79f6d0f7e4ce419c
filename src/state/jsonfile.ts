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
  let why: string;
  try {
    const text = await Deno.readTextFile(path);
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return { status: "ok", value: parsed.data };
      const issue = parsed.error.issues[0];
      why = `${issue.path.join(".") || "(top level)"}: ${issue.message}`;
    } catch (e) {
      why = `not valid JSON (${(e as Error).message})`;
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { status: "missing" };
    // A folder or an unreadable file in its place is no more trustworthy than bad JSON.
    why = `unreadable (${(e as Error).message})`;
  }
  return { status: "corrupt", problem: await setAside(path, `was corrupt (${why})`) };
}

/**
 * Moves a state file that cannot be used to `path.corrupt-<time>`, so the person can inspect
 * it and nothing later writes over it; returns the sentence that reports it.
 */
export async function setAside(path: string, what: string): Promise<string> {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  try {
    await Deno.rename(path, aside);
  } catch (e) {
    return `${path} ${what}; it could not be moved aside (${
      (e as Error).message
    }) and was not used`;
  }
  return `${path} ${what}; it was moved to ${aside}`;
}

/** Writes JSON atomically: a temporary file in the same folder, then a rename over the old one. */
export async function saveJsonFile(path: string, value: unknown): Promise<void> {
  await ensurePrivateDir(dirname(path));
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/**
 * Appends one JSON line. If the file ends in a torn line (a kill mid-write), a newline goes
 * first, so the new record is never glued onto the broken one. The few system calls are made
 * synchronously: each async hop cost 30-100 µs, and every tool call appends to the audit log
 * and the transcript (issue 7: an append went from ~120 µs to ~20 µs). No other append to the
 * same file can come between the check of the last byte and the write.
 */
export function appendJsonLine(path: string, value: unknown): Promise<void> {
  try {
    const line = JSON.stringify(value) + "\n";
    using file = Deno.openSync(path, { append: true, create: true, read: true, mode: 0o600 });
    const size = file.statSync().size;
    let prefix = "";
    if (size > 0) {
      const last = new Uint8Array(1);
      file.seekSync(size - 1, Deno.SeekMode.Start);
      file.readSync(last);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    const bytes = new TextEncoder().encode(prefix + line);
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Reads a JSON-lines file written by {@link appendJsonLine}. A torn last line (a kill mid-write)
 * is dropped and reported; a bad line elsewhere is reported and skipped; a file that cannot be
 * read at all (a folder in its place) is set aside and reported.
 */
export async function readJsonLines(
  path: string,
): Promise<{ rows: unknown[]; problems: string[] }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { rows: [], problems: [] };
    return {
      rows: [],
      problems: [await setAside(path, `was unreadable (${(e as Error).message})`)],
    };
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
