/**
 * `bravebot trust [list | add DIR | untrust DIR | remove DIR]` (docs/cli.md#commands; `/trust` in a
 * session uses the same functions). Trust changes only here, by the person: nothing the planner can
 * write reaches the trust map's file.
 */
import { openWorkspace } from "../../policy/workspace.ts";
import { statePaths } from "../../state/session_paths.ts";
import {
  checkTrustableDir,
  isBeneath,
  loadTrustMap,
  normaliseRuleDir,
  PERSON_TRUST_WAIT,
  type TrustMap,
  updateTrustMap,
} from "../../policy/trust_map.ts";
import { UsageError } from "../exit_codes.ts";
import type { LockWait } from "../../state/jsonfile.ts";
import { escapeForScreen } from "../../util/escape.ts";

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
        `  ${r.trusted ? "trusted  " : "untrusted"}  ${
          r.dir === "." ? "./" : escapeForScreen(r.dir) + "/"
        }`,
      );
    }
  }
  if (map.prefixes.size > 0) {
    lines.push(
      "folders a run could not see into (every name beneath is untrusted; `names`: content " +
        "keeps its label; `trust remove DIR` clears one):",
    );
    for (const [dir, p] of [...map.prefixes].sort(([a], [b]) => a.localeCompare(b))) {
      // A run may have chosen the folder's name too: escaped.
      const shown = dir === "." ? "./" : escapeForScreen(dir) + "/";
      lines.push(`  ${p.integrity === "T" ? "names    " : "untrusted"}  ${shown}  [${p.why}]`);
    }
  }
  if (map.files.size > 0) {
    lines.push("files:");
    for (const [rel, e] of [...map.files].sort(([a], [b]) => a.localeCompare(b))) {
      const bound = e.sha256 ? ` (while sha256 is ${e.sha256.slice(0, 12)}…)` : "";
      lines.push(
        // A file name may come from a run that created it: an untrusted name, escaped.
        `  ${e.integrity === "T" ? "trusted  " : "untrusted"}  ${
          escapeForScreen(rel)
        }  [${e.why}]${bound}`,
      );
    }
  }
  return lines;
}

/** One checked change to the rules: what `trust add|untrust|remove DIR` asks for. */
export interface TrustChange {
  action: "add" | "untrust" | "remove";
  /** Normalised. */
  dir: string;
}

/** Checks a trust subcommand; null for `list`. A bad one is a usage error, before any change. */
export function parseTrustCommand(action: string, dir?: string): TrustChange | null {
  if (action === "list") return null;
  if (action !== "add" && action !== "untrust" && action !== "remove") {
    throw new UsageError(
      `trust: unknown action '${action}'; use list, add DIR, untrust DIR or remove DIR`,
    );
  }
  if (!dir) {
    throw new UsageError(`trust ${action}: a directory is required, e.g. trust ${action} src/`);
  }
  const normal = normaliseRuleDir(dir);
  if (!normal.ok) throw new UsageError(`trust ${action}: ${normal.error}`);
  return { action, dir: normal.value };
}

/**
 * {@link parseTrustCommand}, then the workspace's word: a directory to trust must exist in it
 * (`checkTrustableDir`). Both `bravebot trust` and `/trust` come through here.
 */
export async function checkTrustCommand(
  workspaceRoot: string,
  action: string,
  dir?: string,
): Promise<TrustChange | null> {
  const change = parseTrustCommand(action, dir);
  if (change?.action !== "add") return change;
  const trustable = await checkTrustableDir(workspaceRoot, change.dir);
  if (!trustable.ok) throw new UsageError(`trust add: ${trustable.error}; nothing changed`);
  return change;
}

/** Applies one checked change to a map; returns the lines to print. */
export function applyTrustChange(map: TrustMap, change: TrustChange): string[] {
  const shown = change.dir === "." ? "./" : change.dir + "/";
  if (change.action === "remove") {
    // The person's word also clears a run's mark on exactly that folder (trust_map.ts).
    const lines: string[] = [];
    if (map.removeRule(change.dir)) lines.push(`removed the rule for ${shown}`);
    if (map.removePrefix(change.dir)) lines.push(`removed a run's mark on ${shown}`);
    return lines.length ? lines : [`no rule for ${shown}; nothing changed`];
  }
  map.setRule(change.dir, change.action === "add");
  if (map.firstUse === null) map.firstUse = "custom";
  const lines = [`${shown} is now ${change.action === "add" ? "trusted" : "untrusted"}`];
  if (change.action === "add" && [...map.prefixes.keys()].some((d) => isMarkedFor(d, change.dir))) {
    lines.push(
      `a run's mark still makes what lies beneath a folder in ${shown} untrusted (trust list ` +
        "shows it; trust remove clears it)",
    );
  }
  return lines;
}

/** Whether the mark on `marked` reaches into `dir`: it is `dir`, above it or beneath it. */
function isMarkedFor(marked: string, dir: string): boolean {
  return marked === dir || isBeneath(marked, dir) || isBeneath(dir, marked);
}

/** Applies one trust subcommand to a map in memory; returns the lines to print. */
export function applyTrustCommand(map: TrustMap, action: string, dir?: string): string[] {
  const change = parseTrustCommand(action, dir);
  return change ? applyTrustChange(map, change) : describeTrust(map);
}

/**
 * `bravebot trust`: a change is applied to the stored map as it is now, under its lock, so a
 * running session's writes made meanwhile are kept. A lock held past the bound fails the command
 * with the holder's pid (`wait`, PERSON_TRUST_WAIT): nothing was changed, and it can be run again.
 */
export async function trustCommand(
  workspaceDir: string,
  stateDir: string,
  action: string,
  dir: string | undefined,
  print: (line: string) => void,
  wait: LockWait = PERSON_TRUST_WAIT,
): Promise<void> {
  const workspace = await openWorkspace(workspaceDir, stateDir);
  const change = await checkTrustCommand(workspace.root, action, dir);
  const paths = statePaths(stateDir, workspace.root);
  const { problem, result: lines } = change
    ? await updateTrustMap(
      paths.trustFile,
      workspace.root,
      (map) => applyTrustChange(map, change),
      wait,
    )
    : await loadTrustMap(paths.trustFile, workspace.root).then((s) => ({
      ...s,
      result: describeTrust(s.map),
    }));
  if (problem) print(`warning: ${problem}`);
  print(`workspace: ${workspace.root}`);
  for (const line of lines) print(line);
}
