/**
 * References (docs/contract.md §7): handles to bytes the planner may not see. The planner only ever
 * holds `ref:N`; this table, owned by the policy layer, knows what each one stands for. Records
 * and content bytes are persisted in the session folder so a resumed session keeps them.
 */
import { join } from "node:path";
import { z } from "zod";
import { appendJsonLine, readJsonLines } from "../state/jsonfile.ts";
import { ensurePrivateDir } from "../state/dirs.ts";
import { formatLabel, type Label, parseLabel } from "../util/label.ts";
import { escapeForScreen } from "../util/escape.ts";
import { err, ok, type Result } from "../util/result.ts";
import { type Shape, SHAPES } from "./shapes.ts";

export type RefKind =
  | "file" // a quarantined file, not opened until consumed
  | "file_name" // one entry of a quarantined listing
  | "file_content" // bytes taken from files (a quarantined search result)
  | "command_output" // what a run printed
  | "processor_answer"; // a processor's document

export interface RefRecord {
  readonly id: number;
  readonly kind: RefKind;
  readonly label: Label;
  /** For file, file_name: the real workspace-relative path; never shown to the planner. */
  readonly path?: string;
  /** For file_name: what the entry is. */
  readonly entryType?: "file" | "directory";
  /** For processor_answer: the file the answer is bound to, or null when it names none. */
  readonly about?: string | null;
  /** Whether bytes are stored with the reference (content kinds). */
  readonly hasBytes: boolean;
  readonly size?: number;
  readonly lines?: number;
  readonly sha256?: string;
  /** For command_output: the command as the person saw it (escaped argv, or the shell line). */
  readonly command?: string;
  /** For command_output of a run: the reference fed to it as stdin, if any (what fed the run). */
  readonly stdin?: number;
  /** The tool that made it. */
  readonly tool: string;
}

export type NewRef = Omit<RefRecord, "id" | "hasBytes">;

const recordSchema = z.object({
  id: z.number().int().min(0),
  kind: z.enum(["file", "file_name", "file_content", "command_output", "processor_answer"]),
  label: z.string().refine((s) => parseLabel(s) !== undefined, "not a label"),
  path: z.string().optional(),
  entryType: z.enum(["file", "directory"]).optional(),
  about: z.string().nullable().optional(),
  hasBytes: z.boolean(),
  size: z.number().optional(),
  lines: z.number().optional(),
  sha256: z.string().optional(),
  command: z.string().optional(),
  stdin: z.number().int().min(0).optional(),
  tool: z.string(),
});

/**
 * A run's output asserted for the planner (docs/contract.md §16.5): by the person at the
 * read_output question, or by the approval policy file (a shape it matched, or `readOutput: true`).
 * Bound to the bytes' SHA-256; the bytes themselves are the reference's, never copied here.
 */
export interface Assertion {
  ref: number;
  by: "person" | "policy-file";
  /** The shape the output matched (the policy file's `readOutput` list); null otherwise. */
  shape: Shape | null;
  sha256: string;
  /** Made in this run; false for one read back from the session folder (a resumed session). */
  thisRun: boolean;
}

const assertionSchema = z.strictObject({
  ref: z.number().int().min(0),
  by: z.enum(["person", "policy-file"]),
  shape: z.enum(SHAPES).nullable(),
  sha256: z.string(),
  time: z.string(),
});

const REF_SYNTAX = /^ref:([0-9]+)$/;

export class RefTable {
  #records: RefRecord[] = [];
  #memory = new Map<number, Uint8Array>();
  #asserted = new Map<number, Assertion>();

  /** `dir` null keeps everything in memory (tests, `--state-dir` absent never happens in use). */
  private constructor(private readonly dir: string | null) {}

  static inMemory(): RefTable {
    return new RefTable(null);
  }

  /** Opens (or resumes) the table of a session folder; bad rows are reported, never guessed. */
  static async open(dir: string): Promise<{ table: RefTable; problems: string[] }> {
    const table = new RefTable(dir);
    await ensurePrivateDir(join(dir, "refs"));
    const { rows, problems } = await readJsonLines(join(dir, "refs.jsonl"));
    for (const row of rows) {
      const parsed = recordSchema.safeParse(row);
      if (!parsed.success || parsed.data.id !== table.#records.length) {
        problems.push(
          `${join(dir, "refs.jsonl")}: a record does not fit (${JSON.stringify(row).slice(0, 80)})`,
        );
        continue;
      }
      table.#records.push({ ...parsed.data, label: parseLabel(parsed.data.label)! });
      if (parsed.data.hasBytes) {
        try {
          await Deno.stat(join(dir, "refs", `${parsed.data.id}.bin`));
        } catch {
          problems.push(
            `ref:${parsed.data.id}: its stored bytes (refs/${parsed.data.id}.bin) are gone`,
          );
        }
      }
    }
    await table.#loadAssertions(problems);
    return { table, problems };
  }

  /** A resumed session's assertions: each a past decision, kept only for the bytes it was about. */
  async #loadAssertions(problems: string[]): Promise<void> {
    const file = join(this.dir!, "asserted.jsonl");
    const { rows, problems: torn } = await readJsonLines(file);
    problems.push(...torn);
    for (const row of rows) {
      const parsed = assertionSchema.safeParse(row);
      const ref = parsed.success ? this.#records[parsed.data.ref] : undefined;
      if (!parsed.success || !ref || ref.sha256 !== parsed.data.sha256) {
        problems.push(`${file}: an assertion does not fit its reference (not kept)`);
        continue;
      }
      const { time: _time, ...a } = parsed.data;
      this.#asserted.set(a.ref, { ...a, thisRun: false });
    }
  }

  get size(): number {
    return this.#records.length;
  }

  all(): readonly RefRecord[] {
    return this.#records;
  }

  /** Adds a reference; `bytes`, when given, are stored before the record is, so no record dangles. */
  async add(fields: NewRef, bytes?: Uint8Array): Promise<RefRecord> {
    const record: RefRecord = {
      ...fields,
      id: this.#records.length,
      hasBytes: bytes !== undefined,
    };
    if (bytes !== undefined) {
      if (this.dir === null) this.#memory.set(record.id, bytes);
      else await Deno.writeFile(join(this.dir, "refs", `${record.id}.bin`), bytes, { mode: 0o600 });
    }
    this.#records.push(record);
    if (this.dir !== null) {
      await appendJsonLine(join(this.dir, "refs.jsonl"), {
        ...record,
        label: formatLabel(record.label),
      });
    }
    return record;
  }

  /** Parses and finds `ref:N`; an invented or mistyped reference is an error naming the problem. */
  lookup(text: unknown): Result<RefRecord> {
    if (typeof text !== "string") return err("a reference must be a string such as ref:0");
    const m = REF_SYNTAX.exec(text.trim());
    if (!m) {
      return err(
        `'${text.slice(0, 40)}' is not a reference; references are written ref:N, e.g. ref:0`,
      );
    }
    if (m[1].length > 1 && m[1].startsWith("0")) {
      return err(
        `'${text.trim()}' is mistyped: reference numbers have no leading zeros (ref:${
          Number(m[1])
        })`,
      );
    }
    const id = Number(m[1]);
    const record = Number.isSafeInteger(id) ? this.#records[id] : undefined;
    if (!record) {
      const range = this.#records.length === 0
        ? "this session has no references yet"
        : `this session has ref:0 to ref:${this.#records.length - 1}`;
      return err(`${m[0]} does not exist; ${range}`);
    }
    return ok(record);
  }

  /** The assertion made about a reference's bytes, this run or before it was resumed. */
  assertion(record: RefRecord): Assertion | undefined {
    return this.#asserted.get(record.id);
  }

  /** How many outputs this run asserted by a shape (docs/contract.md §16.3: at most 16 a run). */
  assertedByShapeThisRun(): number {
    let n = 0;
    for (const a of this.#asserted.values()) if (a.thisRun && a.shape !== null) n++;
    return n;
  }

  /**
   * Records an assertion. It counts at once, before the write to the session folder, so two
   * decisions in flight cannot both take the last place a run has.
   */
  async recordAssertion(a: Omit<Assertion, "thisRun">): Promise<void> {
    this.#asserted.set(a.ref, { ...a, thisRun: true });
    if (this.dir !== null) {
      await appendJsonLine(join(this.dir, "asserted.jsonl"), {
        ...a,
        time: new Date().toISOString(),
      });
    }
  }

  /** The stored bytes of a content reference. Only the policy layer calls this. */
  async bytes(record: RefRecord): Promise<Uint8Array> {
    if (!record.hasBytes) throw new Error(`ref:${record.id} holds no bytes`);
    if (this.dir === null) return this.#memory.get(record.id)!;
    return await Deno.readFile(join(this.dir, "refs", `${record.id}.bin`));
  }
}

/** `ref:N`, the only way a reference is written where the planner can see it. */
export function refName(record: RefRecord | number): string {
  return `ref:${typeof record === "number" ? record : record.id}`;
}

/**
 * Where a reference came from, ready for a screen: names escaped here, and a command as it was
 * shown when it ran (already escaped: a run's argv by formatArgv, a shell line whole), so that
 * nothing is escaped twice.
 */
export function sourceOf(ref: RefRecord): string {
  switch (ref.kind) {
    case "processor_answer":
      return ref.about
        ? `processor answer about ${escapeForScreen(ref.about)}`
        : "processor answer (about no file)";
    case "command_output":
      return `output of ${ref.command ?? "a command"}`;
    case "file_content":
      return `lines found by ${ref.tool}`;
    case "file":
      return `content of ${escapeForScreen(ref.path ?? "")}`;
    case "file_name":
      return `${ref.entryType === "directory" ? "a directory" : "a file"} from a listing`;
  }
}
