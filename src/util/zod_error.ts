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

/** Names the first problem as `field: message`, the way the person will fix it. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue.path.length ? issue.path.join(".") : "(top level)";
  if (issue.code === "unrecognized_keys") {
    return `${where === "(top level)" ? "" : where + ": "}unknown field ${
      issue.keys.map((k) => `'${k}'`).join(", ")
    }`;
  }
  return `${where}: ${issue.message}`;
}
