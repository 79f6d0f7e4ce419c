/**
 * `bravebot vouch [list | remove ID]` (docs/cli.md#commands, docs/contract.md §8.6): the person's
 * view of the commands they vouched for in this workspace. Vouches are added only at a run
 * approval, by the person; here they are listed and taken back.
 */
import { openWorkspace } from "../../policy/workspace.ts";
import { statePaths } from "../../state/session_paths.ts";
import { describeVouch, type Vouch, vouchedCommands, VouchStore } from "../../policy/vouches.ts";
import { isWithin } from "../../policy/workspace.ts";
import { hashRegularFile } from "../../util/regular_file.ts";
import { printOut } from "../../util/output.ts";
import { relative } from "node:path";
import { EXIT, UsageError } from "../exit_codes.ts";
import { type GlobalOptions, resolveGlobals } from "../global_options.ts";

/**
 * Whether every workspace program of the vouch still has the bytes it is bound to. The program
 * is the repository's file, read here on the main thread without a worker: only a regular file
 * is read, without blocking and a chunk at a time (util/regular_file.ts), so a FIFO or a device
 * swapped in for it makes the vouch void instead of stalling the list.
 */
async function stillHolds(vouch: Vouch, workspace: string): Promise<boolean> {
  for (const command of vouchedCommands(vouch)) {
    if (!command.sha256) continue;
    let real: string;
    try {
      real = await Deno.realPath(command.program);
    } catch {
      return false;
    }
    if (!isWithin(workspace, real)) return false;
    const hashed = hashRegularFile(workspace, relative(workspace, real));
    if (hashed.kind !== "hash" || hashed.hex !== command.sha256) return false;
  }
  return true;
}

/** Runs one vouch subcommand against the store; returns the lines to print. */
export async function applyVouchCommand(
  store: VouchStore,
  workspace: string,
  action: string,
  id: string | undefined,
): Promise<string[]> {
  if (action === "list") {
    const vouches = await store.list();
    const lines = [...store.problems.map((p) => `warning: ${p}`)];
    if (vouches.length === 0) {
      lines.push("no vouched commands (a vouch is given at a run approval)");
      return lines;
    }
    lines.push("vouched commands (they run without asking while the context is trusted and");
    lines.push("their stdin is public; their output is shown to the planner):");
    for (const v of vouches) {
      const holds = await stillHolds(v, workspace);
      lines.push(`  ${describeVouch(v)}${holds ? "" : "  [void: the program changed or is gone]"}`);
    }
    return lines;
  }
  if (action === "remove") {
    if (!id) throw new UsageError("vouch remove: an ID is required, e.g. vouch remove v1");
    const removed = await store.remove(id.trim());
    if (!removed) {
      throw new UsageError(
        `vouch remove: there is no vouch '${id}'; 'bravebot vouch list' shows them`,
      );
    }
    return [`removed ${describeVouch(removed)}`];
  }
  throw new UsageError(`vouch: unknown action '${action}'; use list or remove ID`);
}

export async function vouchCommand(
  options: GlobalOptions,
  action: string,
  id: string | undefined,
  print: (line: string) => void = printOut,
): Promise<number> {
  const g = await resolveGlobals(options);
  const workspace = await openWorkspace(g.workspaceDir, g.stateDir);
  const paths = statePaths(g.stateDir, workspace.root);
  const store = VouchStore.at(paths.vouchesFile, workspace.root);
  print(`workspace: ${workspace.root}`);
  for (const line of await applyVouchCommand(store, workspace.root, action, id)) print(line);
  return EXIT.ok;
}
