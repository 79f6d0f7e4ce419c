/**
 * The labels of what the driver places in the planner context that is no tool's result
 * (docs/contract.md §3.2, §4.1): the person's words, the system prompt, a summary, the notice that
 * stands in for a result kept back, and a stored result whose label was not recorded. One function
 * per rule, so the driver asks (through its port, `ports/driver.ts`) and never chooses a label
 * itself; the session asks {@link systemPromptLabel} for the prompt it builds.
 */
import {
  joinLabels,
  type Label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
} from "../util/label.ts";

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
 * joins in with its file's label (a private file makes the prompt private).
 */
export function systemPromptLabel(memory: Label | null): Label {
  return memory ? joinLabels(TRUSTED_PUBLIC, memory) : TRUSTED_PUBLIC;
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
  return TRUSTED_PUBLIC;
}

/**
 * A stored result (one restored from a transcript) is taken at the label recorded with it; one
 * whose label was not recorded is taken as the worst, `(U,priv)`, never as public.
 */
export function storedResultLabel(recorded: Label | null): Label {
  return recorded ?? UNTRUSTED_PRIVATE;
}
