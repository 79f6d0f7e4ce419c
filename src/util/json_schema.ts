/**
 * The one way a JSON text is read against a schema: the user config, the workspace config, the
 * approval policy file and the state files all parse with {@link parseJsonWith}; the three files
 * a person writes also share the wording of {@link parseJsonFile}.
 */
import type { z } from "zod";
import { escapeForScreen } from "./escape.ts";
import { err, ok, type Result } from "./result.ts";
import { describeZodError } from "./zod_error.ts";

export type JsonParsed<T> =
  | { kind: "ok"; value: T }
  /** Not JSON: the parser's message, which quotes the text around the error (unescaped). */
  | { kind: "not_json"; message: string }
  /** `precheck` said no, before the schema looked. */
  | { kind: "refused"; message: string }
  | { kind: "invalid"; error: z.ZodError };

export interface JsonOptions {
  /**
   * A look at the parsed value before the schema's (a field that has a reason of its own to be
   * refused, told instead of "unknown field"): a message, or null to go on.
   */
  precheck?: (data: unknown) => string | null;
}

/** Parses `text` as JSON and validates it with `schema`, saying which step refused it. */
export function parseJsonWith<T>(
  text: string,
  schema: z.ZodType<T>,
  options: JsonOptions = {},
): JsonParsed<T> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { kind: "not_json", message: (e as Error).message };
  }
  const refused = options.precheck?.(data) ?? null;
  if (refused !== null) return { kind: "refused", message: refused };
  const parsed = schema.safeParse(data);
  return parsed.success
    ? { kind: "ok", value: parsed.data }
    : { kind: "invalid", error: parsed.error };
}

/**
 * {@link parseJsonWith} worded for the person who will fix the file named `source`:
 * `SOURCE is not valid JSON: …` (the parser's message escaped: it quotes the file's bytes),
 * `SOURCE: field: problem` ({@link describeZodError}), followed by ` (hint)` when one is given,
 * or `SOURCE: ` and what `precheck` said.
 */
export function parseJsonFile<T>(
  text: string,
  schema: z.ZodType<T>,
  source: string,
  options: JsonOptions & { hint?: string } = {},
): Result<T> {
  const parsed = parseJsonWith(text, schema, options);
  switch (parsed.kind) {
    case "ok":
      return ok(parsed.value);
    case "not_json":
      return err(`${source} is not valid JSON: ${escapeForScreen(parsed.message)}`);
    case "refused":
      return err(`${source}: ${parsed.message}`);
    case "invalid":
      return err(
        `${source}: ${describeZodError(parsed.error, schema)}${
          options.hint ? ` (${options.hint})` : ""
        }`,
      );
  }
}
