/**
 * `bravebot skills` (docs/cli.md#commands): the skills the planner would be listed at the start of
 * the next turn, where each was found, and every folder that was skipped and why. It opens the
 * trust map and the effect worker exactly as a session does, but starts no session and asks
 * nothing.
 */
import type { GlobalOptions } from "../global_options.ts";
import { resolveGlobals } from "../global_options.ts";
import { EXIT } from "../exit_codes.ts";
import { openWorkspace } from "../../policy/workspace.ts";
import { statePaths } from "../../state/session_paths.ts";
import { loadTrustMap } from "../../policy/trust_map.ts";
import { EffectWorker } from "../../worker/client.ts";
import { composeSession } from "../../session/compose.ts";
import type { FileLabels, WorkspaceFiles } from "../../policy/capabilities.ts";
import { PolicyFilePerson } from "../../person/policy_file.ts";
import type { Settings } from "../../state/settings.ts";
import { discoverSkills, skillLocation, userSkillsDir } from "../../skills/discover.ts";
import { skillsPort } from "../../policy/ports/skills.ts";
import { escapeForScreen } from "../../util/escape.ts";
import { printOut } from "../../util/output.ts";

/**
 * A policy layer over the stored trust map with nobody to ask and nothing kept: for commands
 * that only look (skills), never for a session.
 */
export async function withLookingPolicy<T>(
  workspaceDir: string,
  stateDir: string,
  settings: Settings,
  fn: (policy: FileLabels & WorkspaceFiles, notes: string[]) => Promise<T>,
): Promise<T> {
  const workspace = await openWorkspace(workspaceDir, stateDir);
  const paths = statePaths(stateDir, workspace.root);
  const { map, problem } = await loadTrustMap(paths.trustFile, workspace.root);
  const notes = problem ? [problem] : [];
  if (map.firstUse === null) {
    notes.push("this workspace's first-use trust question is not answered yet: nothing is trusted");
  }
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "bravebot-look-" }));
  const worker = EffectWorker.start({
    workspace: workspace.root,
    scratch,
    run: false,
    hide: workspace.protectedDirs,
  });
  try {
    const { policy } = await composeSession({
      workspace,
      worker,
      person: new PolicyFilePerson(null),
      trust: map,
      trustFile: null,
      sessionId: "look",
      auditFile: null,
      sessionDir: null,
      scratch,
      vouchesFile: null,
      privatePatterns: settings.privatePatterns,
    });
    return await fn(policy, notes);
  } finally {
    await worker.terminate();
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

export async function skillsCommand(options: GlobalOptions): Promise<number> {
  const g = await resolveGlobals(options);
  const print = printOut;
  return await withLookingPolicy(g.workspaceDir, g.stateDir, g.settings, async (policy, notes) => {
    const userDir = userSkillsDir(g.configPath);
    const skills = skillsPort(policy);
    const found = await discoverSkills(skills, userDir);
    print(`user skills: ${userDir}`);
    print(
      `workspace skills: ${policy.workspace.root}/.bravebot/skills/ (listed only when trusted)`,
    );
    for (const n of notes) print(`note: ${n}`);
    if (found.skills.length === 0) print("no skills would be listed");
    else {
      print("the planner would be listed:");
      for (const s of found.skills) {
        print(`  ${s.name}  (${s.source}: ${escapeForScreen(skillLocation(s, skills))})`);
        print(`      ${escapeForScreen(s.description.replace(/\s+/g, " "))}`);
      }
    }
    if (found.problems.length > 0) {
      print("skipped:");
      for (const p of found.problems) print(`  ${p}`);
    }
    return EXIT.ok;
  });
}
