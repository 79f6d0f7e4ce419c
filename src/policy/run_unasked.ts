/**
 * A `run`'s line in the planner's system prompt (docs/contract.md §15): which commands run without
 * asking, named in trusted words only.
 */
import type { BoundCommandRules, FileLabels, Vouches, WorkspaceFiles } from "./capabilities.ts";
import { pathNameShown } from "./reads.ts";
import { vouchedCommands } from "./vouches.ts";
import { formatArgv } from "../util/escape.ts";

/**
 * The commands that run without asking, one short line each, for the planner's system prompt
 * (docs/contract.md §15): stored vouches and the policy file's `vouch` and `run` entries, so it
 * does not spend calls finding out. A policy file entry is named as the person wrote it. A stored
 * vouch knows its program only by its real path: a program on PATH is named by its file name, a
 * workspace program by its path only where that name may be shown (§3) — the real file behind a
 * trusted link may lie in an untrusted folder, whose names are untrusted text — and a vouch with a
 * name that may not be shown is left out.
 */
export async function commandsRunUnasked(
  policy: FileLabels & WorkspaceFiles & Vouches & BoundCommandRules,
): Promise<string[]> {
  const root = policy.workspace.root + "/";
  const name = (program: string): string | null => {
    if (!program.startsWith(root)) return program.split("/").at(-1)!;
    const rel = program.slice(root.length);
    return pathNameShown(policy, rel) ? `./${rel}` : null;
  };
  const more = (match: string) => match === "prefix" ? " …" : "";
  const lines: string[] = [];
  for (const v of await policy.vouches.list()) {
    const stages = vouchedCommands(v).map((s) => ({ name: name(s.program), args: s.args }));
    if (stages.some((s) => s.name === null)) continue;
    const argv = stages.map((s) => formatArgv([s.name!, ...s.args])).join(" | ");
    lines.push(
      v.match === "pipeline"
        ? `${argv} (exactly, as one pipeline)`
        : `${argv}${more(v.match)} (vouched: output shown to you)`,
    );
  }
  for (const r of policy.commandRules.vouch) {
    lines.push(
      `${formatArgv([r.written, ...r.args])}${more(r.match)} (vouched: output shown to you)`,
    );
  }
  for (const r of policy.commandRules.run) {
    lines.push(`${formatArgv([r.written, ...r.args])}${more(r.match)} (output stays a reference)`);
  }
  return lines;
}
