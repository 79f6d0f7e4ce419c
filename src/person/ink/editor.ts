/**
 * The session's input box as a pure function: a key (or a paste) and the state before give the
 * state after and what the session should do. No terminal, no React: every editing rule is
 * here and unit-tested (editor_test.ts); the Ink component only forwards keys and draws.
 */

/** A key press, as the screen reports it (a subset of Ink's `Key`, plus the typed text). */
export interface KeyPress {
  input: string;
  return?: boolean;
  shift?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  escape?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  home?: boolean;
  end?: boolean;
}

export interface EditorState {
  text: string;
  /** Cursor position in UTF-16 units of `text`. */
  cursor: number;
  /** Past messages, oldest first. */
  history: readonly string[];
  /** Which history entry is shown (history.length: none, the draft). */
  historyAt: number;
  /** What was typed before Up was first pressed, given back by Down past the newest entry. */
  draft: string;
  /** Ctrl+R: the search text, or null when not searching. */
  search: string | null;
  /** When Ctrl-C was pressed once on an empty line (ms): one more within {@link EXIT_WINDOW_MS} leaves. */
  ctrlC: number | null;
  /**
   * Large pastes shown collapsed: each stands in `text` as its `mark` (`[pasted 600 lines]`)
   * and is put back, whole, when the message is sent.
   */
  pastes: readonly { mark: string; text: string }[];
}

/** How soon a second Ctrl-C must follow the first to leave (later, it is a first one again). */
export const EXIT_WINDOW_MS = 2_000;

/** A paste of more lines than this is shown as one mark in the input box (and sent whole). */
export const COLLAPSE_LINES = 10;

export type EditorAction =
  | { kind: "none" }
  /** `shown`: the message as the input box showed it, when a paste in it was collapsed. */
  | { kind: "submit"; text: string; shown?: string }
  /** Esc: stop the turn that runs (nothing when none does). */
  | { kind: "interrupt" }
  /** Ctrl-C: stop the turn and any command (or, idle on an empty line, the first of two). */
  | { kind: "stop" }
  | { kind: "exit" }
  | { kind: "clear-screen" }
  /** Ctrl-C once on an empty line: say that a second one leaves. */
  | { kind: "hint-exit" };

export interface KeyContext {
  /** Whether a turn (or a command) runs now: Ctrl-C and Esc stop it instead of editing. */
  busy: boolean;
  /** Names for Tab completion of `/commands` (without the slash). */
  commands: readonly string[];
  /** The time now (ms), for the second Ctrl-C's window; the screen's clock. */
  now?: number;
}

export function emptyEditor(history: readonly string[] = []): EditorState {
  return {
    text: "",
    cursor: 0,
    history,
    historyAt: history.length,
    draft: "",
    search: null,
    ctrlC: null,
    pastes: [],
  };
}

const none = { kind: "none" } as const;

function insert(s: EditorState, text: string): EditorState {
  return {
    ...s,
    text: s.text.slice(0, s.cursor) + text + s.text.slice(s.cursor),
    cursor: s.cursor + text.length,
    ctrlC: null,
  };
}

/**
 * Pasted text goes in as text, line breaks and tabs and all; it never submits. A paste of more
 * than {@link COLLAPSE_LINES} lines is shown as one mark, and the message sent holds it whole.
 */
export function paste(s: EditorState, text: string): EditorState {
  const clean = text.replace(/\r\n?/g, "\n");
  const lines = clean.replace(/\n$/, "").split("\n").length;
  if (lines <= COLLAPSE_LINES) return insert({ ...s, search: null }, clean);
  const base = `pasted ${lines} lines`;
  const taken = (mark: string) => s.pastes.some((p) => p.mark === mark) || s.text.includes(mark);
  let mark = `[${base}]`;
  for (let n = 2; taken(mark); n++) mark = `[${base} #${n}]`;
  return { ...insert({ ...s, search: null }, mark), pastes: [...s.pastes, { mark, text: clean }] };
}

/** The message as sent: each collapsed paste's mark (the first of each) back to its text. */
export function expandPastes(s: Pick<EditorState, "text" | "pastes">): string {
  let text = s.text;
  for (const p of s.pastes) {
    const at = text.indexOf(p.mark);
    if (at >= 0) text = text.slice(0, at) + p.text + text.slice(at + p.mark.length);
  }
  return text;
}

/** The newest history entry holding `query`, at or before `from`. */
function searchBack(history: readonly string[], query: string, from: number): number {
  for (let i = Math.min(from, history.length - 1); i >= 0; i--) {
    if (history[i].includes(query)) return i;
  }
  return -1;
}

/** The history entry that the Ctrl+R search now shows, or null. */
export function searchMatch(s: EditorState): string | null {
  if (s.search === null || s.search === "") return null;
  const at = searchBack(s.history, s.search, s.historyAt);
  return at < 0 ? null : s.history[at];
}

function lineStart(text: string, cursor: number): number {
  return text.lastIndexOf("\n", cursor - 1) + 1;
}

function lineEnd(text: string, cursor: number): number {
  const i = text.indexOf("\n", cursor);
  return i < 0 ? text.length : i;
}

function recall(s: EditorState, at: number): EditorState {
  const text = at === s.history.length ? s.draft : s.history[at];
  return { ...s, historyAt: at, text, cursor: text.length };
}

/** What Enter does: submit, unless the line ends in `\`, which becomes a line break. */
function enter(s: EditorState): [EditorState, EditorAction] {
  if (s.text.slice(0, s.cursor).endsWith("\\")) {
    const text = s.text.slice(0, s.cursor - 1) + "\n" + s.text.slice(s.cursor);
    return [{ ...s, text, cursor: s.cursor }, none];
  }
  const text = expandPastes(s);
  if (text.trim() === "") return [{ ...s, text: "", cursor: 0, pastes: [] }, none];
  const history = s.history.at(-1) === text ? s.history : [...s.history, text];
  const shown = s.text === text ? undefined : s.text;
  return [{ ...emptyEditor(history) }, { kind: "submit", text, ...(shown ? { shown } : {}) }];
}

function complete(s: EditorState, commands: readonly string[]): EditorState {
  const m = /^\/(\S*)$/.exec(s.text);
  if (!m || s.cursor !== s.text.length) return s;
  const matches = commands.filter((c) => c.startsWith(m[1]));
  if (matches.length === 0) return s;
  let common = matches[0];
  for (const c of matches) while (!c.startsWith(common)) common = common.slice(0, -1);
  const text = `/${common}${matches.length === 1 ? " " : ""}`;
  return { ...s, text, cursor: text.length };
}

/** The Tab completions on offer for what is typed (empty unless it is a lone `/word`). */
export function completions(s: EditorState, commands: readonly string[]): string[] {
  const m = /^\/(\S*)$/.exec(s.text);
  return m ? commands.filter((c) => c.startsWith(m[1])) : [];
}

function searchKey(s: EditorState, k: KeyPress): [EditorState, EditorAction] {
  const query = s.search ?? "";
  if (k.ctrl && k.input === "r") {
    const current = searchBack(s.history, query, s.historyAt);
    const at = current < 0 ? -1 : searchBack(s.history, query, current - 1);
    return [{ ...s, historyAt: at < 0 ? s.historyAt : at }, none];
  }
  if (k.ctrl && (k.input === "c" || k.input === "g")) {
    return [{ ...s, search: null, historyAt: s.history.length }, none];
  }
  if (k.escape) {
    // Esc ends the search keeping what it found, to edit before sending (Ctrl-G: as it was).
    const text = searchMatch(s) ?? s.text;
    return [{ ...s, search: null, text, cursor: text.length, historyAt: s.history.length }, none];
  }
  if (k.backspace || k.delete) return [{ ...s, search: query.slice(0, -1) }, none];
  const found = searchMatch(s);
  if (k.return || k.tab || k.leftArrow || k.rightArrow || k.upArrow || k.downArrow) {
    const text = found ?? s.text;
    const after = { ...s, search: null, text, cursor: text.length, historyAt: s.history.length };
    return k.return ? enter(after) : [after, none];
  }
  if (k.input && !k.ctrl && !k.meta) {
    const next = { ...s, search: query + k.input, historyAt: s.history.length };
    return [next, none];
  }
  return [s, none];
}

/** One key: the state after and what the session should do. */
export function applyKey(
  s: EditorState,
  k: KeyPress,
  ctx: KeyContext,
): [EditorState, EditorAction] {
  if (s.search !== null) return searchKey(s, k);
  if (k.ctrl && k.input === "c") {
    if (ctx.busy) return [{ ...s, ctrlC: null }, { kind: "stop" }];
    if (s.text !== "") return [{ ...s, text: "", cursor: 0, ctrlC: null, pastes: [] }, none];
    const now = ctx.now ?? Date.now();
    if (s.ctrlC !== null && now - s.ctrlC <= EXIT_WINDOW_MS) return [s, { kind: "exit" }];
    return [{ ...s, ctrlC: now }, { kind: "hint-exit" }];
  }
  const state = { ...s, ctrlC: null };
  if (k.escape) return [state, ctx.busy ? { kind: "interrupt" } : none];
  if (k.ctrl && k.input === "d") {
    if (s.text === "") return [state, { kind: "exit" }];
    return [{ ...state, text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1) }, none];
  }
  if (k.ctrl && k.input === "l") return [state, { kind: "clear-screen" }];
  if (k.ctrl && k.input === "r") return [{ ...state, search: "" }, none];
  if (k.return && (k.shift || k.meta)) return [insert(state, "\n"), none];
  if (k.input === "\n" && !k.return) return [insert(state, "\n"), none];
  if (k.return) return enter(state);
  if (k.tab) return [complete(state, ctx.commands), none];
  const { text, cursor } = state;
  const edited = wordKey(state, k);
  if (edited) return [edited, none];
  if (k.backspace) {
    if (cursor === 0) return [state, none];
    // A collapsed paste's mark goes whole, and its text with it.
    const mark = state.pastes.find((p) => text.slice(0, cursor).endsWith(p.mark));
    if (mark) {
      const at = cursor - mark.mark.length;
      return [{
        ...state,
        text: text.slice(0, at) + text.slice(cursor),
        cursor: at,
        pastes: state.pastes.filter((p) => p !== mark),
      }, none];
    }
    const cut = cursor >= 2 && /[\uDC00-\uDFFF]/.test(text[cursor - 1]) &&
        /[\uD800-\uDBFF]/.test(text[cursor - 2])
      ? 2
      : 1;
    return [{
      ...state,
      text: text.slice(0, cursor - cut) + text.slice(cursor),
      cursor: cursor - cut,
    }, none];
  }
  if (k.delete) {
    return [{ ...state, text: text.slice(0, cursor) + text.slice(cursor + 1) }, none];
  }
  if (k.leftArrow) return [{ ...state, cursor: Math.max(0, cursor - 1) }, none];
  if (k.rightArrow) return [{ ...state, cursor: Math.min(text.length, cursor + 1) }, none];
  if (k.home || (k.ctrl && k.input === "a")) {
    return [{ ...state, cursor: lineStart(text, cursor) }, none];
  }
  if (k.end || (k.ctrl && k.input === "e")) {
    return [{ ...state, cursor: lineEnd(text, cursor) }, none];
  }
  if (k.ctrl && k.input === "u") {
    const start = lineStart(text, cursor);
    return [{ ...state, text: text.slice(0, start) + text.slice(cursor), cursor: start }, none];
  }
  if (k.upArrow) {
    // Up moves within a multi-line text first; on its first line it recalls history.
    const start = lineStart(text, cursor);
    if (start > 0) {
      const col = cursor - start;
      const prevStart = lineStart(text, start - 1);
      return [{ ...state, cursor: Math.min(prevStart + col, start - 1) }, none];
    }
    if (state.historyAt === 0) return [state, none];
    const draft = state.historyAt === state.history.length ? text : state.draft;
    return [recall({ ...state, draft }, state.historyAt - 1), none];
  }
  if (k.downArrow) {
    const end = lineEnd(text, cursor);
    if (end < text.length) {
      const col = cursor - lineStart(text, cursor);
      return [{ ...state, cursor: Math.min(end + 1 + col, lineEnd(text, end + 1)) }, none];
    }
    if (state.historyAt >= state.history.length) return [state, none];
    return [recall(state, state.historyAt + 1), none];
  }
  if (k.ctrl || k.meta || k.input === "") return [state, none];
  return typed(state, k.input, ctx);
}

/** Where the word before `cursor` starts: spaces skipped, then up to a space (or a non-word). */
function wordBack(text: string, cursor: number, word: RegExp): number {
  let i = cursor;
  while (i > 0 && !word.test(text[i - 1])) i--;
  while (i > 0 && word.test(text[i - 1])) i--;
  return i;
}

/** Where the word after `cursor` ends. */
function wordForward(text: string, cursor: number, word: RegExp): number {
  let i = cursor;
  while (i < text.length && !word.test(text[i])) i++;
  while (i < text.length && word.test(text[i])) i++;
  return i;
}

/** Not a space: Ctrl-W's words, as in a shell. */
const SHELL_WORD = /\S/;
/** Letters and digits: Alt's words, as in readline. */
const ALNUM_WORD = /[\p{L}\p{N}_]/u;

/** The word and line keys: Ctrl-W, Alt-Backspace, Alt-B, Alt-F, Ctrl-K; null for any other. */
function wordKey(s: EditorState, k: KeyPress): EditorState | null {
  const { text, cursor } = s;
  const cut = (from: number) => ({
    ...s,
    text: text.slice(0, from) + text.slice(cursor),
    cursor: from,
  });
  if (k.ctrl && k.input === "w") return cut(wordBack(text, cursor, SHELL_WORD));
  if (k.meta && (k.backspace || k.delete) && !k.ctrl) {
    return cut(wordBack(text, cursor, ALNUM_WORD));
  }
  if (k.meta && !k.ctrl && (k.input === "b" || k.leftArrow)) {
    return { ...s, cursor: wordBack(text, cursor, ALNUM_WORD) };
  }
  if (k.meta && !k.ctrl && (k.input === "f" || k.rightArrow)) {
    return { ...s, cursor: wordForward(text, cursor, ALNUM_WORD) };
  }
  if (k.ctrl && k.input === "k") {
    return { ...s, text: text.slice(0, cursor) + text.slice(lineEnd(text, cursor)) };
  }
  return null;
}

/** A control character's key (0x01 is Ctrl-A, 0x17 Ctrl-W…), as a terminal sends it. */
function controlKey(ch: string): KeyPress {
  return { input: String.fromCharCode(ch.charCodeAt(0) + 96), ctrl: true };
}

/**
 * Typed text. Several characters in one read are fast typing, keys typed before the screen was
 * up, or a paste from a terminal that does not bracket pastes: a single trailing Enter submits;
 * text over several lines is inserted whole (a paste is never sent line by line).
 */
function typed(s: EditorState, input: string, ctx: KeyContext): [EditorState, EditorAction] {
  // Keys in the chunk (Ctrl-U then text) are each taken in turn, as if they came one by one.
  // deno-lint-ignore no-control-regex
  const keyAt = input.search(/[\u0001-\u0008\u000b\u000c\u000e-\u001a]/);
  if (keyAt >= 0 && input.length > 1) {
    let state = s;
    let action: EditorAction = none;
    for (const part of [input.slice(0, keyAt), input[keyAt], input.slice(keyAt + 1)]) {
      if (part === "" || action.kind !== "none") continue;
      const key = part.length === 1 && part < " " ? controlKey(part) : { input: part };
      [state, action] = applyKey(state, key, ctx);
    }
    return [state, action];
  }
  // In a chunk, a line feed is an Enter too: keys typed before the screen took the terminal out
  // of line mode arrive with Enter turned into a line feed (only a lone Ctrl+J is a new line).
  const clean = input.replace(/\r\n|\n/g, "\r");
  const body = clean.endsWith("\r") ? clean.slice(0, -1) : clean;
  if (!body.includes("\r") && !body.includes("\n")) {
    const next = insert(s, strip(body));
    return clean.endsWith("\r") ? enter(next) : [next, none];
  }
  return [insert(s, strip(clean.replace(/\r/g, "\n"))), none];
}

/** Control characters typed (not Tab or line breaks) are dropped: they are keys, not text. */
function strip(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}
