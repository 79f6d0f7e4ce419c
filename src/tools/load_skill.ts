/**
 * load_skill (tools.md): reads one skill the planner was listed at the start of the turn. The
 * name selects from that fixed set and never becomes a path; anything but an exact listed name
 * is refused with the list, never guessed at.
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import type { SkillChoice, SkillEntry } from "../policy/api.ts";
import { editDistance } from "../util/edit_distance.ts";
import { escapeForScreen } from "../util/escape.ts";

const routing = z.strictObject({
  name: z.string().describe("the skill's name exactly as listed, e.g. commit-style"),
});
const content = z.strictObject({});

/** The listed skill of exactly that name, or why there is none (with the list). */
export function selectSkill(
  skills: readonly SkillEntry[],
  name: string,
): SkillChoice {
  const list = skills.length === 0
    ? "no skills were listed this turn"
    : `the listed skills are: ${skills.map((s) => s.name).join(", ")}`;
  const shownName = JSON.stringify(name.slice(0, 80));
  if (/[\\/]|\.\./.test(name) || name.includes("\0")) {
    return {
      refusal: `${shownName} is not a skill name: a name never becomes a path and matches ` +
        `nothing; ${list}`,
    };
  }
  const entry = skills.find((s) => s.name === name);
  if (entry) return { entry };
  const near = skills.filter((s) =>
    s.name.toLowerCase() === name.trim().toLowerCase() ||
    editDistance(s.name, name.trim().toLowerCase()) <= 2
  );
  if (near.length > 0) {
    return {
      refusal: `no skill is named ${shownName}; names are matched exactly and never guessed ` +
        `(close: ${near.map((s) => s.name).join(", ")}); ${list}`,
    };
  }
  return { refusal: `no skill is named ${shownName}; ${list}` };
}

export const loadSkill = defineTool({
  name: "load_skill",
  description: "Read one of the skills listed at the start of the turn, by its exact name.",
  routing,
  content,
  async handler(args, ctx) {
    const chosen = selectSkill(ctx.session.skills, args.name);
    const outcome = await ctx.decide.loadSkill(args.name, chosen);
    switch (outcome.kind) {
      case "not_listed":
        return failure(outcome.refusal);
      case "unreadable":
        return failure(`the skill ${args.name} cannot be loaded: ${outcome.error}`);
      case "loaded":
        return shown(
          `skill ${args.name}:\n\n${outcome.body}`,
          outcome.label,
          `loaded the skill ${escapeForScreen(args.name)}`,
        );
    }
  },
});
