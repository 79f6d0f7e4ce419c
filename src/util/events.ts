/**
 * What the driver reports as it works, as plain data: the driver and the session make these
 * events, one-shot's printer and the session screen's event view (src/person/) read them, and
 * neither side imports the other for it. One-shot's `stream-json` prints the types
 * docs/cli.md#output-formats names (`STREAM_JSON_TYPES`, src/driver/events.ts); the interactive
 * screen renders all of them. A `tool_result` carries exactly what the planner was shown.
 */

export type DriverEvent =
  /** A piece of the planner's text as it streams in (screens only). */
  | { type: "text_delta"; text: string }
  /** The planner's complete text of one reply. */
  | { type: "assistant_text"; text: string }
  /** A request to the planner is about to be sent (screens show a spinner until text comes). */
  | { type: "model_request"; turn: number }
  | {
    type: "tool_call";
    id: string;
    name: string;
    /** Parsed when the arguments were JSON, else the raw string. */
    arguments: unknown;
    /** True when the model wrote the call in its text instead of as a tool call. */
    from_text?: boolean;
  }
  | {
    type: "decision";
    tool: string;
    decision: string;
    by: string;
    reason?: string;
    routing: Record<string, unknown>;
    labels: Record<string, string>;
  }
  | {
    type: "tool_result";
    id: string;
    name: string;
    content: string;
    is_error: boolean;
    /** The label of what the result placed in the planner context. */
    label: string;
    /**
     * For the person: one short line saying what happened, ready for the screen (ToolOutput's
     * `summary`); absent when the tool gave none (an error: `content` says it).
     */
    summary?: string;
  }
  /** A processor's remark: for the person's screen only, stored nowhere. */
  | { type: "remark"; text: string }
  /**
   * A reference's content shown to the person, never to the planner (docs/contract.md §15.1):
   * `text` is the content itself (raw; screens escape it), `label` what it carries.
   */
  | {
    type: "shown";
    ref: string;
    kind: string;
    label: string;
    source: string;
    text: string;
    lines: number;
    omitted: number;
    /** A run's output asserted for the planner: by whom, in words (docs/contract.md §16.5). */
    asserted?: string;
  }
  /**
   * Something the person should know that is not an error (a retry, a capped reply). `once` is
   * what the notice is news of, for a notice that is made again while it still holds (a skill's
   * problem and the AGENTS.md note, found afresh at every turn's start): a screen says a notice
   * with the same `once` one time a session. A notice without it is a happening, said each time.
   */
  | {
    type: "notice";
    text: string;
    once?: string;
    /**
     * The notice is the newest state of something under way (a retry's wait), and stands for
     * the one before it with the same key: a terminal rewrites that line in place, a pipe gets
     * each (src/cli/one_shot.ts).
     */
    progress?: string;
  }
  /** The planner context's label changed. */
  | { type: "context_label"; label: string }
  | { type: "error"; message: string }
  | {
    type: "final";
    result: string;
    status: TurnStatus;
    turns: number;
    context_label: string;
  };

export type TurnStatus = "finished" | "max_turns" | "error" | "aborted";
