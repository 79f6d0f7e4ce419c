/**
 * ask_user (docs/tools.md#ask_user): puts up to four questions to the person, one at a time. The
 * questions are the routing — they decide whom the call reaches and what it asks — and nothing is
 * carried. The person's answers are their own words, `(T,priv)` (docs/contract.md §3.2).
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import type { Question } from "../policy/api.ts";
import { plural } from "../util/plural.ts";

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

const routing = z.strictObject({
  questions: z.array(question).min(1).describe("at most four; put one at a time"),
});
const content = z.strictObject({});

export const askUser = defineTool({
  name: "ask_user",
  description:
    "Ask the person up to 4 questions (one call), each {header, question, options?, multiple?}. " +
    "Only for what you cannot find out yourself: a choice between approaches, scope, which of " +
    "two files was meant. Never for a fact about the machine. A skipped question is an answer.",
  routing,
  content,
  async handler(args, ctx) {
    const questions: Question[] = args.questions.map((q) => ({
      header: q.header,
      question: q.question,
      options: q.options?.map((o) => typeof o === "string" ? { label: o } : o),
      multiple: q.multiple,
    }));
    const outcome = await ctx.decide.askUser(questions, {
      limit: ctx.settings.limits.askQuestions,
      remembered: ctx.session.answers,
      notify: (text) => ctx.emit({ type: "notice", text }),
    });
    switch (outcome.kind) {
      case "refused":
        return failure(outcome.reason);
      case "nobody": {
        const lines = questions.map((q, i) =>
          `${i + 1}. ${q.header}: declined — nobody can be asked in a one-shot run; ` +
          "nothing was answered on the person's behalf"
        );
        return shown(
          `No question was answered.\n${lines.join("\n")}\n` +
            "Proceed on what you know, or finish and say what you would need to know.",
          outcome.label,
          `nobody could be asked: ${plural(questions.length, "question")} declined`,
        );
      }
      case "answered": {
        const lines = outcome.answers.map((a, i) =>
          a.earlier
            ? `${i + 1}. ${a.header}: (answered earlier in this session) ${a.said}`
            : `${i + 1}. ${a.header}: ${a.said}`
        );
        return shown(
          `The person's answers:\n${lines.join("\n")}`,
          outcome.label,
          `your ${plural(outcome.answers.length, "answer")} went to the planner`,
        );
      }
    }
  },
});
