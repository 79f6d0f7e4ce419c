/**
 * ask_user (tools.md): puts up to four questions to the person, one at a time. The questions are
 * the routing — they decide whom the call reaches and what it asks — and nothing is carried.
 * The person's answers are their own words, `(T,priv)` (design.md §3).
 */
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import { TRUSTED_PRIVATE, TRUSTED_PUBLIC } from "../util/label.ts";
import type { Answer, Question } from "../person/person.ts";
import { messageOf } from "../util/result.ts";

const option = z.union([
  z.string().min(1),
  z.strictObject({ label: z.string().min(1), description: z.string().optional() }),
]);

const question = z.strictObject({
  header: z.string().min(1).max(60),
  question: z.string().min(1).max(2000),
  options: z.array(option).max(12).optional(),
  multiple: z.boolean().optional(),
});

const routing = z.object({
  questions: z.array(question).min(1).describe("at most four; put one at a time"),
});
const content = z.object({});

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

export const askUser = defineTool({
  name: "ask_user",
  description:
    "Ask the person up to 4 questions (one call), each {header, question, options?, multiple?}. " +
    "Only for what you cannot find out yourself: a choice between approaches, scope, which of " +
    "two files was meant. Never for a fact about the machine. A skipped question is an answer.",
  routing,
  content,
  schema: toolSchema(routing, content),
  async handler(args, ctx) {
    const { policy, session, settings } = ctx;
    const refusal = askRefusal(
      args.questions.length,
      settings.limits.askQuestions,
      policy.contextTainted,
    );
    const headers = args.questions.map((q) => q.header);
    if (refusal) {
      await policy.record({
        tool: "ask_user",
        routing: { questions: headers },
        decision: "refused",
        by: "rule",
        reason: refusal,
      });
      return failure(refusal);
    }
    const questions: Question[] = args.questions.map((q) => ({
      header: q.header,
      question: q.question,
      options: q.options?.map((o) => typeof o === "string" ? { label: o } : o),
      multiple: q.multiple,
    }));

    if (session.oneShot || !policy.person.interactive) {
      await policy.record({
        tool: "ask_user",
        routing: { questions: headers },
        decision: "declined",
        by: "nobody",
        reason: "one-shot run: nobody can be asked",
      });
      const lines = questions.map((q, i) =>
        `${i + 1}. ${q.header}: declined — nobody can be asked in a one-shot run; ` +
        "nothing was answered on the person's behalf"
      );
      return shown(
        `No question was answered.\n${lines.join("\n")}\n` +
          "Proceed on what you know, or finish and say what you would need to know.",
        TRUSTED_PUBLIC,
      );
    }

    const lines: string[] = [];
    for (const [i, q] of questions.entries()) {
      const remembered = session.answers.get(q.question);
      if (remembered !== undefined) {
        lines.push(`${i + 1}. ${q.header}: (answered earlier in this session) ${remembered}`);
        continue;
      }
      let answer: Answer;
      try {
        answer = await ctx.policy.person.ask(q);
      } catch (e) {
        // A prompt that could not be put (the terminal went away) is a skip, never a guess.
        ctx.emit({ type: "notice", text: `the question could not be put: ${messageOf(e)}` });
        answer = { kind: "skipped" };
      }
      if (answer.kind === "options" && q.options) {
        const known = new Set(q.options.map((o) => o.label));
        answer = { kind: "options", chosen: answer.chosen.filter((c) => known.has(c)) };
      }
      const said = describeAnswer(q, answer);
      session.answers.set(q.question, said);
      lines.push(`${i + 1}. ${q.header}: ${said}`);
      await policy.record({
        tool: "ask_user",
        routing: { question: q.header },
        decision: answer.kind === "skipped" ? "skipped" : "answered",
        by: "person",
        labels: { answer: TRUSTED_PRIVATE },
      });
    }
    return shown(`The person's answers:\n${lines.join("\n")}`, TRUSTED_PRIVATE);
  },
});
