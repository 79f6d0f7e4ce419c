/**
 * The session transcript (`transcript.jsonl`): every message of the planner conversation,
 * appended as it happens, one JSON line each, so a session killed mid-turn (even `kill -9`)
 * resumes with nothing lost but the unfinished reply. Processor remarks are never written
 * here (docs/contract.md §10: stored nowhere).
 *
 * Lines:
 * - `{"type":"session","version":1,"id","workspace","started"}` — the first line;
 * - `{"type":"message","time","message":{…},"label":"(T,pub)"}` — a Chat Completions message;
 *   `label` is what it placed in the planner context (person's words and tool results); a tool
 *   result that is a run's output asserted for the planner (docs/contract.md §16.5) also carries
 *   `"asserted": {"ref","by","shape"}` — by the person, or the policy file and its shape;
 * - `{"type":"clear","time"}` — `/clear`: the conversation starts again, label back to `(T,pub)`;
 * - `{"type":"compact","time","message","keep","label","requests":{"kept","left_out"}}` — a
 *   summary replaces all but the last `keep` messages; the person's requests are kept beside it.
 */
import { z } from "zod";
import { JsonLineAppender, readJsonLines } from "./jsonfile.ts";
import { formatLabel, type Label, parseLabel } from "../util/label.ts";
import type { ChatMessage, ToolCall } from "../util/chat.ts";
import { plural } from "../util/plural.ts";

export const TRANSCRIPT_VERSION = 1;

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const messageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(toolCallSchema).optional(),
  }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string(), content: z.string() }),
]);

const recordSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("session"),
    version: z.number(),
    id: z.string(),
    workspace: z.string(),
    started: z.string(),
  }),
  z.object({
    type: z.literal("message"),
    time: z.string(),
    message: messageSchema,
    label: z.string().optional(),
    asserted: z.object({
      ref: z.string(),
      by: z.enum(["person", "policy-file"]),
      shape: z.string().nullable(),
    }).optional(),
  }),
  z.object({ type: z.literal("clear"), time: z.string() }),
  /** What was shown to the person and not the planner (docs/contract.md §15): never loaded back. */
  z.object({
    type: z.literal("shown"),
    time: z.string(),
    ref: z.string(),
    source: z.string(),
    label: z.string(),
    text: z.string(),
  }),
  /**
   * Compaction: `message` (a summary) replaces all but the last `keep` messages so far;
   * `requests`, the person's requests kept beside it as data (absent on lines written before).
   */
  z.object({
    type: z.literal("compact"),
    time: z.string(),
    message: messageSchema,
    keep: z.number().int().min(0),
    label: z.string().optional(),
    requests: z.object({ kept: z.array(z.string()), left_out: z.number().int().min(0) })
      .optional(),
  }),
]);

export type TranscriptRecord = z.infer<typeof recordSchema>;

/** Who asserted a tool result's bytes (a run's output shown by read_output). */
export type Asserted = { ref: string; by: "person" | "policy-file"; shape: string | null };

/**
 * The person's requests kept beside a summary: verbatim, oldest first, and how many older ones
 * were left out for room. The driver makes them (src/driver/compaction.ts); kept here as data.
 */
export interface KeptRequests {
  kept: string[];
  leftOut: number;
}

export interface SessionMeta {
  id: string;
  workspace: string;
  started: string;
}

/** Appends to one session's transcript; each call is written before it returns. */
export class TranscriptWriter {
  #file: JsonLineAppender | null;

  /** `path` null keeps nothing (tests that do not care). */
  constructor(readonly path: string | null) {
    this.#file = path === null ? null : new JsonLineAppender(path);
  }

  /** Lets the kept handle go (the session closes); a later line opens the file again. */
  close(): void {
    this.#file?.close();
  }

  async start(meta: SessionMeta): Promise<void> {
    await this.#write({ type: "session", version: TRANSCRIPT_VERSION, ...meta });
  }

  /** `asserted`: the result is a run's output asserted for the planner, and by whom. */
  async message(message: ChatMessage, placed?: Label, asserted?: Asserted): Promise<void> {
    await this.#write({
      type: "message",
      time: new Date().toISOString(),
      message,
      ...(placed ? { label: formatLabel(placed) } : {}),
      ...(asserted ? { asserted } : {}),
    });
  }

  async clear(): Promise<void> {
    await this.#write({ type: "clear", time: new Date().toISOString() });
  }

  /** Content shown to the person only: kept for them, never part of the conversation. */
  async shown(s: { ref: string; source: string; label: string; text: string }): Promise<void> {
    await this.#write({
      type: "shown",
      time: new Date().toISOString(),
      ref: s.ref,
      source: s.source,
      label: s.label,
      text: s.text,
    });
  }

  /**
   * The summary that replaced all but the last `keep` messages, with the person's requests kept
   * beside it; a resume restores both.
   */
  async compact(
    summary: ChatMessage,
    keep: number,
    placed: Label,
    requests: KeptRequests,
  ): Promise<void> {
    await this.#write({
      type: "compact",
      time: new Date().toISOString(),
      message: summary,
      keep,
      label: formatLabel(placed),
      requests: { kept: requests.kept, left_out: requests.leftOut },
    });
  }

  async #write(record: TranscriptRecord): Promise<void> {
    // Through a kept handle, re-opened when the path names another file (JsonLineAppender).
    if (this.#file) await this.#file.append(record);
  }
}

/**
 * What one line recorded of what it placed in the planner context, as it stands in the file: the
 * transcript says what is there and no more. What a line without a label, or with one that cannot
 * be read, counts as is the policy layer's to say (`storedLineLabel`, `policy/driver_labels.ts`).
 */
export interface StoredLine {
  /**
   * `message`: a message line; `summary`: a compaction's summary; `interrupted`: no line at all —
   * the result the loader wrote for a call the session never finished.
   */
  kind: "message" | "summary" | "interrupted";
  /** The label as the line recorded it: null when it recorded none, `"unreadable"` when it is no label. */
  label: Label | "unreadable" | null;
}

export interface LoadedTranscript {
  meta: SessionMeta | null;
  /** The conversation since the last `/clear`, repaired so it can be sent again. */
  messages: ChatMessage[];
  /**
   * What the line of each of `messages` recorded. The driver asks the egress rule about private
   * results again before sending them.
   */
  lines: StoredLine[];
  /**
   * Every line since the last `/clear` that may have placed something in the planner context, in
   * order, those a summary replaced included: the resumed context is what they placed.
   */
  contextLines: StoredLine[];
  /**
   * Set when `messages` opens with a compaction's summary: the person's requests kept beside it
   * (null on a line written before they were kept as data).
   */
  summary: { requests: KeptRequests | null } | null;
  /** Every message ever, across `/clear`s, for display. */
  history: ChatMessage[];
  /** Lines that were torn or did not fit, and repairs made; to show the person. */
  problems: string[];
}

export const INTERRUPTED_RESULT =
  "error: the session stopped before this call finished; it may or may not have taken effect. " +
  "Check before repeating it.";

/** A line's label as it recorded it: absent, unreadable, or a label. */
function recorded(text: string | undefined): Label | "unreadable" | null {
  if (text === undefined) return null;
  return parseLabel(text) ?? "unreadable";
}

/**
 * Loads a transcript. A torn last line (a kill mid-write) is dropped; an unfinished tool round
 * (calls without results) gets results saying so, since an endpoint refuses such a history.
 */
export async function loadTranscript(path: string): Promise<LoadedTranscript> {
  const { rows, problems } = await readJsonLines(path);
  let meta: SessionMeta | null = null;
  let messages: ChatMessage[] = [];
  let contextLines: StoredLine[] = [];
  const lineOf = new Map<ChatMessage, StoredLine>();
  let summary: LoadedTranscript["summary"] = null;
  const history: ChatMessage[] = [];
  rows.forEach((row, i) => {
    const parsed = recordSchema.safeParse(row);
    if (!parsed.success) {
      problems.push(`${path}: record ${i + 1} does not fit the transcript format (skipped)`);
      return;
    }
    const r = parsed.data;
    if (r.type === "session") meta = { id: r.id, workspace: r.workspace, started: r.started };
    else if (r.type === "clear") {
      messages = [];
      contextLines = [];
      summary = null;
    } else if (r.type === "shown") {
      // The person's alone: not part of what a resumed planner is sent.
    } else if (r.type === "compact") {
      // The full history stays in the file; the conversation goes on from the summary.
      const m = r.message as ChatMessage;
      messages = [m, ...messages.slice(Math.max(0, messages.length - r.keep))];
      summary = {
        requests: r.requests ? { kept: r.requests.kept, leftOut: r.requests.left_out } : null,
      };
      const line: StoredLine = { kind: "summary", label: recorded(r.label) };
      contextLines.push(line);
      lineOf.set(m, line);
    } else {
      const m = r.message as ChatMessage;
      messages.push(m);
      history.push(m);
      const line: StoredLine = { kind: "message", label: recorded(r.label) };
      contextLines.push(line);
      lineOf.set(m, line);
      if (line.label === "unreadable") {
        // The person is told what the policy layer makes of it (`storedLineLabel`).
        problems.push(`${path}: record ${i + 1} has an unreadable label; taken as (U,priv)`);
      }
    }
  });
  const repaired = repairToolRounds(messages);
  if (repaired.added) {
    problems.push(
      `${path}: ${
        plural(repaired.added, "tool call")
      } had no result (the session stopped mid-turn); ` +
        `${repaired.added === 1 ? "it was" : "they were"} marked as interrupted`,
    );
  }
  return {
    meta,
    messages: repaired.messages,
    lines: repaired.messages.map((m) =>
      lineOf.get(m) ?? { kind: repaired.made.has(m) ? "interrupted" : "message", label: null }
    ),
    summary,
    contextLines,
    history,
    problems,
  };
}

/** Gives every tool call a result and drops results that answer no call. */
export function repairToolRounds(
  messages: ChatMessage[],
): { messages: ChatMessage[]; added: number; made: Set<ChatMessage> } {
  const out: ChatMessage[] = [];
  /** The results written here (Brave Bot's own words). */
  const made = new Set<ChatMessage>();
  let added = 0;
  let open: ToolCall[] = [];
  const answered = new Set<string>();
  const closeRound = () => {
    for (const c of open) {
      if (!answered.has(c.id)) {
        const result: ChatMessage = {
          role: "tool",
          tool_call_id: c.id,
          content: INTERRUPTED_RESULT,
        };
        out.push(result);
        made.add(result);
        added++;
      }
    }
    open = [];
    answered.clear();
  };
  for (const m of messages) {
    if (m.role === "tool") {
      if (open.some((c) => c.id === m.tool_call_id) && !answered.has(m.tool_call_id)) {
        answered.add(m.tool_call_id);
        out.push(m);
      }
      continue;
    }
    closeRound();
    out.push(m);
    if (m.role === "assistant" && m.tool_calls?.length) open = [...m.tool_calls];
  }
  closeRound();
  return { messages: out, added, made };
}

/** How much of a transcript is read at a time when looking for its first message. */
const SCAN_BYTES = 64 * 1024;

/**
 * Whether the transcript at `path` holds a message: a session without one has nothing to go
 * on with, and its close may remove it (`session/open.ts`). Read at once (a close does not wait)
 * and only up to the first message, which in a session that has one is its second line. A line
 * that cannot be parsed is passed over, as the loader skips it; a file that cannot be read
 * counts as holding one, so that doubt keeps a session.
 */
export function transcriptHasMessage(path: string): boolean {
  try {
    using file = Deno.openSync(path, { read: true });
    const decoder = new TextDecoder();
    const chunk = new Uint8Array(SCAN_BYTES);
    let pending = "";
    for (;;) {
      const n = file.readSync(chunk);
      const text = n === null ? "" : decoder.decode(chunk.subarray(0, n), { stream: true });
      const lines = (pending + text).split("\n");
      pending = n === null ? "" : lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"message"')) continue;
        try {
          if (recordSchema.safeParse(JSON.parse(line)).data?.type === "message") return true;
        } catch { /* a torn or damaged line: the loader skips it too */ }
      }
      if (n === null) return false;
    }
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound);
  }
}
