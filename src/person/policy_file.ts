/**
 * The Person of one-shot mode: nobody is at the terminal, so every question is declined unless
 * the approval policy file (docs/cli.md#the-approval-policy-file) answered it in advance. Writes,
 * runs and vouches the file allows are decided by the policy layer before it would ask; what
 * reaches this class is what the file does not allow, declined with a reason the planner is told.
 */
import type { ApprovalsFile } from "../policy/approvals_file.ts";
import type {
  Answer,
  Approval,
  FirstUseAnswer,
  Person,
  QuarantinedReadAnswer,
  Question,
  RunAnswer,
} from "./person.ts";
import { escapeForScreen, type ScreenText, shownOnScreen } from "../util/escape.ts";

const DECLINED =
  "nobody can be asked in a one-shot run and the approval policy file does not allow it";

export class PolicyFilePerson implements Person {
  readonly interactive = false;
  readonly decider: "policy-file" | "nobody";

  constructor(
    readonly file: ApprovalsFile | null,
    /** Where lines for the person go, escaped already (stderr, through its last wall). */
    private readonly out: (line: string) => void = () => {},
  ) {
    this.decider = file ? "policy-file" : "nobody";
  }

  approveWrite(): Promise<Approval> {
    return Promise.resolve({ approved: false, reason: DECLINED });
  }
  quarantinedRead(): Promise<QuarantinedReadAnswer> {
    // Not asked: the policy layer answers from the file's `quarantinedRead` itself.
    return Promise.resolve("keep");
  }
  approveRun(): Promise<RunAnswer> {
    return Promise.resolve({ answer: "refuse", reason: DECLINED });
  }
  approveReadOutput(): Promise<Approval> {
    // The file's `readOutput` is applied by the policy layer before it would ask.
    return Promise.resolve({ approved: false, reason: DECLINED });
  }
  ask(_question: Question): Promise<Answer> {
    return Promise.resolve({ kind: "skipped" });
  }
  firstUse(): Promise<FirstUseAnswer> {
    // Nobody chose: nothing is trusted beyond what the policy file's rules add.
    return Promise.resolve({ choice: "nothing" });
  }
  remark(text: string): void {
    this.out(`processor remark (untrusted): ${escapeForScreen(text, true)}`);
  }
  notice(text: string | ScreenText): void {
    this.out(shownOnScreen(text));
  }
}
