/**
 * The Person at the session screen (docs/contract.md §6, §8.1, §12.1): every question is shown in
 * full — the real destination and a diff, every stage's escaped argv and resolved program, the
 * first lines of a quarantined file — and answered with one key. Enter alone never approves (it
 * takes the safe answer, or does nothing); Esc refuses; Ctrl-C takes the safe answer and stops the
 * turn. Keys typed before a question appeared and pastes never answer it (screen.ts).
 */
import pc from "picocolors";
import stringWidth from "string-width";
import { formatLabel } from "../../util/label.ts";
import { FOREIGN_TREES } from "../../policy/trust_map.ts";
import { escapeForScreen, formatArgv, type ScreenText, shownOnScreen } from "../../util/escape.ts";
import { styleMarkers } from "../../util/escape_style.ts";
import { plural } from "../../util/plural.ts";
import { renderDiff } from "../diff_view.ts";
import { marginRows } from "../text_layout.ts";
import type {
  Answer,
  Approval,
  FirstUseAnswer,
  Person,
  QuarantinedReadAnswer,
  QuarantinedReadRequest,
  Question,
  ReadOutputRequest,
  RunAnswer,
  RunApprovalRequest,
  RunOutputEvent,
  WriteApprovalRequest,
} from "../person.ts";
import type { Choice, Screen } from "./screen.ts";

export interface InkPersonOptions {
  /** The terminal's width now (diffs are wrapped to it). */
  width: () => number;
  /** Lines of a preview shown before the person must ask to see the rest. */
  previewLines?: number;
}

/** Lines of a running command's output kept in the live area (the rest is printed at the end). */
const LIVE_OUTPUT_LINES = 8;

export class InkPerson implements Person {
  readonly interactive = true;
  readonly decider = "person" as const;
  readonly #s: Screen;
  readonly #o: InkPersonOptions;
  readonly #previewLines: number;

  constructor(screen: Screen, options: InkPersonOptions) {
    this.#s = screen;
    this.#o = options;
    this.#previewLines = options.previewLines ?? 200;
  }

  #line(text = ""): void {
    this.#s.print(text);
  }

  /** A question's heading: a rule across the terminal (one column short of it, so no wrap). */
  #rule(title: string): void {
    const rest = this.#o.width() - 1 - stringWidth(`── ${title} `);
    this.#line("\n" + pc.bold(`── ${title} `) + pc.dim("─".repeat(Math.max(3, rest))));
  }

  #interrupted(): void {
    this.#line(pc.yellow("(interrupted: taking the safe answer and stopping the turn)"));
  }

  /** One key from `choices`; Esc gives `escape`, Ctrl-C `interrupt` (and stops the turn). */
  #keys(
    title: string,
    choices: Choice<string>[],
    safe: { enter?: string; escape: string; interrupt?: string },
  ): Promise<string> {
    return new Promise((resolve) => {
      const interrupt = safe.interrupt ?? safe.escape;
      this.#s.ask({
        kind: "keys",
        title,
        choices,
        enter: safe.enter,
        escape: safe.escape,
        interrupt,
        resolve: (v, interrupted) => {
          if (interrupted) {
            this.#interrupted();
            resolve(v);
            return;
          }
          // What was answered stays on the screen, under the question (going back: the question
          // before it, asked again, says it).
          const chosen = choices.find((c) => c.value === v);
          if (chosen || v !== "back") {
            this.#line(pc.dim(`${title} ${chosen ? `${chosen.key}: ${chosen.label}` : v}`));
          }
          resolve(v);
        },
      });
    });
  }

  /** One line of text; null when refused with Esc or Ctrl-C. */
  #text(title: string): Promise<string | null> {
    return new Promise((resolve) => {
      this.#s.ask({
        kind: "text",
        title,
        text: "",
        resolve: (v, interrupted) => {
          if (interrupted) this.#interrupted();
          resolve(v);
        },
      });
    });
  }

  /** A pick; null when refused (Esc, or Ctrl-C), or "back" for Esc when `back` is set. */
  #pick(
    title: string,
    options: string[],
    o: { multiple?: boolean; digitBase: number; at?: number; back: true },
  ): Promise<number[] | null | "back">;
  #pick(
    title: string,
    options: string[],
    o: { multiple?: boolean; digitBase: number; at?: number },
  ): Promise<number[] | null>;
  #pick(
    title: string,
    options: string[],
    o: { multiple?: boolean; digitBase: number; at?: number; back?: boolean },
  ): Promise<number[] | null | "back"> {
    return new Promise((resolve) => {
      this.#s.ask({
        kind: "pick",
        title,
        options,
        at: o.at ?? -1,
        digitBase: o.digitBase,
        marked: o.multiple ? new Set() : null,
        resolve: (v, interrupted) => {
          if (interrupted) this.#interrupted();
          resolve(v === null && o.back && !interrupted ? "back" : v);
        },
      });
    });
  }

  /** Shows lines, the first `previewLines` of them; returns whether some were held back. */
  #showLines(lines: readonly string[], from: number, all: boolean): boolean {
    const end = all ? lines.length : Math.min(lines.length, this.#previewLines);
    if (end > from) this.#line(lines.slice(from, end).join("\n"));
    const rest = lines.length - end;
    if (rest > 0) this.#line(pc.yellow(`… ${plural(rest, "more line")} not shown yet`));
    return rest > 0;
  }

  async #approveOrRefuse(
    title: string,
    lines: readonly string[],
    approveName: string,
  ): Promise<Approval> {
    let held = this.#showLines(lines, 0, false);
    while (true) {
      const answer = await this.#keys(title, [
        { key: "y", label: approveName, value: "yes" },
        { key: "n", label: "refuse", value: "no" },
        { key: "r", label: "refuse with a reason", value: "why" },
        ...(held
          ? [{ key: "a", label: `show all ${plural(lines.length, "line")}`, value: "all" }]
          : []),
      ], { enter: "no", escape: "no" });
      if (answer === "all") {
        held = this.#showLines(lines, this.#previewLines, true);
        continue;
      }
      if (answer === "yes" && held) {
        // Approving what was not shown takes a second, deliberate key.
        const unseen = lines.length - this.#previewLines;
        const sure = await this.#keys(`${plural(unseen, "line")} not shown: approve unseen?`, [
          { key: "y", label: `${approveName}, unseen`, value: "yes" },
          { key: "a", label: "show them first", value: "all" },
          { key: "n", label: "refuse", value: "no" },
        ], { enter: "no", escape: "no" });
        if (sure === "all") {
          held = this.#showLines(lines, this.#previewLines, true);
          continue;
        }
        return sure === "yes" ? { approved: true } : { approved: false };
      }
      if (answer === "yes") return { approved: true };
      if (answer === "why") return { approved: false, reason: await this.#reason() };
      return { approved: false };
    }
  }

  async #reason(): Promise<string | undefined> {
    const text = await this.#text("Reason (goes back to the planner; empty for none):");
    return text === null || text.trim() === "" ? undefined : text.trim();
  }

  /**
   * One question the person's own command asks (`/undo`): `lines` shown as an approval shows
   * them, then one key; anything but yes is no.
   */
  async confirm(title: string, lines: readonly string[], yes: string): Promise<boolean> {
    this.#rule(yes);
    return (await this.#approveOrRefuse(title, lines, yes)).approved;
  }

  approveWrite(r: WriteApprovalRequest): Promise<Approval> {
    this.#rule(r.tool === "write_file" ? "write a file" : "edit a file");
    this.#line(
      `${pc.bold("destination:")} ${escapeForScreen(r.path)}${r.isNew ? " (new file)" : ""}`,
    );
    if (r.viaRef) {
      this.#line(
        pc.yellow("the planner named this file only by a reference; it was never shown this name"),
      );
    }
    this.#line(`${pc.bold("content label:")} ${formatLabel(r.label)}`);
    const lines = renderDiff(r.preview, this.#o.width(), { color: pc.isColorSupported });
    return this.#approveOrRefuse(
      r.tool === "write_file" ? `Write ${escapeForScreen(r.path)}?` : "Apply this edit?",
      lines,
      r.tool === "write_file" ? "write it" : "apply it",
    );
  }

  async quarantinedRead(r: QuarantinedReadRequest): Promise<QuarantinedReadAnswer> {
    this.#rule("read an untrusted file");
    this.#line(
      `${pc.bold("file:")} ${escapeForScreen(r.path)} (${plural(r.size, "byte")}, ${
        formatLabel(r.label)
      })`,
    );
    this.#line(pc.dim("first lines (escaped):"));
    // Wrapped here, not by Ink, so that a wrapped row keeps its margin too.
    const preview = marginRows(r.preview, this.#o.width(), 2, (row) => pc.dim("│ ") + row);
    if (preview.length > 0) this.#line(preview.join("\n"));
    const answer = await this.#keys(
      "The planner asks to read it. What should it get?",
      [
        { key: "v", label: "vouch: trust these bytes, it gets the lines", value: "vouch" },
        { key: "k", label: "keep quarantined: it gets a reference", value: "keep" },
        {
          key: "s",
          label: "show as untrusted: it gets the lines, its context becomes U",
          value: "untrusted",
        },
      ],
      { enter: "keep", escape: "keep" },
    );
    return answer as QuarantinedReadAnswer;
  }

  async approveRun(r: RunApprovalRequest): Promise<RunAnswer> {
    this.#rule("run a command");
    if (r.why) this.#line(pc.yellow(escapeForScreen(r.why)));
    r.stages.forEach((stage, i) => {
      this.#line(
        `${pc.bold(r.stages.length > 1 ? `stage ${i + 1}:` : "command:")} ${r.display[i] ?? ""}\n` +
          pc.dim(`  program: ${escapeForScreen(stage.resolved)}`),
      );
    });
    if (r.stdin) this.#line(`${pc.bold("stdin:")} ${r.stdin.ref} ${formatLabel(r.stdin.label)}`);
    for (const warning of r.warnings) this.#line(pc.yellow(`note: ${escapeForScreen(warning)}`));
    this.#line(
      r.confinement.confined
        ? pc.dim(
          `runs confined by bwrap: ${
            escapeForScreen(r.confinement.detail ?? "the workspace and scratch writable")
          }`,
        )
        : pc.yellow(`runs unconfined: ${escapeForScreen(r.confinement.why)}`),
    );
    const single = r.stages.length === 1 ? r.stages[0] : null;
    // Esc in the vouch questions goes back a step (Ctrl-C still refuses and stops the turn).
    let step: "run" | "how" | "prefix" | "stages" = "run";
    while (true) {
      if (step === "run") {
        const answer = await this.#keys("Run it?", [
          { key: "y", label: "run once", value: "once" },
          ...(r.confinement.confined
            ? [{ key: "u", label: "once, unconfined", value: "unconfined" }]
            : []),
          { key: "v", label: "vouch…", value: "vouch" },
          { key: "n", label: "refuse", value: "refuse" },
          { key: "r", label: "refuse with a reason", value: "why" },
        ], { enter: "refuse", escape: "refuse" });
        if (answer === "once") return { answer: "once" };
        if (answer === "unconfined") return { answer: "once", unconfined: true };
        if (answer === "why") return { answer: "refuse", reason: await this.#reason() };
        if (answer !== "vouch") return { answer: "refuse" };
        step = "how";
        continue;
      }
      if (step === "how") {
        const how = await this.#keys("Vouch for what? (Esc: back)", [
          {
            key: "e",
            label: single ? "exactly this command" : "exactly this pipeline, as a whole",
            value: "exact",
          },
          ...(single && single.args.length > 0
            ? [{ key: "p", label: "a prefix of it (choose how much)", value: "prefix" }]
            : []),
          ...(single ? [] : [{ key: "s", label: "each stage by a prefix", value: "stages" }]),
          { key: "n", label: "refuse", value: "refuse" },
        ], { escape: "back", interrupt: "refuse" });
        if (how === "exact") return { answer: "vouch" };
        if (how === "back") step = "run";
        else if (how === "prefix" && single) step = "prefix";
        else if (how === "stages" && !single) step = "stages";
        else return { answer: "refuse" };
        continue;
      }
      if (step === "stages") {
        const prefixes = await this.#stagePrefixes(r);
        if (prefixes === "back") {
          step = "how";
          continue;
        }
        if (prefixes === null) return { answer: "refuse" };
        return { answer: "vouch", stagePrefixes: prefixes };
      }
      const n = await this.#pick(
        "Vouch for which prefix? Any arguments may follow it (digit or arrows, then Enter; Esc: back)",
        prefixOptions(single!, false),
        { digitBase: 0, back: true },
      );
      if (n === "back") {
        step = "how";
        continue;
      }
      if (n === null) return { answer: "refuse" };
      return { answer: "vouch", prefixArgs: n[0] };
    }
  }

  /**
   * A pipeline's stages vouched one by one (docs/contract.md §8): each stage's prefix picked in
   * turn, each to be a vouch of its own. Esc goes back a stage (from the first: "back"); null
   * refuses (Ctrl-C).
   */
  async #stagePrefixes(r: RunApprovalRequest): Promise<number[] | null | "back"> {
    this.#line(
      pc.yellow(
        "each stage is vouched on its own: its prefix covers that program alone and in any pipeline",
      ),
    );
    const picked: number[] = [];
    let i = 0;
    while (i < r.stages.length) {
      const stage = r.stages[i];
      this.#line(`${pc.bold(`stage ${i + 1}:`)} ${r.display[i] ?? ""}`);
      const warning = r.stageWarnings[i];
      if (warning) this.#line(pc.yellow(`note: ${escapeForScreen(warning)}`));
      const n = await this.#pick(
        `Stage ${i + 1} of ${r.stages.length}: vouch for which prefix? Any arguments may follow ` +
          "it (digit or arrows, then Enter; Esc: back)",
        prefixOptions(stage, true),
        { digitBase: 0, back: true },
      );
      if (n === null) return null;
      if (n === "back") {
        if (i === 0) return "back";
        picked.pop();
        i--;
        continue;
      }
      picked.push(n[0]);
      this.#line(pc.dim(`stage ${i + 1} by the prefix ${prefixText(stage, n[0])}`));
      i++;
    }
    return picked;
  }

  #decoders = new Map<"stdout" | "stderr", TextDecoder>();
  #pending = "";
  #shown: string[] = [];

  /** An approved command's output as it prints: a live tail, then all of it printed for good. */
  runOutput(event: RunOutputEvent): void {
    if (event.kind === "chunk") {
      // One decoder a stream: a character split across chunks of stdout is not joined with
      // bytes of stderr.
      let decoder = this.#decoders.get(event.stream);
      if (!decoder) this.#decoders.set(event.stream, decoder = new TextDecoder());
      this.#pending += decoder.decode(event.bytes, { stream: true });
      const lines = this.#pending.split("\n");
      this.#pending = lines.pop() ?? "";
      this.#shown.push(...lines.map((l) => pc.dim(`│ ${escapeForScreen(l)}`)));
      // The elapsed time is on the session's activity line, under this.
      this.#s.setLive([
        ...this.#shown.slice(-LIVE_OUTPUT_LINES),
        ...(this.#pending ? [pc.dim(`│ ${escapeForScreen(this.#pending)}`)] : []),
      ]);
      return;
    }
    // A character cut at the end shows as U+FFFD rather than vanishing.
    for (const d of this.#decoders.values()) this.#pending += d.decode();
    if (this.#pending) this.#shown.push(pc.dim(`│ ${escapeForScreen(this.#pending)}`));
    if (event.omitted > 0) {
      this.#shown.push(
        pc.dim(
          `│ … ${plural(event.omitted, "byte")} not shown here (the whole output is a reference) …`,
        ),
      );
      const tail = new TextDecoder().decode(event.tail);
      for (const line of tail.split("\n").slice(-20)) {
        if (line !== "") this.#shown.push(pc.dim(`│ ${escapeForScreen(line)}`));
      }
    }
    this.#s.setLive([]);
    if (this.#shown.length > 0) this.#line(this.#shown.join("\n"));
    this.#decoders.clear();
    this.#pending = "";
    this.#shown = [];
  }

  /**
   * The read_output question: what fed the run and the exact bytes, each line escaped, whole up
   * to the preview's lines (then a second key for the rest); one key answers.
   */
  approveReadOutput(r: ReadOutputRequest): Promise<Approval> {
    this.#rule("assert a command's output to the planner");
    this.#line(`${pc.bold("command:")} ${r.command} → ${r.ref} ${formatLabel(r.label)}`);
    if (r.stdin !== null) this.#line(`${pc.bold("stdin:")} ${r.stdin}`);
    const facts = [
      plural(r.size, "byte"),
      plural(r.lines.length, "line"),
      r.finalNewline ? "a final newline" : "no final newline",
      ...(r.utf8 ? [] : ["not valid UTF-8 (invalid bytes shown as U+FFFD)"]),
      ...(r.omitted ? [`${plural(r.omitted, "character")} in the middle left out`] : []),
    ];
    this.#line(pc.yellow("the planner will be shown these bytes as trusted: you assert them"));
    this.#line(pc.dim(`output (${facts.join(", ")}; escaped, each ⟦U+…⟧ one character):`));
    const lines = r.lines.map((l) => pc.dim("│ ") + styleMarkers(l));
    return this.#approveOrRefuse("Assert this output to the planner?", lines, "assert it");
  }

  async #ownWords(): Promise<Answer> {
    const text = await this.#text("Your answer (empty to skip):");
    return text === null || text.trim() === ""
      ? { kind: "skipped" }
      : { kind: "text", text: text.trim() };
  }

  async ask(q: Question): Promise<Answer> {
    this.#rule(`question: ${escapeForScreen(q.header)}`);
    this.#line(escapeForScreen(q.question, true));
    const options = q.options ?? [];
    if (options.length === 0) return await this.#ownWords();
    const labels = options.map((o, i) =>
      `${i + 1}. ${escapeForScreen(o.label)}${
        o.description ? pc.dim(` — ${escapeForScreen(o.description)}`) : ""
      }`
    );
    if (q.multiple) {
      const own = labels.length;
      const picked = await this.#pick(
        "Choose any (digit or space to mark, Enter to confirm, Esc skips):",
        [...labels, `${own + 1}. answer in my own words`],
        { multiple: true, digitBase: 1 },
      );
      if (picked === null || picked.length === 0) return { kind: "skipped" };
      if (picked.includes(own)) return await this.#ownWords();
      return { kind: "options", chosen: picked.map((i) => options[i].label) };
    }
    if (labels.length <= 9) {
      this.#line(labels.join("\n"));
      const answer = await this.#keys(
        "Choose one:",
        [
          ...options.map((_, i) => ({ key: `${i + 1}`, label: `option ${i + 1}`, value: `${i}` })),
          { key: "o", label: "own words", value: "own" },
          { key: "s", label: "skip", value: "skip" },
        ],
        {
          enter: "skip",
          escape: "skip",
        },
      );
      if (answer === "skip") return { kind: "skipped" };
      if (answer === "own") return await this.#ownWords();
      return { kind: "options", chosen: [options[Number(answer)].label] };
    }
    const picked = await this.#pick("Choose one (arrows, then Enter; Esc skips):", labels, {
      digitBase: 1,
    });
    if (picked === null) return { kind: "skipped" };
    return { kind: "options", chosen: [options[picked[0]].label] };
  }

  async firstUse(workspace: string): Promise<FirstUseAnswer> {
    this.#rule("first use of this workspace");
    this.#line(escapeForScreen(workspace));
    this.#line(
      "What in it do you trust? Trusted files may steer the agent; everything else reaches it " +
        "only as references until you vouch for it. You can change this later with /trust.",
    );
    const foreign = FOREIGN_TREES.map((t) => t + "/").join(", ");
    const choice = await this.#keys("Trust:", [
      { key: "w", label: `the workspace, except ${foreign}`, value: "workspace" },
      { key: "n", label: "nothing (every file quarantined until you vouch)", value: "nothing" },
      { key: "c", label: "let me choose directories", value: "custom" },
    ], { enter: "nothing", escape: "unanswered", interrupt: "unanswered" });
    if (choice === "unanswered") return { choice: "unanswered" };
    if (choice !== "custom") return { choice: choice as "workspace" | "nothing" };
    const list = (s: string | null) =>
      (s ?? "").split(/[,\s]+/).map((d) => d.trim()).filter(Boolean);
    const trusted = await this.#text(
      "Directories to trust (space or comma separated, e.g. src/ docs/):",
    );
    if (trusted === null) return { choice: "unanswered" };
    const untrusted = await this.#text(
      "Directories inside those to leave untrusted (may be empty):",
    );
    if (untrusted === null) return { choice: "unanswered" };
    return { choice: "custom", trusted: list(trusted), untrusted: list(untrusted) };
  }

  remark(text: string): void {
    this.#line(
      "\n" + pc.magenta("┌─ processor remark — untrusted, for your eyes only, stored nowhere\n") +
        text.replace(/\n$/, "").split("\n").map((l) =>
          pc.magenta("│ ") + pc.dim(escapeForScreen(l))
        ).join("\n") + "\n" + pc.magenta("└─"),
    );
  }

  notice(text: string | ScreenText): void {
    this.#line(noticeLine(text));
  }
}

/** A prefix of `n` arguments as the picker shows it: the program, its first args, "…". */
function prefixText(stage: { program: string; args: readonly string[] }, n: number): string {
  return `${formatArgv([stage.program, ...stage.args.slice(0, n)])} …`;
}

/**
 * The prefixes a vouch may fix, shortest first, as `n: program args …` (at most ten, one digit
 * each). A single command's stop short of its whole argv (that is "exactly"); a pipeline's
 * stage may be vouched by all of its arguments, any others after them.
 */
function prefixOptions(
  stage: { program: string; args: readonly string[] },
  whole: boolean,
): string[] {
  const count = Math.min(stage.args.length + (whole ? 1 : 0), 10);
  return Array.from({ length: count }, (_, n) => `${n}: ${prefixText(stage, n)}`);
}

/** A notice as the screen shows it (the session's, and a retry's line shown in place). */
export function noticeLine(text: string | ScreenText): string {
  return pc.yellow(`note: ${shownOnScreen(text)}`);
}
