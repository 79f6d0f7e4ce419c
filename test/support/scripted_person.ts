/**
 * A Person that answers from a list and records every question: the tests' stand-in for the
 * human. Running out of answers is a test bug, reported loudly rather than guessed around.
 */
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
} from "../../src/person/person.ts";
import type { ScreenText } from "../../src/util/escape.ts";

export type ScriptedAnswer =
  | { write: Approval }
  | { read: QuarantinedReadAnswer }
  | { run: RunAnswer }
  | { readOutput: Approval }
  | { ask: Answer }
  | { firstUse: FirstUseAnswer };

export type Asked =
  | { kind: "write"; request: WriteApprovalRequest }
  | { kind: "read"; request: QuarantinedReadRequest }
  | { kind: "run"; request: RunApprovalRequest }
  | { kind: "readOutput"; request: ReadOutputRequest }
  | { kind: "ask"; request: Question }
  | { kind: "firstUse"; request: string };

export class ScriptedPerson implements Person {
  readonly interactive = true;
  readonly decider = "person" as const;
  readonly asked: Asked[] = [];
  readonly remarks: string[] = [];
  readonly notices: string[] = [];
  /** What approved commands printed, as the screen was handed it. */
  readonly runOutputs: RunOutputEvent[] = [];

  runOutput(event: RunOutputEvent): void {
    this.runOutputs.push(event);
  }

  constructor(private readonly answers: ScriptedAnswer[] = []) {}

  /** Queues more answers. */
  push(...answers: ScriptedAnswer[]): void {
    this.answers.push(...answers);
  }

  #take<K extends string>(kind: K): ScriptedAnswer {
    const next = this.answers.shift();
    if (!next || !(kind in next)) {
      throw new Error(
        `ScriptedPerson: asked '${kind}' but the next answer is ${JSON.stringify(next)}`,
      );
    }
    return next;
  }

  approveWrite(request: WriteApprovalRequest): Promise<Approval> {
    this.asked.push({ kind: "write", request });
    return Promise.resolve((this.#take("write") as { write: Approval }).write);
  }
  quarantinedRead(request: QuarantinedReadRequest): Promise<QuarantinedReadAnswer> {
    this.asked.push({ kind: "read", request });
    return Promise.resolve((this.#take("read") as { read: QuarantinedReadAnswer }).read);
  }
  approveRun(request: RunApprovalRequest): Promise<RunAnswer> {
    this.asked.push({ kind: "run", request });
    return Promise.resolve((this.#take("run") as { run: RunAnswer }).run);
  }
  approveReadOutput(request: ReadOutputRequest): Promise<Approval> {
    this.asked.push({ kind: "readOutput", request });
    return Promise.resolve((this.#take("readOutput") as { readOutput: Approval }).readOutput);
  }
  ask(question: Question): Promise<Answer> {
    this.asked.push({ kind: "ask", request: question });
    return Promise.resolve((this.#take("ask") as { ask: Answer }).ask);
  }
  firstUse(workspace: string): Promise<FirstUseAnswer> {
    this.asked.push({ kind: "firstUse", request: workspace });
    return Promise.resolve((this.#take("firstUse") as { firstUse: FirstUseAnswer }).firstUse);
  }
  remark(text: string): void {
    this.remarks.push(text);
  }
  notice(text: string | ScreenText): void {
    this.notices.push(String(text));
  }
}
