/**
 * The audit log (docs/contract.md §12.3): every policy decision, asked or not, appended as one JSON
 * line to the session's `audit.jsonl`, so a person can later see who allowed what and why.
 *
 * An entry's `routing` is the routing half of the tool's arguments (docs/tools.md), as resolved:
 * the real path, the argv, the endpoint. Content — a stdin reference, the references a processor
 * reads — is never routing; it goes in `inputs`, as reference names. {@link checkRouting} holds
 * every entry to its tool's keys, so content cannot slip into routing unnoticed.
 */
import { JsonLineAppender } from "../state/jsonfile.ts";

/** Who took a decision: a standing rule, the person at the prompt, the policy file, or nobody. */
export type Decider = "rule" | "person" | "policy-file" | "nobody";

export interface AuditEntry {
  tool: string;
  /** The routing arguments as resolved (real path, argv…), never content. */
  routing: Record<string, unknown>;
  /** The content references the decision was about (`ref:N` names), never their bytes. */
  inputs?: Record<string, unknown>;
  /** Labels involved, written `(T,pub)`: input, output, the planner context. */
  labels: Record<string, string>;
  decision: string;
  by: Decider;
  reason?: string;
  /** For assertions about bytes (read_output, vouches): the SHA-256 of those bytes. */
  sha256?: string;
  /**
   * For a run's output the approval policy file asserted by shape (docs/contract.md §16.5): the
   * shape it matched. The entry names the shape or the person, never the bytes.
   */
  shape?: string;
}

/**
 * The keys each tool's routing may hold, resolved from its routing half: `path`/`path_ref` as the
 * real path and whether a reference named it, `pipeline` as its stages, and where bytes may go
 * (`endpoint`, `role`) for the egress question any tool can raise.
 */
const ROUTING_KEYS: Readonly<Record<string, readonly string[]>> = {
  read_file: ["path", "via_ref"],
  list_files: ["directory", "pattern"],
  search: ["directory", "include"],
  write_file: ["path", "via_ref", "new_file"],
  edit_file: ["path", "via_ref", "new_file"],
  run: ["stages", "pipeline", "unconfined"],
  read_output: ["ref", "kind"],
  spawn_processor: ["about", "endpoint"],
  load_skill: ["name", "source"],
  ask_user: ["questions", "question"],
  todo_write: [],
  // The person's own shell line (docs/contract.md §9) and the planner's requests (egress).
  shell: ["command", "shell", "mode"],
  // A reference shown to the person only (docs/contract.md §15.1, §15.2).
  show: ["ref", "kind"],
  // The person's `/undo` of the session's own change.
  undo: ["path"],
  planner: [],
};
const EGRESS_KEYS = ["endpoint", "role"];

/** Null when the entry's routing holds only its tool's keys; else the first stray key. */
export function checkRouting(entry: Pick<AuditEntry, "tool" | "routing">): string | null {
  const keys = ROUTING_KEYS[entry.tool];
  if (keys === undefined) return `an audit entry names an unknown tool '${entry.tool}'`;
  for (const key of Object.keys(entry.routing)) {
    if (!keys.includes(key) && !EGRESS_KEYS.includes(key)) {
      return `${entry.tool}: '${key}' is not routing`;
    }
  }
  return null;
}

export interface AuditRecord extends AuditEntry {
  time: string;
  session: string;
}

export class AuditLog {
  readonly entries: AuditRecord[] = [];
  #file: JsonLineAppender | null;

  /** `path` null keeps the log in memory only (tests). */
  constructor(readonly path: string | null, readonly session: string) {
    this.#file = path === null ? null : new JsonLineAppender(path);
  }

  /** Appends an entry; one whose routing holds a key that is not its tool's is a wiring bug. */
  async append(entry: AuditEntry): Promise<AuditRecord> {
    const stray = checkRouting(entry);
    if (stray !== null) throw new Error(`audit: ${stray}`);
    const record: AuditRecord = { time: new Date().toISOString(), session: this.session, ...entry };
    this.entries.push(record);
    // In the file before this returns, so before the act the decision allowed: the append is
    // synchronous and never batched.
    if (this.#file) await this.#file.append(record);
    return record;
  }

  /** Lets the kept handle go (the session closes); a later entry opens the file again. */
  close(): void {
    this.#file?.close();
  }
}
