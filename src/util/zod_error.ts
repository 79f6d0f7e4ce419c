/**
 * How a validation problem reads for the person who will fix the file: the first issue, as
 * `field: message`, or `unknown field 'x'`. One wording for the config, the workspace config
 * and the approval policy file.
 *
 * @example
 * ```ts
 * describeZodError(z.strictObject({ a: z.number() }).safeParse({ a: 1, b: 2 }).error!);
 * // "unknown field 'b'"
 * describeZodError(schema.safeParse({ endpont: "…" }).error!, schema);
 * // "unknown field 'endpont' (did you mean 'endpoint'?)"
 * ```
 */
import type { z } from "zod";
import { escapeForScreen } from "./escape.ts";
import { nearestName } from "./edit_distance.ts";

/** Unknown keys named at most, each cut at this many characters: a file may hold thousands. */
const MAX_KEYS = 5;
const MAX_KEY_CHARS = 80;

/**
 * A name the file itself holds (a repository's workspace config writes any key it likes):
 * escaped and cut, so it is shown, never acted on, and cannot fill the screen.
 */
function quoteName(name: string): string {
  const chars = [...name];
  const cut = chars.length > MAX_KEY_CHARS ? `${chars.slice(0, MAX_KEY_CHARS).join("")}…` : name;
  return `'${escapeForScreen(cut)}'`;
}

/** The inside of a zod schema, as far as walking to a field needs it (zod 4's `_zod.def`). */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  element?: { _zod: { def: SchemaDef } };
}

/**
 * The field names an object of `schema` at `path` may have (through optional, nullable and
 * default wrappers and arrays), or none when the path leads to no object.
 */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let def = (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
  const unwrap = () => {
    while (def.innerType) def = def.innerType._zod.def;
  };
  unwrap();
  for (const step of path) {
    if (def.type === "array" && def.element && typeof step === "number") {
      def = def.element._zod.def;
    } else if (def.type === "object" && def.shape && typeof step === "string" && def.shape[step]) {
      def = def.shape[step]._zod.def;
    } else return [];
    unwrap();
  }
  return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
}

/**
 * Names the first problem as `field: message`, the way the person will fix it; an unknown
 * field one slip from a known one, with the schema given, gets "did you mean" (the known name is
 * the schema's own; the unknown one is quoted escaped, as every name the file holds is).
 */
export function describeZodError(error: z.ZodError, schema?: z.ZodType): string {
  const issue = error.issues[0];
  const where = issue.path.length
    ? issue.path.map((p) => escapeForScreen(String(p))).join(".")
    : "(top level)";
  if (issue.code === "unrecognized_keys") {
    const known = schema ? keysAt(schema, issue.path) : [];
    const named = issue.keys.slice(0, MAX_KEYS).map((key) => {
      const near = nearestName(key, known);
      return near === null ? quoteName(key) : `${quoteName(key)} (did you mean '${near}'?)`;
    }).join(", ");
    const more = issue.keys.length > MAX_KEYS ? ` and ${issue.keys.length - MAX_KEYS} more` : "";
    return `${where === "(top level)" ? "" : where + ": "}unknown field ${named}${more}`;
  }
  return `${where}: ${issue.message}`;
}
