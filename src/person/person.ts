/**
 * The Person: the one seam through which the policy layer asks the human (docs/contract.md §12).
 * Implementations: the terminal (interactive session), a scripted one for tests, and the
 * approval policy file (one-shot), which declines whatever the file does not allow.
 */
import type { Label } from "../util/label.ts";
import type { ScreenText } from "../util/escape.ts";

export interface Refusal {
  approved: false;
  reason?: string;
}

export type Approval = { approved: true } | Refusal;

export interface WriteApprovalRequest {
  tool: "write_file" | "edit_file";
  /** The real workspace-relative destination, shown even when the planner only holds a ref. */
  path: string;
  viaRef: boolean;
  isNew: boolean;
  /**
   * What the write changes, as data: the screen escapes every line (control, invisible and bidi
   * characters), numbers and colours it.
   */
  preview: WritePreview;
  label: Label;
}

/**
 * One hunk of a diff, as the `diff` package's `structuredPatch` makes it. Each line starts with
 * its sign — ` ` kept, `-` removed, `+` added — or is the note `\ No newline at end of file`;
 * the rest of the line is the file's bytes as they are, unescaped.
 */
export interface DiffHunk {
  /** The hunk's first line in the old file and in the new one (1-based), and how many each has. */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Why new contents are shown whole instead of a diff of a file that exists. */
export type ShownWhole =
  /** The file replaced is not text: `bytes` is its size. */
  | { kind: "binary"; bytes: number }
  /** The diff would be too large to compute quickly: `lines` is how many the old file has. */
  | { kind: "too many changes"; lines: number };

/** A write approval's preview: a diff, or the new contents whole. */
export type WritePreview =
  /** An edit or an overwrite of a text file; no hunks: the contents do not change. */
  | { kind: "diff"; oldName: string; newName: string; hunks: DiffHunk[] }
  | {
    kind: "contents";
    /** The destination, workspace-relative. */
    name: string;
    /** How many lines the new contents have; `lines` holds the first ones, maybe not all. */
    lineCount: number;
    lines: string[];
    /** Null for a new file. */
    instead: ShownWhole | null;
  };

export interface QuarantinedReadRequest {
  path: string;
  /** First lines, already escaped so control and invisible characters show. */
  preview: string[];
  size: number;
  label: Label;
}

export type QuarantinedReadAnswer = "vouch" | "keep" | "untrusted";

export interface RunApprovalRequest {
  stages: { program: string; resolved: string; args: string[] }[];
  /** Escaped, one line per stage, exactly what will be executed. */
  display: string[];
  stdin: { ref: string; label: Label } | null;
  /** Why the person is asked although the command may be vouched (tainted context, priv stdin). */
  why: string;
  /** One line for each stage whose program runs code it is given: what vouching it means. */
  warnings: string[];
  /** The same lines stage by stage (null: none), for the picker that vouches each stage. */
  stageWarnings: (string | null)[];
  /**
   * Whether the command will run confined by bwrap (docs/contract.md §13.4) and what the box allows
   * (`detail`, in the policy layer's words), or why not; when confined, the person may choose to
   * run it once outside the confinement.
   */
  confinement: { confined: true; detail?: string } | { confined: false; why: string };
}

export type RunAnswer =
  /** `unconfined`: this once, outside the bwrap confinement (never stored in a vouch). */
  | { answer: "once"; unconfined?: boolean }
  | {
    answer: "vouch";
    /** How many leading args the vouch fixes; undefined = exact argv. One command only. */
    prefixArgs?: number;
    /**
     * A pipeline's stages each vouched on their own, by a prefix (docs/contract.md §8): how many
     * leading args each stage's vouch fixes, in the pipeline's order. Undefined: the pipeline is
     * vouched whole, exactly.
     */
    stagePrefixes?: readonly number[];
  }
  | { answer: "refuse"; reason?: string };

/**
 * The read_output question (docs/contract.md §16.2): the person asserts exactly these bytes. It
 * shows what fed the run and the output itself — never a processor's remark, which could argue.
 */
export interface ReadOutputRequest {
  ref: string;
  /** The command as shown: already escaped (a run's argv by formatArgv, a shell line whole). */
  command: string;
  /**
   * What fed the run as stdin, in words and escaped ("processor answer about vendor/x/a.json
   * (ref:2)", or "none …"); null for output that no run made (a shell line, piped input).
   */
  stdin: string | null;
  /**
   * The text the planner would be shown, one line each, escaped on its own: every control and
   * invisible character is a marker, a tab and a carriage return too. The final newline is
   * not a line: `finalNewline` says whether there was one.
   */
  lines: string[];
  finalNewline: boolean;
  /** The output's size in bytes. */
  size: number;
  /** Characters left out in the middle (the planner would not be shown them either). */
  omitted: number;
  utf8: boolean;
  label: Label;
}

export interface Question {
  header: string;
  question: string;
  options?: { label: string; description?: string }[];
  multiple?: boolean;
}

/** An answer: chosen option labels, the person's own words, or a skip. */
export type Answer =
  | { kind: "options"; chosen: string[] }
  | { kind: "text"; text: string }
  | { kind: "skipped" };

export type FirstUseAnswer =
  | { choice: "workspace" }
  | { choice: "nothing" }
  | { choice: "custom"; trusted: string[]; untrusted: string[] }
  /**
   * The question was interrupted (Ctrl-C, Esc, the input closed): nothing is stored, this
   * session trusts nothing, and the question is asked again next time.
   */
  | { choice: "unanswered" };

export interface Person {
  /** False when nobody can be asked (one-shot): the policy layer then declines, never guesses. */
  readonly interactive: boolean;
  /** Names the decider in the audit log: "person" or "policy-file". */
  readonly decider: "person" | "policy-file" | "nobody";
  approveWrite(request: WriteApprovalRequest): Promise<Approval>;
  quarantinedRead(request: QuarantinedReadRequest): Promise<QuarantinedReadAnswer>;
  approveRun(request: RunApprovalRequest): Promise<RunAnswer>;
  approveReadOutput(request: ReadOutputRequest): Promise<Approval>;
  ask(question: Question): Promise<Answer>;
  firstUse(workspace: string): Promise<FirstUseAnswer>;
  /** A processor's remark: shown to the person, set apart, stored nowhere. */
  remark(text: string): void;
  /**
   * Something the person should know (a refusal, a decision in one-shot mode). A plain string
   * is raw text, which the screen escapes; a {@link ScreenText} was escaped where it was made
   * (an argv quoted by formatArgv) and is shown as it is (`shownOnScreen`).
   */
  notice(text: string | ScreenText): void;
  /**
   * A command the person approved, as it prints (docs/contract.md §15.3), whatever the planner is
   * shown: its output's head as it comes, then at the end how much was left out and the tail. Raw
   * bytes: the screen decodes, escapes and frames them. Absent where nobody watches.
   */
  runOutput?(event: RunOutputEvent): void;
}

export type RunOutputEvent =
  | { kind: "chunk"; stream: "stdout" | "stderr"; bytes: Uint8Array }
  | { kind: "end"; omitted: number; tail: Uint8Array };
