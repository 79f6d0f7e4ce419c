/**
 * The labels of what the driver places in the planner context that no rule of a tool labels
 * (docs/contract.md §3.2, §4.1): Brave Bot's own words (an error result, and every tool result made only of
 * them), the person's words, the system prompt, a summary, the notice that stands in for a result
 * kept back, and what a restored transcript line placed. One function per rule, so the driver and
 * the tools never choose a label themselves: the driver asks through its port (`ports/driver.ts`),
 * the policy layer's rules give their results these labels, and the session asks
 * {@link systemPromptLabel} for the prompt it builds, {@link storedLineLabel} for each line of a
 * transcript it resumes, and {@link resumeContext} to place the context that transcript left.
 */
import type { StoredLine } from "../state/transcript.ts";
import {
  joinLabels,
  type Label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
} from "../util/label.ts";

/**
 * Brave Bot's own words about a call — what was done, a reference and its size, counts, an error
 * saying what was wrong and what would be accepted, a call stopped or interrupted — quote no
 * file's bytes, no untrusted name and no person (errors never do): `(T,pub)`. A tool result made
 * only of them carries it, and so does every error result the driver or a tool words itself.
 */
export function ownWordsLabel(): Label {
  return TRUSTED_PUBLIC;
}

/**
 * The person's own words are trusted and private, `(T,priv)`: they steer the agent, and nothing
 * says they may leave the machine. What they hand over with them (a shell line's output, §9)
 * joins in with its own label.
 */
export function personWordsLabel(alongside: readonly Label[] = []): Label {
  return joinLabels(TRUSTED_PRIVATE, ...alongside);
}

/**
 * The system prompt is Brave Bot's own text, `(T,pub)`; a trusted AGENTS.md it quotes (`memory`)
 * joins in with its file's label (a private file makes the prompt private), and so does each
 * listed skill's name and description (`skills`: the labels the skills port gave them).
 */
export function systemPromptLabel(memory: Label | null, skills: readonly Label[] = []): Label {
  return joinLabels(TRUSTED_PUBLIC, ...(memory ? [memory] : []), ...skills);
}

/**
 * A summary of the conversation is the planner's words about what it had been shown, and no
 * more: it carries the planner context's label at the moment it was made.
 */
export function summaryLabel(context: Label): Label {
  return context;
}

/**
 * The notice that stands in for a result the person kept back is Brave Bot's own words and names
 * only the tool: `(T,pub)`, so nothing of the kept-back bytes is taken to be in the context.
 */
export function withheldResultLabel(): Label {
  return ownWordsLabel();
}

/**
 * A stored result (one restored from a transcript) is taken at the label recorded with it; one
 * whose label was not recorded is taken as the worst, `(U,priv)`, never as public.
 */
export function storedResultLabel(recorded: Label | null): Label {
  return recorded ?? UNTRUSTED_PRIVATE;
}

/**
 * What a line restored from a transcript places in the planner context: the label recorded with
 * it; one whose label cannot be read, and a summary recorded without one, as the worst,
 * `(U,priv)`, never as trusted; the result the loader wrote for a call that never finished is
 * Brave Bot's own words; any other line without a label (the planner's own replies) places
 * nothing (null).
 */
export function storedLineLabel(line: StoredLine): Label | null {
  if (line.kind === "interrupted") return ownWordsLabel();
  if (line.label === "unreadable") return UNTRUSTED_PRIVATE;
  if (line.label === null) return line.kind === "summary" ? UNTRUSTED_PRIVATE : null;
  return line.label;
}

/**
 * The planner context a resumed session starts from: the join of what every line since the last
 * `/clear` placed ({@link storedLineLabel}) — those a summary replaced too, since a summary says
 * what they held — or a new context's `(T,pub)` when none placed anything.
 */
export function resumedContextLabel(lines: readonly StoredLine[]): Label {
  const placed = lines.map(storedLineLabel).filter((l): l is Label => l !== null);
  return joinLabels(TRUSTED_PUBLIC, ...placed);
}

/** What resuming needs of the planner context: a way to place a label in it, nothing more. */
export interface ContextPlacer {
  placeInContext(l: Label): void;
}

/**
 * A transcript resumed: the policy layer decides the planner context it starts from
 * ({@link resumedContextLabel}) and places it; the session hands over the transcript's lines and
 * chooses nothing. Answers the label placed.
 */
export function resumeContext(context: ContextPlacer, lines: readonly StoredLine[]): Label {
  const resumed = resumedContextLabel(lines);
  context.placeInContext(resumed);
  return resumed;
}
