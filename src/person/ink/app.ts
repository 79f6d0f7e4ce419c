/**
 * The Ink component of the session screen: thin by design. It draws the {@link Screen} (finished
 * output in `<Static>`, the live area, the question or the input box, the queue, the status line)
 * and forwards keys and pastes to it; every rule lives in screen.ts and editor.ts.
 *
 * Every string drawn here was escaped by whoever put it on the screen (escapeForScreen); the
 * input box escapes what the person typed as it draws it. The markers of escaped text are styled
 * here, at the one place text reaches the terminal, after a last wall (forTerminal).
 */
import React from "react";
import { Box, type Key, Static, Text, useInput, usePaste } from "ink";
import pc from "picocolors";
import type { Question, Screen } from "./screen.ts";
import { escapeForScreen, guardTerminal } from "../../util/escape.ts";
import { styleMarkers } from "../../util/escape_style.ts";

/** What every Text is handed: the last wall (guardTerminal), then the markers styled. */
const forTerminal = (text: string): string => styleMarkers(guardTerminal(text));
import { completions, searchMatch } from "./editor.ts";
import type { KeyPress } from "./editor.ts";

const h = React.createElement;

/** Inverse video marks the cursor (not a colour: it shows with NO_COLOR too). */
function cursorAt(text: string, at: number): string {
  const ch = text[at];
  const under = ch === undefined || ch === "\n" ? " " : ch;
  return text.slice(0, at) + `\x1b[7m${under}\x1b[27m` + (ch === "\n" ? "\n" : "") +
    text.slice(at + 1);
}

/** The typed text as drawn: each line escaped (a tab as spaces), continuation lines indented. */
function drawInput(text: string, cursor: number): string {
  // Escape line by line, keeping the cursor's place: split at the cursor first.
  const line = (l: string) => escapeForScreen(l, true);
  const before = text.slice(0, cursor).split("\n").map(line).join("\n");
  const after = text.slice(cursor).split("\n").map(line).join("\n");
  return cursorAt(before + after, before.length).split("\n").join("\n  ");
}

function toKey(input: string, key: Key): KeyPress {
  return {
    input,
    return: key.return,
    shift: key.shift,
    ctrl: key.ctrl,
    meta: key.meta,
    escape: key.escape,
    tab: key.tab,
    backspace: key.backspace,
    delete: key.delete,
    upArrow: key.upArrow,
    downArrow: key.downArrow,
    leftArrow: key.leftArrow,
    rightArrow: key.rightArrow,
    home: key.home,
    end: key.end,
  };
}

function questionView(q: Question, note: string): React.ReactNode {
  const lines: string[] = [pc.bold(q.title)];
  if (q.kind === "keys") {
    // Where Enter answers, the choice it takes says so (always a safe one: screen.ts).
    const enter = (c: { value: string }) => c.value === q.enter ? pc.dim(" (Enter)") : "";
    lines.push(
      q.choices.map((c) => `${pc.bold(`[${c.key}]`)} ${c.label}${enter(c)}`).join("  "),
    );
  } else if (q.kind === "text") {
    lines.push(`> ${cursorAt(escapeForScreen(q.text), [...escapeForScreen(q.text)].length)}`);
  } else {
    q.options.forEach((o, i) => {
      const mark = q.marked ? (q.marked.has(i) ? "[x] " : "[ ] ") : "";
      lines.push(`${i === q.at ? pc.cyan("❯") : " "} ${mark}${o}`);
    });
  }
  if (note) lines.push(pc.yellow(note));
  return h(Text, null, forTerminal(lines.join("\n")));
}

export function App({ screen }: { screen: Screen }): React.ReactNode {
  React.useSyncExternalStore(screen.subscribe, screen.version);
  useInput((input, key) => screen.key(toKey(input, key)));
  usePaste((text) => screen.paste(text));
  // After each render: a question drawn starts its short time of taking no keys from now.
  React.useEffect(() => screen.questionDrawn());
  return h(
    Box,
    { flexDirection: "column" },
    h(Static, {
      key: "static",
      items: screen.items,
      children: (item: { id: number; text: string }) =>
        h(Text, { key: item.id }, forTerminal(item.text)),
    }),
    // Once closed, only the finished output is drawn (screen.ts).
    screen.closed ? null : h(Frame, { key: "frame", screen }),
  );
}

/**
 * The live frame under the finished output: what is streaming or running, the question or the
 * input box, the queue and the status line. Drawn by itself too, to know how many rows the
 * terminal gave it at a width (mod.ts, on a resize).
 */
export function Frame({ screen }: { screen: Screen }): React.ReactNode {
  const e = screen.editor;
  const parts: React.ReactNode[] = [];
  if (screen.streaming.length > 0) {
    parts.push(h(Text, { key: "streaming" }, forTerminal(screen.streaming.join("\n"))));
  }
  if (screen.live.length > 0) {
    parts.push(h(Text, { key: "live" }, forTerminal(screen.live.join("\n"))));
  }
  if (screen.progress.length > 0) {
    parts.push(h(Text, { key: "progress" }, forTerminal(screen.progress.join("\n"))));
  }
  if (screen.activity && !screen.question) {
    parts.push(h(Text, { key: "activity" }, forTerminal(pc.dim(screen.activity))));
  }
  if (screen.question) {
    parts.push(h(Box, { key: "q" }, questionView(screen.question, screen.questionNote)));
  } else {
    for (const [i, q] of screen.queued.entries()) {
      parts.push(
        h(Text, { key: `queued${i}` }, forTerminal(pc.dim(`queued: ${escapeForScreen(q)}`))),
      );
    }
    if (e.search !== null) {
      const found = searchMatch(e);
      parts.push(
        h(
          Text,
          { key: "input" },
          forTerminal(
            `(history search) ${escapeForScreen(e.search)}: ${
              found === null ? pc.dim("no match") : escapeForScreen(found)
            }`,
          ),
        ),
      );
    } else {
      parts.push(
        h(
          Text,
          { key: "input" },
          forTerminal(`${screen.promptLabel} ${drawInput(e.text, e.cursor)}`),
        ),
      );
      const offered = completions(e, screen.commands);
      if (offered.length > 1) {
        parts.push(
          h(Text, { key: "tab" }, forTerminal(pc.dim(offered.map((c) => `/${c}`).join("  ")))),
        );
      }
    }
  }
  if (screen.status) parts.push(h(Text, { key: "status" }, forTerminal(pc.dim(screen.status))));
  return h(Box, { flexDirection: "column" }, ...parts);
}
