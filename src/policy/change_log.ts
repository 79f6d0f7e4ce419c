/**
 * What this session changed in the workspace, kept in its folder of the state directory (never in
 * the workspace), for `/diff` and `/undo` (docs/session.md#taking-changes-back): one record per
 * change (a write, an edit, one run's files), each file with the state before it — the bytes when
 * they were small enough to keep ({@link keepsBytes}), else only their hash — the hash the change
 * left, and the trust-map entry the file had before. The bytes are stored once per hash
 * (`changes/<sha256>.bin`), the records appended to `changes.jsonl`, so both survive `--resume`.
 */
import { join } from "node:path";
import { z } from "zod";
import { appendJsonLine, readJsonLines } from "../state/jsonfile.ts";
import { ensurePrivateDir } from "../state/dirs.ts";
import { sha256 } from "../util/hash.ts";
import type { FileEntry } from "./trust_map.ts";
import type { Label } from "../util/label.ts";

/** The state of a file before a change: absent, or its hash and size (bytes kept or not). */
export type Before =
  | { kind: "absent" }
  | {
    kind: "bytes";
    sha256: string;
    size: number;
    kept: boolean;
    /** Not kept because the session's budget for a run's kept bytes was spent. */
    budget?: true;
    /** Its permission bits (`0o777` of them) when a run's keep read it: `/undo` restores them. */
    mode?: number;
  }
  /** An empty folder a run removed, which `/undo` makes again (run_keep.ts saw it). */
  | { kind: "folder" }
  /**
   * A run changed it and its bytes before were not kept (docs/decisions.md): over the bound
   * (`large`), past the session's budget (`budget`: not read, nor hashed), in a content-addressed
   * store such as git's objects (`store`: run_keep.ts), or not seen before the run (past the
   * snapshot's bound, or not a regular file).
   */
  | { kind: "unknown"; why?: "large" | "budget" | "store" };

export interface ChangedFile {
  rel: string;
  before: Before;
  /** The hash the change left; null: the change left no regular file there (or it is unknown). */
  after: string | null;
  /** The file's own trust-map entry before the change (null: none; its rules decided). */
  trustBefore: FileEntry | null;
  /** A run chose the name (docs/contract.md §13.5): it never goes to the planner as text. */
  nameChosen?: true;
  /** The change removed the file: undoing it writes the bytes back where nothing may be now. */
  removed?: true;
  /** The label the bytes before had when they were kept (a run's record; never shown). */
  labelBefore?: Label;
}

export interface ChangeRecord {
  seq: number;
  by: "write_file" | "edit_file" | "run";
  files: ChangedFile[];
  /** Taken back by `/undo`. */
  undone?: true;
}

const entrySchema = z.object({
  integrity: z.enum(["T", "U"]),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  why: z.enum(["write", "vouch", "run"]),
  nameChosen: z.literal(true).optional(),
});
const hex = z.string().regex(/^[0-9a-f]{64}$/);
/** A pack's index: each hash it holds, at which offset, how many bytes. */
const packIndexSchema = z.array(
  z.tuple([hex, z.number().int().min(0), z.number().int().min(0)]),
);
const rowSchema = z.union([
  z.object({
    type: z.literal("change"),
    seq: z.number().int().min(0),
    by: z.enum(["write_file", "edit_file", "run"]),
    files: z.array(z.object({
      rel: z.string(),
      before: z.union([
        z.object({ kind: z.literal("absent") }),
        z.object({
          kind: z.literal("bytes"),
          sha256: hex,
          size: z.number().int().min(0),
          kept: z.boolean(),
          budget: z.literal(true).optional(),
          mode: z.number().int().min(0).max(0o777).optional(),
        }),
        z.object({ kind: z.literal("folder") }),
        z.object({
          kind: z.literal("unknown"),
          why: z.enum(["large", "budget", "store"]).optional(),
        }),
      ]),
      after: hex.nullable(),
      trustBefore: entrySchema.nullable(),
      nameChosen: z.literal(true).optional(),
      removed: z.literal(true).optional(),
      labelBefore: z.object({
        integrity: z.enum(["T", "U"]),
        confidentiality: z.enum(["pub", "priv"]),
      }).optional(),
    })),
  }),
  z.object({ type: z.literal("undone"), seq: z.number().int().min(0) }),
]);

/**
 * The largest file whose bytes before a change are kept (docs/decisions.md): 1 MiB. A larger one
 * is recorded by hash only; `/diff` says so and `/undo` refuses it.
 */
export const KEEP_MAX_BYTES = 1024 * 1024;

/**
 * How many bytes a session keeps in all (docs/decisions.md): 64 MiB. Past it, the files a run
 * may change are recorded by hash only, and `/diff` says they cannot be undone. The bytes a
 * write or an edit replaces are kept whatever the total: each was read for the person's diff.
 */
export const SESSION_KEEP_BUDGET_BYTES = 64 * 1024 * 1024;

/** Whether the bytes of a file of `size` are kept before the session changes it. */
export function keepsBytes(size: number): boolean {
  return size <= KEEP_MAX_BYTES;
}

/**
 * What is kept of a file's state before the session changes it: nothing to keep when there was
 * no file; its bytes when small enough ({@link keepsBytes}); else its hash and size only.
 */
export async function beforeOf(log: ChangeLog, current: Uint8Array | null): Promise<Before> {
  if (current === null) return { kind: "absent" };
  if (!keepsBytes(current.length)) {
    return { kind: "bytes", sha256: sha256(current), size: current.length, kept: false };
  }
  return { kind: "bytes", sha256: await log.keep(current), size: current.length, kept: true };
}

/** Records a write or an edit the worker made: the bytes it replaced, the hash it left. */
export async function recordFileChange(
  log: ChangeLog,
  by: "write_file" | "edit_file",
  rel: string,
  current: Uint8Array | null,
  after: string,
  trustBefore: FileEntry | null,
): Promise<void> {
  await log.add(by, [{ rel, before: await beforeOf(log, current), after, trustBefore }]);
}

/**
 * What was read of a file before a run (run_keep.ts): the snapshot's key for it, the state kept,
 * and the whole second the bytes were read in.
 */
export interface RunRead {
  key: string;
  before: Before;
  second: number;
}

export class ChangeLog {
  readonly #records: ChangeRecord[] = [];
  /** In memory only (tests): the kept bytes by hash. */
  readonly #memory = new Map<string, Uint8Array>();
  /** The hashes kept, and the bytes they take in all. */
  readonly #stored = new Set<string>();
  #storedBytes = 0;
  /** The sizes of the bytes kept: a file of another size cannot be kept already. */
  readonly #sizes = new Set<number>();
  /** Bytes kept together before a run: which pack holds each hash, where, how long. */
  readonly #packed = new Map<string, { pack: string; offset: number; size: number }>();
  /** How many bytes may be kept in all before a run ({@link keepAllWithinBudget}). */
  budget = SESSION_KEEP_BUDGET_BYTES;
  /**
   * The files read before this session's runs, by workspace-relative path (run_keep.ts), so an
   * unchanged file is not read again. The session's own, in memory: after `--resume` the first
   * run reads again.
   */
  readonly runReads = new Map<string, RunRead>();

  private constructor(private readonly dir: string | null) {}

  static inMemory(): ChangeLog {
    return new ChangeLog(null);
  }

  /** Opens (or resumes) the log of a session folder; bad rows are reported, never guessed. */
  static async open(dir: string): Promise<{ log: ChangeLog; problems: string[] }> {
    const log = new ChangeLog(dir);
    await ensurePrivateDir(join(dir, "changes"));
    const problems: string[] = [];
    for await (const entry of Deno.readDir(join(dir, "changes"))) {
      const hash = /^([0-9a-f]{64})\.bin$/.exec(entry.name)?.[1];
      const pack = /^([0-9a-f]{64})\.pack\.json$/.exec(entry.name)?.[1];
      if (!entry.isFile) continue;
      if (hash !== undefined) {
        const { size } = await Deno.lstat(join(dir, "changes", entry.name));
        log.#stored.add(hash);
        log.#sizes.add(size);
        log.#storedBytes += size;
      } else if (pack !== undefined && !await log.#openPack(pack)) {
        problems.push(`${join(dir, "changes", entry.name)}: a pack's index does not fit; skipped`);
      }
    }
    const file = join(dir, "changes.jsonl");
    const { rows, problems: rowProblems } = await readJsonLines(file);
    problems.push(...rowProblems);
    for (const row of rows) {
      const parsed = rowSchema.safeParse(row);
      if (!parsed.success) {
        problems.push(`${file}: a record does not fit; it is skipped`);
        continue;
      }
      const data = parsed.data;
      if (data.type === "undone") {
        const record = log.#records.find((r) => r.seq === data.seq);
        if (record) record.undone = true;
        continue;
      }
      log.#records.push({ seq: data.seq, by: data.by, files: data.files as ChangedFile[] });
    }
    return { log, problems };
  }

  get records(): readonly ChangeRecord[] {
    return this.#records;
  }

  /** Whether the bytes of `hash` are kept (as far as this log knows: `kept` checks them). */
  holds(hash: string): boolean {
    return this.#stored.has(hash);
  }

  /** Whether bytes of `size` are kept: only then may a file of that size be kept already. */
  holdsSize(size: number): boolean {
    return this.#sizes.has(size);
  }

  /** The bytes kept in all. */
  get storedBytes(): number {
    return this.#storedBytes;
  }

  /** Reads a pack's index (`<hash>.pack.json`); false when it does not fit or has no pack. */
  async #openPack(pack: string): Promise<boolean> {
    const base = join(this.dir!, "changes", pack);
    try {
      const index = packIndexSchema.safeParse(
        JSON.parse(await Deno.readTextFile(`${base}.pack.json`)),
      );
      if (!index.success) return false;
      this.#storedBytes += (await Deno.lstat(`${base}.pack`)).size;
      for (const [hash, offset, size] of index.data) {
        this.#stored.add(hash);
        this.#sizes.add(size);
        this.#packed.set(hash, { pack, offset, size });
      }
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Keeps each of `list` that is not kept already, while it fits in what is left of the session's
   * budget, all in one pack (one file, named by its hash, with an index beside it): a run's first
   * keep may hold thousands of small files, and one file each cost most of its time. Answers, in
   * order, each one's hash and whether it is kept.
   */
  async keepAllWithinBudget(list: Uint8Array[]): Promise<{ sha256: string; kept: boolean }[]> {
    const out: { sha256: string; kept: boolean }[] = [];
    const fresh = new Map<string, Uint8Array>();
    let total = this.#storedBytes;
    for (const bytes of list) {
      const hash = sha256(bytes);
      const kept = this.#stored.has(hash) || fresh.has(hash) || total + bytes.length <= this.budget;
      if (kept && !this.#stored.has(hash) && !fresh.has(hash)) {
        fresh.set(hash, bytes);
        total += bytes.length;
      }
      out.push({ sha256: hash, kept });
    }
    if (fresh.size > 0) await this.#writePack(fresh);
    return out;
  }

  async #writePack(fresh: Map<string, Uint8Array>): Promise<void> {
    if (this.dir === null) {
      for (const [hash, bytes] of fresh) this.#memory.set(hash, bytes);
    } else {
      const size = [...fresh.values()].reduce((n, b) => n + b.length, 0);
      const all = new Uint8Array(size);
      const index: [string, number, number][] = [];
      let at = 0;
      for (const [hash, bytes] of fresh) {
        all.set(bytes, at);
        index.push([hash, at, bytes.length]);
        at += bytes.length;
      }
      const pack = sha256(all);
      const base = join(this.dir, "changes", pack);
      // The pack first, then its index: an index is only ever written beside a whole pack.
      await Deno.writeFile(`${base}.pack`, all, { mode: 0o600 });
      await Deno.writeTextFile(`${base}.pack.json`, JSON.stringify(index), { mode: 0o600 });
      for (const [hash, offset, length] of index) {
        this.#packed.set(hash, { pack, offset, size: length });
      }
    }
    for (const [hash, bytes] of fresh) {
      this.#stored.add(hash);
      this.#sizes.add(bytes.length);
      this.#storedBytes += bytes.length;
    }
  }

  /** Keeps `bytes` (stored once per hash) and answers their hash. */
  async keep(bytes: Uint8Array): Promise<string> {
    const hash = sha256(bytes);
    if (this.#stored.has(hash)) return hash;
    if (this.dir === null) this.#memory.set(hash, bytes);
    else {
      const path = join(this.dir, "changes", `${hash}.bin`);
      try {
        await Deno.writeFile(path, bytes, { mode: 0o600, createNew: true });
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      }
    }
    this.#stored.add(hash);
    this.#sizes.add(bytes.length);
    this.#storedBytes += bytes.length;
    return hash;
  }

  /** The kept bytes of `hash`, only if they still hash to it; null when gone or altered. */
  async kept(hash: string): Promise<Uint8Array | null> {
    let bytes: Uint8Array | undefined;
    if (this.dir === null) bytes = this.#memory.get(hash);
    else {
      const packed = this.#packed.get(hash);
      try {
        bytes = packed
          ? (await Deno.readFile(join(this.dir, "changes", `${packed.pack}.pack`)))
            .subarray(packed.offset, packed.offset + packed.size)
          : await Deno.readFile(join(this.dir, "changes", `${hash}.bin`));
      } catch {
        return null;
      }
    }
    return bytes !== undefined && sha256(bytes) === hash ? bytes : null;
  }

  /** Appends a change; answers its record. */
  async add(by: ChangeRecord["by"], files: ChangedFile[]): Promise<ChangeRecord> {
    const record: ChangeRecord = { seq: (this.#records.at(-1)?.seq ?? -1) + 1, by, files };
    if (this.dir !== null) {
      await appendJsonLine(join(this.dir, "changes.jsonl"), { type: "change", ...record });
    }
    this.#records.push(record);
    return record;
  }

  /** Marks a change as taken back. */
  async markUndone(record: ChangeRecord): Promise<void> {
    if (this.dir !== null) {
      await appendJsonLine(join(this.dir, "changes.jsonl"), { type: "undone", seq: record.seq });
    }
    record.undone = true;
  }

  /** The changes not taken back, oldest first. */
  get standing(): ChangeRecord[] {
    return this.#records.filter((r) => !r.undone);
  }
}
