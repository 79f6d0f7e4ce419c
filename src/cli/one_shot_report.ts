/**
 * What a one-shot run says about itself besides the driver's events (docs/cli.md#output-formats, issue 25): the
 * workspace's trust before the run (a run where nothing is trusted is blind: the planner is
 * shown no file's contents, and asks nobody), the approval policy in force, and what was
 * declined for want of one. Read from the policy layer's own state — the trust map the run's
 * decisions use, the policy file, the audit entries — and deciding nothing.
 */
import type { ApprovalsFile } from "../policy/approvals_file.ts";
import type { TrustMap } from "../policy/trust_map.ts";
import { plural } from "../util/plural.ts";

/**
 * The workspace's trust as the run starts:
 * - `not_set_up`: nobody answered the first-use question or ran `bravebot trust`, and the policy
 *   file trusts nothing either: nothing is trusted;
 * - `nothing_trusted`: set up, but no rule or file entry trusts anything;
 * - `some_trusted`: a rule trusts a folder, or an entry a file.
 */
export type WorkspaceTrust = "not_set_up" | "nothing_trusted" | "some_trusted";

/** The state of `map`: the stored trust map with the policy file's rules laid on top. */
export function workspaceTrust(map: TrustMap): WorkspaceTrust {
  const trusts = map.rules.some((r) => r.trusted) ||
    [...map.files.values()].some((f) => f.integrity === "T");
  if (trusts) return "some_trusted";
  return map.firstUse === null ? "not_set_up" : "nothing_trusted";
}

/** What the person is told, once, when nothing is trusted; null when something is. */
export function trustNotice(state: WorkspaceTrust): string | null {
  const blind = "so the planner is shown no file's contents, only references to them";
  const fix = "start a session here once (bravebot) and answer its first question, or run " +
    'bravebot trust add DIR for the folders you wrote, or pass --approvals with a "trust" ' +
    "list for this run";
  switch (state) {
    case "not_set_up":
      return `nothing in this workspace is trusted yet (it was never set up), ${blind}: ${fix}`;
    case "nothing_trusted":
      return `nothing in this workspace is trusted (its trust map trusts no folder), ${blind}: ` +
        'bravebot trust add DIR trusts a folder you wrote; --approvals with a "trust" list ' +
        "does for this run";
    case "some_trusted":
      return null;
  }
}

/** How a policy file's field is summed up: a list by its length, the rest by its value. */
export type PolicySummary = Record<string, number | boolean | string | string[]>;

/**
 * The approval policy in force, for the `start` event: null without `--approvals`; else which
 * fields the file sets — each list by how many entries it has (never a path or a command: a
 * workspace program's path is a name the repository chose), `readOutput` as `true`, `false` or
 * the shape names, `quarantinedRead` as its answer, and how many entries run unconfined.
 */
export function policySummary(file: ApprovalsFile | null): PolicySummary | null {
  if (file === null) return null;
  const summary: PolicySummary = {};
  for (const key of ["trust", "untrust", "writes", "run", "vouch"] as const) {
    const list = file[key];
    if (list !== undefined) summary[key] = list.length;
  }
  const unconfined = [...file.run ?? [], ...file.vouch ?? []].filter((r) => r.unconfined).length;
  if (unconfined > 0) summary.unconfined = unconfined;
  if (file.readOutput !== undefined) {
    summary.readOutput = typeof file.readOutput === "boolean"
      ? file.readOutput
      : file.readOutput.map((s) => String(s.answer));
  }
  if (file.quarantinedRead !== undefined) summary.quarantinedRead = file.quarantinedRead;
  return summary;
}

/** An audit entry as far as it is read here. */
export interface DecidedEntry {
  tool: string;
  decision: string;
  by: string;
}

/**
 * The closing line of a text run whose writes or commands were declined because nobody could
 * be asked and no policy file allowed them; null when none were. `withFile`: a policy file was
 * given (it did not allow them).
 */
export function declinedLine(entries: readonly DecidedEntry[], withFile: boolean): string | null {
  const unasked = (e: DecidedEntry) => e.by === "nobody" || e.by === "policy-file";
  const writes =
    entries.filter((e) =>
      unasked(e) && (e.tool === "write_file" || e.tool === "edit_file") &&
      e.decision === "write refused"
    ).length;
  const runs = entries.filter((e) => unasked(e) && e.tool === "run" && e.decision === "declined")
    .length;
  if (writes === 0 && runs === 0) return null;
  const what = [
    writes ? plural(writes, "write") : "",
    runs ? plural(runs, "command") : "",
  ].filter((w) => w !== "").join(" and ");
  const fields = [writes ? '"writes"' : "", runs ? '"run"' : ""].filter((f) => f !== "")
    .join(" and ");
  return `${what} ${writes + runs === 1 ? "was" : "were"} declined: nobody can be asked in a ` +
    (withFile
      ? `one-shot run, and the approval policy file does not allow ${
        writes + runs === 1 ? "it" : "them"
      } (add ${fields} entries)`
      : `one-shot run; an approval policy file (--approvals FILE, with ${fields} entries) ` +
        `can allow ${writes + runs === 1 ? "it" : "them"} in advance`);
}
