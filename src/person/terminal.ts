/**
 * The Person at a terminal (design.md §6, §8, §12): every question the policy layer puts is
 * shown in full — the real destination and a diff, every stage's escaped argv and resolved
 * program, the first lines of a quarantined file — and answered with @inquirer/prompts. Text
 * that came from the planner, a file or a command is escaped before it reaches the screen, and
 * a processor's remark is set apart as untrusted. Ctrl-C at a prompt is the safe answer
 * (refuse, keep quarantined, skip) and stops the turn.
 */
import { checkbox, input, select } from "@inquirer/prompts";
import pc from "picocolors";
import { formatLabel } from "../util/label.ts";
import { FOREIGN_TREES } from "../policy/trust_map.ts";
import { escapeForScreen, formatArgv, styleMarkers } from "../util/escape.ts";
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
} from "./person.ts";
import { plural } from "../util/plural.ts";

/** Where prompts read keys and draw (tests pass streams; a session passes nothing: stdin/stdout). */
export interface PromptContext {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

export interface TerminalOptions {
  /** Writes screen text (already ending in newlines where needed). */
  write: (text: string) => void;
  context?: PromptContext;
  /** Called when the person pressed Ctrl-C at a prompt: the session stops the current turn. */
  onInterrupt?: () => void;
  /** Lines of a preview shown before the person must ask to see the rest. */
  previewLines?: number;
}

/** Whether an error is the prompt library's "the person pressed Ctrl-C / the input closed". */
export function isPromptExit(e: unknown): boolean {
  const name = (e as Error)?.name ?? "";
  return name === "ExitPromptError" || name === "AbortPromptError" || name === "CancelPromptError";
}

const SKIP = "\u0000skip";
const OWN = "\u0000own";

export class TerminalPerson implements Person {
  readonly interactive = true;
  readonly decider = "person" as const;
  readonly #o: TerminalOptions;
  readonly #previewLines: number;

  constructor(options: TerminalOptions) {
    this.#o = options;
    this.#previewLines = options.previewLines ?? 200;
  }

  /** Every line goes out here: the markers of escaped text in it are styled (with colour). */
  #line(text = ""): void {
    this.#o.write(styleMarkers(text) + "\n");
  }

  #rule(title: string): void {
    this.#line();
    this.#line(pc.bold(`── ${title} `) + pc.dim("─".repeat(Math.max(0, 60 - title.length))));
  }

  /** Runs one prompt; Ctrl-C or a closed input gives `fallback` and stops the turn. */
  async #ask<T>(prompt: (ctx: PromptContext) => Promise<T>, fallback: T): Promise<T> {
    try {
      return await prompt(this.#o.context ?? {});
    } catch (e) {
      if (!isPromptExit(e)) throw e;
      this.#line(pc.yellow("(interrupted: taking the safe answer and stopping the turn)"));
      this.#o.onInterrupt?.();
      return fallback;
    }
  }

  /** Shows lines, the first `previewLines` of them; returns whether some were held back. */
  #showLines(lines: readonly string[], style: (l: string) => string = (l) => l, all = false) {
    const shown = all ? lines : lines.slice(0, this.#previewLines);
    for (const l of shown) this.#line(style(l));
    const rest = lines.length - shown.length;
    if (rest > 0) this.#line(pc.yellow(`… ${plural(rest, "more line")} not shown yet`));
    return rest > 0;
  }

  async #approveOrRefuse(
    message: string,
    lines: readonly string[],
    style: (l: string) => string,
    approveName: string,
  ): Promise<Approval> {
    let all = false;
    while (true) {
      const held = this.#showLines(lines, style, all);
      const choices = [
        { value: "yes", name: approveName },
        { value: "no", name: "Refuse" },
        { value: "why", name: "Refuse, and tell the planner why" },
        ...(held ? [{ value: "all", name: `Show all ${plural(lines.length, "line")} first` }] : []),
      ];
      const answer = await this.#ask(
        (ctx) => select({ message, choices, default: "no" }, ctx),
        "no",
      );
      if (answer === "all") {
        all = true;
        continue;
      }
      if (answer === "yes") return { approved: true };
      if (answer === "why") return { approved: false, reason: await this.#reason() };
      return { approved: false };
    }
  }

  async #reason(): Promise<string | undefined> {
    const text = await this.#ask(
      (ctx) => input({ message: "Reason (goes back to the planner; empty for none):" }, ctx),
      "",
    );
    return text.trim() === "" ? undefined : text.trim();
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
    // Line by line, as the diff view does: a tab in a diff shows as a marker (docs/decisions.md).
    const lines = r.preview.replace(/\n$/, "").split("\n").map((l) => escapeForScreen(l));
    const style = (l: string) =>
      l.startsWith("+") && !l.startsWith("+++")
        ? pc.green(l)
        : l.startsWith("-") && !l.startsWith("---")
        ? pc.red(l)
        : l.startsWith("@@")
        ? pc.cyan(l)
        : l;
    return this.#approveOrRefuse(
      r.tool === "write_file" ? `Write ${escapeForScreen(r.path)}?` : `Apply this edit?`,
      lines,
      style,
      r.tool === "write_file" ? "Write it" : "Apply it",
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
    for (const l of r.preview) this.#line(pc.dim("│ ") + l);
    return await this.#ask(
      (ctx) =>
        select<QuarantinedReadAnswer>({
          message: "The planner asks to read it. What should it get?",
          choices: [
            {
              value: "vouch",
              name: "Vouch for this file: trust these bytes, the planner gets the lines",
            },
            {
              value: "keep",
              name: "Keep it quarantined: the planner gets a reference, not the content",
            },
            {
              value: "untrusted",
              name: "Show it as untrusted: the planner gets the lines, its context becomes U",
            },
          ],
          default: "keep",
        }, ctx),
      "keep",
    );
  }

  async approveRun(r: RunApprovalRequest): Promise<RunAnswer> {
    this.#rule("run a command");
    if (r.why) this.#line(pc.yellow(r.why));
    r.stages.forEach((stage, i) => {
      this.#line(
        `${pc.bold(r.stages.length > 1 ? `stage ${i + 1}:` : "command:")} ${r.display[i] ?? ""}`,
      );
      this.#line(pc.dim(`  program: ${escapeForScreen(stage.resolved)}`));
    });
    if (r.stdin) {
      this.#line(`${pc.bold("stdin:")} ${r.stdin.ref} ${formatLabel(r.stdin.label)}`);
    }
    for (const warning of r.warnings) this.#line(pc.yellow(`note: ${warning}`));
    this.#line(
      r.confinement.confined
        ? pc.dim("runs confined by bwrap: the workspace and scratch writable, no network")
        : pc.yellow(`runs unconfined: ${escapeForScreen(r.confinement.why)}`),
    );
    const single = r.stages.length === 1 ? r.stages[0] : null;
    const answer = await this.#ask(
      (ctx) =>
        select({
          message: "Run it?",
          choices: [
            { value: "once", name: "Run once" },
            ...(r.confinement.confined
              ? [{
                value: "unconfined",
                name: "Run once, unconfined (outside bwrap, this time only)",
              }]
              : []),
            {
              value: "vouch",
              name: "Vouch for exactly this command: run it now and from now on without asking",
            },
            ...(single && single.args.length > 0
              ? [{ value: "prefix", name: "Vouch for a prefix of it (choose how much)…" }]
              : []),
            { value: "refuse", name: "Refuse" },
            { value: "why", name: "Refuse, and tell the planner why" },
          ],
          default: "refuse",
        }, ctx),
      "refuse",
    );
    if (answer === "once") return { answer: "once" };
    if (answer === "unconfined") return { answer: "once", unconfined: true };
    if (answer === "vouch") return { answer: "vouch" };
    if (answer === "why") return { answer: "refuse", reason: await this.#reason() };
    if (answer === "prefix" && single) {
      const display = (n: number) =>
        formatArgv([single.program, ...single.args.slice(0, n)]) +
        (n < single.args.length ? " …" : "");
      const n = await this.#ask(
        (ctx) =>
          select<number>({
            message: "Vouch for which prefix? Any arguments may follow it.",
            choices: Array.from({ length: single.args.length }, (_, i) => ({
              value: i,
              name: display(i),
            })),
            default: Math.min(1, single.args.length - 1),
          }, ctx),
        -1,
      );
      if (n < 0) return { answer: "refuse", reason: "interrupted" };
      return { answer: "vouch", prefixArgs: n };
    }
    return { answer: "refuse" };
  }

  #outputDecoder: TextDecoder | null = null;

  /** An approved command's output as it prints: escaped, each line framed, then the tail. */
  runOutput(event: RunOutputEvent): void {
    if (event.kind === "chunk") {
      this.#outputDecoder ??= new TextDecoder("utf-8", { fatal: false });
      const text = this.#outputDecoder.decode(event.bytes, { stream: true });
      for (const line of escapeForScreen(text, true).split("\n")) {
        if (line !== "") this.#line(pc.dim(`│ ${line}`));
      }
      return;
    }
    this.#outputDecoder = null;
    if (event.omitted > 0) {
      this.#line(
        pc.dim(
          `│ … ${plural(event.omitted, "byte")} not shown here (the whole output is a reference) …`,
        ),
      );
      const tail = new TextDecoder().decode(event.tail);
      for (const line of escapeForScreen(tail, true).split("\n").slice(-20)) {
        if (line !== "") this.#line(pc.dim(`│ ${line}`));
      }
    }
  }

  approveReadOutput(r: ReadOutputRequest): Promise<Approval> {
    this.#rule("show a command's output to the planner");
    this.#line(`${pc.bold("command:")} ${r.command} → ${r.ref} ${formatLabel(r.label)}`);
    this.#line(pc.dim("output (escaped):"));
    const lines = r.text.replace(/\n$/, "").split("\n");
    return this.#approveOrRefuse(
      "Show this output to the planner as text?",
      lines,
      (l) => pc.dim("│ ") + l,
      "Show it to the planner",
    );
  }

  async ask(q: Question): Promise<Answer> {
    this.#rule(`question: ${escapeForScreen(q.header)}`);
    this.#line(escapeForScreen(q.question, true));
    const options = q.options ?? [];
    if (options.length === 0) {
      const text = await this.#ask(
        (ctx) => input({ message: "Your answer (empty to skip):" }, ctx),
        "",
      );
      return text.trim() === "" ? { kind: "skipped" } : { kind: "text", text: text.trim() };
    }
    const optionChoices = options.map((o) => ({
      value: o.label,
      name: escapeForScreen(o.label),
      description: o.description ? escapeForScreen(o.description) : undefined,
    }));
    const extra = [
      { value: OWN, name: "Answer in my own words" },
      { value: SKIP, name: "Skip this question" },
    ];
    let chosen: string[];
    if (q.multiple) {
      chosen = await this.#ask(
        (ctx) =>
          checkbox({
            message: "Choose any (space to mark, enter to confirm):",
            choices: [...optionChoices, ...extra],
          }, ctx),
        [SKIP],
      );
    } else {
      chosen = [
        await this.#ask(
          (ctx) => select({ message: "Choose one:", choices: [...optionChoices, ...extra] }, ctx),
          SKIP,
        ),
      ];
    }
    if (chosen.includes(SKIP)) return { kind: "skipped" };
    if (chosen.includes(OWN)) {
      const text = await this.#ask(
        (ctx) => input({ message: "Your answer (empty to skip):" }, ctx),
        "",
      );
      return text.trim() === "" ? { kind: "skipped" } : { kind: "text", text: text.trim() };
    }
    return { kind: "options", chosen };
  }

  async firstUse(workspace: string): Promise<FirstUseAnswer> {
    this.#rule("first use of this workspace");
    this.#line(`${escapeForScreen(workspace)}`);
    this.#line(
      "What in it do you trust? Trusted files may steer the agent; everything else reaches it " +
        "only as references until you vouch for it. You can change this later with /trust.",
    );
    const choice = await this.#ask(
      (ctx) =>
        select({
          message: "Trust:",
          choices: [
            {
              value: "workspace",
              name: `The workspace, except the usual foreign trees (${
                FOREIGN_TREES.map((t) => t + "/").join(", ")
              })`,
            },
            {
              value: "nothing",
              name: "Nothing (every file is quarantined until you vouch for it)",
            },
            { value: "custom", name: "Let me choose directories" },
          ],
          default: "nothing",
        }, ctx),
      "unanswered",
    );
    if (choice === "unanswered") return { choice };
    if (choice !== "custom") return { choice: choice as "workspace" | "nothing" };
    const list = (s: string) => s.split(/[,\s]+/).map((d) => d.trim()).filter(Boolean);
    // An interrupted answer is no answer: nothing of it is stored.
    const trusted = await this.#ask<string | null>(
      (ctx) =>
        input(
          { message: "Directories to trust (space or comma separated, e.g. src/ docs/):" },
          ctx,
        ),
      null,
    );
    if (trusted === null) return { choice: "unanswered" };
    const untrusted = await this.#ask<string | null>(
      (ctx) =>
        input({ message: "Directories inside those to leave untrusted (may be empty):" }, ctx),
      null,
    );
    if (untrusted === null) return { choice: "unanswered" };
    return { choice: "custom", trusted: list(trusted), untrusted: list(untrusted) };
  }

  remark(text: string): void {
    this.#line();
    this.#line(pc.magenta("┌─ processor remark — untrusted, for your eyes only, stored nowhere"));
    for (const l of text.replace(/\n$/, "").split("\n")) {
      this.#line(pc.magenta("│ ") + pc.dim(escapeForScreen(l)));
    }
    this.#line(pc.magenta("└─"));
  }

  notice(text: string): void {
    this.#line(pc.yellow(`note: ${escapeForScreen(text, true)}`));
  }
}
