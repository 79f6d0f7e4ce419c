/**
 * The decisions spawn_processor, load_skill, ask_user and todo_write ask for: the slice of the
 * tools' port (`../api.ts`) that those tools call. Each method decides through the policy
 * layer's rule functions and returns a value the tool renders; none hands out the effect
 * worker, the audit log, the person or the planner context.
 */
import type { Deciding, EgressMemory } from "../capabilities.ts";
import type { Label } from "../../util/label.ts";
import type { Settings } from "../../state/settings.ts";
import type { Question } from "../../person/person.ts";
import {
  type ProcessorOutcome,
  type ProcessorPort,
  type ProcessorRequest,
  runProcessor,
} from "../processors.ts";
import { type AskOptions, type AskOutcome, askPerson } from "../questions.ts";
import { loadSkill, type SkillLoad } from "../skills.ts";
import type { SkillEntry } from "../../util/skill_file.ts";

export type { Answer, Question } from "../../person/person.ts";
export type { SkillEntry };
export type {
  AskOptions,
  AskOutcome,
  ProcessorOutcome,
  ProcessorPort,
  ProcessorRequest,
  SkillLoad,
};

/** Where the skills listed at the start of the turn are kept: the session's state. */
export interface ListedSkills {
  readonly skills: readonly SkillEntry[];
}

export interface OtherPort {
  /**
   * spawn_processor: resolves the reads, asks about private egress, calls `processor`, and
   * stores the document of its reply as a new `U` reference (each step recorded).
   */
  spawnProcessor(
    request: ProcessorRequest,
    processor: ProcessorPort,
    settings: Pick<Settings, "processor" | "contextWindow">,
    signal?: AbortSignal,
  ): Promise<ProcessorOutcome>;
  /**
   * load_skill: the name selects from the skills listed at the start of the turn, exactly; a
   * name that selects none is refused with the list, a listed skill is read again and must still
   * be trusted. Each outcome is recorded.
   */
  loadSkill(name: string): Promise<SkillLoad>;
  /**
   * ask_user: refused in a tainted context or over the limit, declined where nobody can be
   * asked, otherwise asked one question at a time, each answer remembered and recorded.
   */
  askUser(questions: readonly Question[], options: AskOptions): Promise<AskOutcome>;
  /** todo_write: the list is the planner's own words, so it carries the planner context's label. */
  todoLabel(): Label;
}

/** `listed`: the session whose skills, listed at each turn's start, load_skill selects from. */
export function otherPort(
  policy: Deciding & EgressMemory,
  listed: ListedSkills,
): OtherPort {
  return {
    spawnProcessor: (request, processor, settings, signal) =>
      runProcessor(policy, request, processor, settings, signal),
    loadSkill: (name) => loadSkill(policy, name, listed.skills),
    askUser: (questions, options) => askPerson(policy, questions, options),
    todoLabel: () => policy.plannerWords,
  };
}
