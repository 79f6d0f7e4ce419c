/**
 * load_skill (docs/tools.md#load_skill): reads one skill the planner was listed at the start of the
 * turn. The name selects from that fixed set and never becomes a path; anything but an exact listed
 * name is refused with the list, never guessed at. The policy layer selects and reads
 * (policy/skills.ts); this renders.
 */
import { z } from "zod";
import { defineTool, failure, shown } from "./tool.ts";
import { escapeForScreen } from "../util/escape.ts";

const routing = z.strictObject({
  name: z.string().describe("the skill's name exactly as listed, e.g. commit-style"),
});
const content = z.strictObject({});

export const loadSkill = defineTool({
  name: "load_skill",
  description: "Read one of the skills listed at the start of the turn, by its exact name.",
  routing,
  content,
  async handler(args, ctx) {
    const outcome = await ctx.decide.loadSkill(args.name);
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
