/**
 * For the person's eyes only (docs/contract.md §15): a reference's content shown to the person,
 * never to the planner. The planner writes `{{ref:N}}` in its reply, or the person types
 * `/show ref:N`; the policy layer reads what the reference stands for — a processor's answer, a
 * command's output, search lines, a quarantined file's content, a listing entry's real path — and
 * hands it to the screen with where it came from. Nothing of it is placed in the planner context, and the
 * context label does not change.
 */
import type { FileLabels, Recording, References, WorkspaceFiles } from "./capabilities.ts";
import { describeKind } from "./core.ts";
import { readFileRef } from "./reads.ts";
import { type Assertion, type RefRecord, sourceOf } from "./refs.ts";
import type { Label } from "../util/label.ts";
import { decodeOutput } from "./outputs.ts";
import { err, ok, type Result } from "../util/result.ts";
import { recordDone } from "./verdict.ts";

import { SHOWN_MARKER } from "../util/shown.ts";
export { shownHeading } from "../util/shown.ts";

/** How much of a file a `{{ref:N}}` or `/show` reads: the screen shows at most its lines. */
const MAX_SHOWN_BYTES = 1024 * 1024;

/** A marker `{{ref:N}}` in the planner's text. */
const MARKER = SHOWN_MARKER;

export interface Shown {
  ref: string;
  kind: RefRecord["kind"];
  label: Label;
  /** Where it came from, in words, escaped for a screen: "processor answer about vendor/x/README.md". */
  source: string;
  /** The content (raw: the screen escapes it), at most `maxLines` lines. */
  text: string;
  lines: number;
  /** Lines left out past `maxLines`: `/show ref:N` shows them. */
  omitted: number;
  /** For a run's output asserted for the planner (docs/contract.md §16.5): by whom, in words. */
  asserted: string | null;
}

/** The references a reply's text asks to show, in order, each once. */
export function shownMarkers(text: string): string[] {
  return [...new Set([...text.matchAll(MARKER)].map((m) => m[1]))];
}

/**
 * What the person is shown for `refText`, at most `maxLines` lines; recorded in the audit log.
 * An unknown reference is an error the screen says in place of the content.
 */
export async function showToPerson(
  policy: FileLabels & Recording & WorkspaceFiles & References,
  refText: string,
  maxLines: number,
): Promise<Result<Shown>> {
  const found = policy.refs.lookup(refText);
  if (!found.ok) return err(`${refText} names no reference of this session`);
  const ref = found.value;
  let text: string;
  let label = ref.label;
  if (ref.kind === "file_name") {
    text = ref.path ?? "(no path recorded)";
  } else if (ref.kind === "file") {
    const read = await readFileRef(policy, ref, MAX_SHOWN_BYTES);
    if (!read.ok) return err(`${refText}: ${read.error}`);
    text = decodeOutput(read.value.bytes).text;
    label = read.value.label;
  } else if (ref.hasBytes) {
    try {
      text = decodeOutput(await policy.refs.bytes(ref)).text;
    } catch {
      return err(`the content of ${refText} is no longer stored`);
    }
  } else return err(`${refText} is ${describeKind(ref)} and holds nothing to show`);
  const asserted = policy.refs.assertion(ref);
  const all = text.replace(/\n$/, "").split("\n");
  const shown = all.slice(0, maxLines);
  await recordDone(policy, {
    tool: "show",
    routing: { ref: refText, kind: ref.kind },
    labels: { shown: label },
    decision: "shown to the person, not to the planner",
    by: "rule",
  });
  return ok({
    ref: refText,
    kind: ref.kind,
    label,
    source: sourceOf(ref),
    text: shown.join("\n"),
    lines: all.length,
    omitted: all.length - shown.length,
    asserted: asserted ? assertedWords(asserted) : null,
  });
}

/** Who asserted a run's output, in words: the person, or the policy file and how. */
export function assertedWords(a: Pick<Assertion, "by" | "shape">): string {
  if (a.by === "person") return "asserted by the person";
  return a.shape
    ? `asserted by the approval policy file (readOutput shape ${a.shape})`
    : "asserted by the approval policy file (readOutput: true)";
}
