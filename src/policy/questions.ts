/**
 * ask_user's decisions (docs/tools.md#ask_user, docs/contract.md §3.2, §4.3): whether a call may
 * ask at all, putting its questions to the person one at a time, remembering each answer for the
 * session, and the audit line of each. A tainted context asks nothing, since a question could have
 * been shaped by content nobody vouched for; the person's answers are their own words, `(T,priv)`.
 */
import type { Asking, PlannerContext, Recording } from "./capabilities.ts";
import type { Answer, Question } from "../person/person.ts";
import { type Label, TRUSTED_PRIVATE } from "../util/label.ts";
import { messageOf } from "../util/result.ts";
import { allowQuietly, seatAt, settle, type Verdict } from "./verdict.ts";
import { ownWordsLabel } from "./driver_labels.ts";

/** Why a call is refused before anything is asked, or null when it may go ahead. */
export function askRefusal(
  count: number,
  limit: number,
  contextTainted: boolean,
): string | null {
  if (contextTainted) {
    return "asking has stopped: this conversation has met content nobody vouched for, so a " +
      "question could have been shaped by it; decide without asking, or stop and say what " +
      "you would need to know";
  }
  if (count > limit) {
    return `${count} questions were sent and at most ${limit} are allowed in one call; none ` +
      `was asked; send at most ${limit}`;
  }
  return null;
}

/** The remembered form of an answer: what the planner is told, and what a repeat is told. */
export function describeAnswer(q: Question, answer: Answer): string {
  switch (answer.kind) {
    case "options":
      return answer.chosen.length === 0
        ? "chose none of the options"
        : `chose ${answer.chosen.map((c) => JSON.stringify(c)).join(", ")}`;
    case "text":
      return `answered in their own words: ${JSON.stringify(answer.text)}`;
    case "skipped":
      return "skipped this question (an answer: use your own judgement and do not ask it again)";
  }
  return `no answer to ${q.header}`;
}

/** What came of an ask_user call, for the tool to render. */
export type AskOutcome =
  | { kind: "refused"; reason: string }
  /**
   * Nobody can be asked (one-shot): every question is declined, none answered for the person;
   * `label` is what saying so carries, Brave Bot's own words.
   */
  | { kind: "nobody"; label: Label }
  | {
    kind: "answered";
    /** In the order asked; `earlier` when the session remembered the answer. */
    answers: { header: string; said: string; earlier: boolean }[];
    label: Label;
  };

export interface AskOptions {
  /** At most this many questions in one call. */
  limit: number;
  /** The session's remembered answers, keyed by the question text. */
  remembered: Map<string, string>;
  /** Something the person should see as it happens (a prompt that could not be put). */
  notify(text: string): void;
}

/** The facts an ask_user call is decided on. */
export interface AskFacts {
  headers: string[];
  limit: number;
  contextTainted: boolean;
  canAsk: boolean;
}

/** Whether a call may ask: refused by the rule, declined where nobody can be asked, or asked. */
interface AskCallTerms {
  grants: void;
  refusal: Extract<AskOutcome, { kind: "refused" | "nobody" }>;
  question: never;
  answer: never;
  keep: never;
}

/** One question: the answer in the words the planner is told, and whether it was given earlier. */
interface QuestionTerms {
  grants: { said: string; earlier: boolean };
  refusal: never;
  question: Question;
  answer: Answer;
  /** The answer, remembered for the session under the question's text. */
  keep: { question: string; said: string };
}

/** ask_user's first decision: whether this call may ask at all (docs/contract.md §4.3, §12.2). */
export function evaluateAsk(f: AskFacts): Verdict<AskCallTerms> {
  const refusal = askRefusal(f.headers.length, f.limit, f.contextTainted);
  if (refusal) {
    return {
      kind: "refuse",
      refusal: { kind: "refused", reason: refusal },
      audit: {
        tool: "ask_user",
        routing: { questions: f.headers },
        decision: "refused",
        by: "rule",
        reason: refusal,
      },
    };
  }
  if (!f.canAsk) {
    return {
      kind: "refuse",
      refusal: { kind: "nobody", label: ownWordsLabel() },
      audit: {
        tool: "ask_user",
        routing: { questions: f.headers },
        decision: "declined",
        by: "nobody",
        reason: "one-shot run: nobody can be asked",
      },
    };
  }
  return allowQuietly(undefined);
}

/**
 * One question of a call that may ask: a question the session remembers is answered from
 * memory, unasked and unrecorded (its answer was recorded when given); else the person is asked,
 * and only the options they were offered count as chosen. Their answer is their own words,
 * `(T,priv)`.
 */
export function evaluateQuestion(
  q: Question,
  remembered: string | undefined,
): Verdict<QuestionTerms> {
  if (remembered !== undefined) return allowQuietly({ said: remembered, earlier: true });
  return {
    kind: "ask",
    question: q,
    answered: (given) => {
      let answer = given;
      if (answer.kind === "options" && q.options) {
        // A label the person's screen never offered is not passed on as a choice.
        const known = new Set(q.options.map((o) => o.label));
        answer = { kind: "options", chosen: answer.chosen.filter((c) => known.has(c)) };
      }
      const said = describeAnswer(q, answer);
      return {
        kind: "allow",
        grants: { said, earlier: false },
        keep: { question: q.question, said },
        audit: {
          tool: "ask_user",
          routing: { question: q.header },
          decision: answer.kind === "skipped" ? "skipped" : "answered",
          by: "person",
          gave: { answer: TRUSTED_PRIVATE },
        },
      };
    },
  };
}

/** ask_user's decision: refuses, declines where nobody can be asked, or asks one at a time. */
export async function askPerson(
  policy: PlannerContext & Asking & Recording,
  questions: readonly Question[],
  options: AskOptions,
): Promise<AskOutcome> {
  const call = await settle(
    evaluateAsk({
      headers: questions.map((q) => q.header),
      limit: options.limit,
      contextTainted: policy.contextTainted,
      canAsk: policy.canAsk,
    }),
    seatAt(policy),
  );
  if (call.kind === "refuse") return call.refusal;
  const seat = seatAt<QuestionTerms>(
    policy,
    async (q) => {
      try {
        return await policy.person.ask(q);
      } catch (e) {
        // A prompt that could not be put (the terminal went away) is a skip, never a guess.
        options.notify(`the question could not be put: ${messageOf(e)}`);
        return { kind: "skipped" };
      }
    },
    (kept) => void options.remembered.set(kept.question, kept.said),
  );
  const answers: { header: string; said: string; earlier: boolean }[] = [];
  for (const q of questions) {
    const settled = await settle(evaluateQuestion(q, options.remembered.get(q.question)), seat);
    if (settled.kind === "allow") answers.push({ header: q.header, ...settled.grants });
  }
  return { kind: "answered", answers, label: TRUSTED_PRIVATE };
}
