/**
 * `bravebot trust [list | add DIR | untrust DIR | remove DIR]` (cli.md; `/trust` in a session
 * uses the same functions). Trust changes only here, by the person: nothing the planner can
 * write reaches the trust map's file.
 */
import { openWorkspace } from "../../policy/workspace.ts";
import { statePaths } from "../../state/session_paths.ts";
import {
  loadTrustMap,
  normaliseRuleDir,
  saveTrustMap,
  type TrustMap,
} from "../../policy/trust_map.ts";
import { UsageError } from "../exit_codes.ts";

/** Lines describing a trust map, for the terminal. */
export function describeTrust(map: TrustMap): string[] {
  const lines: string[] = [];
  lines.push(`first use: ${map.firstUse ?? "not answered yet"}`);
  if (map.rules.length === 0) lines.push("rules: none (nothing is trusted)");
  else {
    lines.push("rules (longest prefix wins; a path no rule covers is untrusted):");
    const sorted = [...map.rules].sort((a, b) => a.dir.localeCompare(b.dir));
    for (const r of sorted) {
      lines.push(
        `  ${r.trusted ? "trusted  " : "untrusted"}  ${r.dir === "." ? "./" : r.dir + "/"}`,
      );
    }
  }
  if (map.files.size > 0) {
    lines.push("files:");
    for (const [rel, e] of [...map.files].sort(([a], [b]) => a.localeCompare(b))) {
      const bound = e.sha256 ? ` (while sha256 is ${e.sha256.slice(0, 12)}…)` : "";
      lines.push(
        `  ${e.integrity === "T" ? "trusted  " : "untrusted"}  ${rel}  [${e.why}]${bound}`,
      );
    }
  }
  return lines;
}

/** Applies one trust subcommand to a map; returns the lines to print. Shared with `/trust`. */
export function applyTrustCommand(map: TrustMap, action: string, dir?: string): string[] {
  if (action === "list") return describeTrust(map);
  if (!["add", "untrust", "remove"].includes(action)) {
    throw new UsageError(
      `trust: unknown action '${action}'; use list, add DIR, untrust DIR or remove DIR`,
    );
  }
  if (!dir) {
    throw new UsageError(`trust ${action}: a directory is required, e.g. trust ${action} src/`);
  }
  const normal = normaliseRuleDir(dir);
  if (!normal.ok) throw new UsageError(`trust ${action}: ${normal.error}`);
  const shown = normal.value === "." ? "./" : normal.value + "/";
  if (action === "remove") {
    if (!map.removeRule(normal.value)) return [`no rule for ${shown}; nothing changed`];
    return [`removed the rule for ${shown}`];
  }
  map.setRule(normal.value, action === "add");
  if (map.firstUse === null) map.firstUse = "custom";
  return [`${shown} is now ${action === "add" ? "trusted" : "untrusted"}`];
}

export async function trustCommand(
  workspaceDir: string,
  stateDir: string,
  action: string,
  dir: string | undefined,
  print: (line: string) => void,
): Promise<void> {
  const workspace = await openWorkspace(workspaceDir, stateDir);
  const paths = statePaths(stateDir, workspace.root);
  const { map, problem } = await loadTrustMap(paths.trustFile, workspace.root);
  if (problem) print(`warning: ${problem}`);
  print(`workspace: ${workspace.root}`);
  const lines = applyTrustCommand(map, action, dir);
  for (const line of lines) print(line);
  if (action !== "list") await saveTrustMap(paths.trustFile, map);
}
