/**
 * The audit log (design.md §12): every policy decision, asked or not, appended as one JSON
 * line to the session's `audit.jsonl`, so a person can later see who allowed what and why.
 */
import { appendJsonLine } from "../state/jsonfile.ts";

/** Who took a decision: a standing rule, the person at the prompt, the policy file, or nobody. */
export type Decider = "rule" | "person" | "policy-file" | "nobody";

export interface AuditEntry {
  tool: string;
  /** The routing arguments as resolved (real path, argv…), never content. */
  routing: Record<string, unknown>;
  /** Labels involved, written `(T,pub)`: input, output, the planner context. */
  labels: Record<string, string>;
  decision: string;
  by: Decider;
  reason?: string;
  /** For assertions about bytes (read_output, vouches): the SHA-256 of those bytes. */
  sha256?: string;
}

export interface AuditRecord extends AuditEntry {
  time: string;
  session: string;
}

export class AuditLog {
  readonly entries: AuditRecord[] = [];

  /** `path` null keeps the log in memory only (tests). */
  constructor(readonly path: string | null, readonly session: string) {}

  async append(entry: AuditEntry): Promise<AuditRecord> {
    const record: AuditRecord = { time: new Date().toISOString(), session: this.session, ...entry };
    this.entries.push(record);
    if (this.path) await appendJsonLine(this.path, record);
    return record;
  }
}
