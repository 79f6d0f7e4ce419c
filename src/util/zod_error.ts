/**
 * How a validation problem reads for the person who will fix the file: the first issue, as
 * `field: message`, or `unknown field 'x'`. One wording for the config, the workspace config
 * and the approval policy file.
 *
 * @example
 * ```ts
 * describeZodError(z.strictObject({ a: z.number() }).safeParse({ a: 1, b: 2 }).error!);
 * // "unknown field 'b'"
 * ```
 */
import type { z } from "zod";
import { escapeForScreen } from "./escape.ts";

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

/** Names the first problem as `field: message`, the way the person will fix it. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue.path.length
    ? issue.path.map((p) => escapeForScreen(String(p))).join(".")
    : "(top level)";
  if (issue.code === "unrecognized_keys") {
    const named = issue.keys.slice(0, MAX_KEYS).map(quoteName).join(", ");
    const more = issue.keys.length > MAX_KEYS ? ` and ${issue.keys.length - MAX_KEYS} more` : "";
    return `${where === "(top level)" ? "" : where + ": "}unknown field ${named}${more}`;
  }
  return `${where}: ${issue.message}`;
}
