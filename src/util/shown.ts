/**
 * The first line of the frame a reference shown to the person is drawn in (docs/contract.md §15.1),
 * as every screen shows it: the session's event view and one-shot's printer. Plain words over plain
 * fields, so that a screen need not import the policy layer for them.
 */
import { plural } from "./plural.ts";

/**
 * A marker `{{ref:N}}` in the planner's text (group 1: `ref:N`): the policy layer reads what it
 * stands for, and the screen shows it where the marker stands.
 */
export const SHOWN_MARKER = /\{\{\s*(ref:\d+)\s*\}\}/g;

/**
 * The frame's first line, as every screen shows it (`label` as written, e.g. `(U,priv)`): ready
 * for the screen, since its source is (`sourceOf`, src/policy/refs.ts). The words follow the
 * label: `T` is trusted (a vouched command's output, which the planner may be shown too), `U`
 * untrusted. An asserted output says so and by whom: the reference is still untrusted, and the
 * planner was shown its bytes.
 */
export function shownHeading(
  s: { ref: string; source: string; lines: number; label: string; asserted?: string | null },
): string {
  const trusted = s.label.startsWith("(T");
  return `${s.ref}: ${s.source}, ${plural(s.lines, "line")}, ${
    trusted ? "trusted" : "untrusted"
  } ${s.label} — ` +
    (s.asserted
      ? `${s.asserted}: the planner was shown it`
      : trusted
      ? "the planner may be shown it too"
      : "shown to you, not to the planner");
}
