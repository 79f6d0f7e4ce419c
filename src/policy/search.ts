/**
 * search's decision (docs/contract.md §3.2, §14), in the parts ripgrep has: walking (the walk
 * chooses the files), matching (the effect workers search them in place — findInFiles, split across
 * the pool while the walk goes on — and send back only counts, matching lines and hashes) and the
 * verdict: the result is labeled from each matched file's hash and name, shown only when every file
 * it touches (and every name in it) is trusted, otherwise stored whole as one reference while the
 * planner is shown counts. The findings come back with their label for the tool to print; a result
 * kept as a reference holds them printed the same way (`util/search_text.ts`).
 */
import type { FileLabels, Recording, References, WorkspaceFiles } from "./capabilities.ts";
import { openedAsChecked, type ResolvedPath } from "./paths.ts";
import { labelNeedsHash, labelOfHash } from "./reads.ts";
import { routeDirectory } from "./routing.ts";
import { walk, type WalkEntry } from "./walk.ts";
import type { Limits } from "../state/settings.ts";
import { compileGlob, type Glob } from "../util/glob.ts";
import { joinLabels, type Label, UNTRUSTED_PUBLIC } from "../util/label.ts";
import {
  printSearch,
  type SearchCounts,
  type SearchFound,
  type SearchMatch,
} from "../util/search_text.ts";
import { ownWordsLabel } from "./driver_labels.ts";
import type { EffectWorker, WorkerResult } from "../worker/client.ts";
import { fanout } from "../worker/pool.ts";
import { FIND, type FindInFilesResult } from "../worker/search_protocol.ts";
import { recordDone } from "./verdict.ts";

export type { SearchCounts, SearchFound, SearchMatch } from "../util/search_text.ts";

export interface SearchRequest {
  directory?: string;
  include?: string;
  /** Literal text. */
  pattern: string;
  limits: Limits;
}

export type SearchResult =
  /** Shown: the findings, with the label they carry (every file and name in them trusted). */
  | { kind: "shown"; found: SearchFound; label: Label }
  /**
   * Quarantined whole as `ref:<ref>` (the findings as printed); the planner may be told the
   * counts, which with the reference are Brave Bot's own words, at `label`.
   */
  | { kind: "kept"; ref: number; counts: SearchCounts; label: Label }
  | { kind: "error"; message: string };

/** Decides a search call: walks, matches, labels, quarantines or shows, and records it. */
export async function decideSearch(
  policy: FileLabels & Recording & WorkspaceFiles & References,
  request: SearchRequest,
): Promise<SearchResult> {
  const routed = await routeDirectory(policy, request.directory, {
    notDirectory: (given) =>
      `${given} is a file; search takes a directory (narrow to one file with include)`,
    git: ".git is never searched",
  });
  if (!routed.ok) return { kind: "error", message: routed.error };
  const { dir, base } = routed.value;
  const include = request.include !== undefined ? compileGlob(request.include) : null;
  const run = new SearchRun(policy, request.pattern, request.limits);
  run.walkFiles(dir, include);
  const tallied = await tally(policy, run, request.limits);
  await run.finishWalk();
  if (!tallied.ok) return { kind: "error", message: tallied.error };

  const { matches, counts, label } = tallied;
  const found: SearchFound = { ...counts, base, matches };
  const routing = { directory: dir.rel, include: request.include ?? null };
  if (label.integrity === "U") {
    const bytes = new TextEncoder().encode(printSearch(found, request, request.limits));
    const ref = await policy.refs.add({
      kind: "file_content",
      label,
      size: bytes.length,
      lines: matches.length,
      tool: "search",
    }, bytes);
    await recordDone(policy, {
      tool: "search",
      routing,
      labels: { result: label },
      decision: `quarantined as ref:${ref.id}`,
      by: "rule",
    });
    return { kind: "kept", ref: ref.id, counts, label: ownWordsLabel() };
  }
  await recordDone(policy, {
    tool: "search",
    routing,
    labels: { result: label },
    decision: "shown (trusted)",
    by: "rule",
  });
  return { kind: "shown", found, label };
}

// ---- matching: the replies, taken in walk order ----

type Tally =
  | { ok: true; matches: SearchMatch[]; counts: SearchCounts; label: Label }
  | { ok: false; error: string };

/**
 * Takes the workers' replies in walk order and counts them, up to the line limit: the same as
 * searching one file after another. Each matched file adds its label (from the hash of the
 * bytes searched) and, when its name may not be shown, an untrusted one.
 */
async function tally(policy: FileLabels, run: SearchRun, limits: Limits): Promise<Tally> {
  const matches: SearchMatch[] = [];
  // Joined as the files come, not gathered and spread at the end: with the line cap lifted,
  // 140,000 matched files (gen-10x) overflowed the call stack with one argument each.
  let label: Label = joinLabels();
  const counts: SearchCounts = {
    lines: 0,
    matchedFiles: 0,
    searched: 0,
    binary: 0,
    oversized: 0,
    unreadable: 0,
    truncated: false,
    files: 0,
  };
  // Once the result is decided the walk may find no more files: stopped at once, not later.
  const done = () => {
    run.stopWalk();
    counts.lines = matches.length;
    counts.files = run.filesFound;
    return { ok: true as const, matches, counts, label };
  };
  while (true) {
    const taken = await run.nextReply();
    if (taken === null) return done();
    const { batch, reply } = taken;
    if (!reply.ok) {
      run.stopWalk();
      return { ok: false, error: `the files could not be read (${reply.error.name})` };
    }
    const { status, found, lineNumbers } = reply.value;
    const texts = lineNumbers.length > 0 ? reply.value.texts.split("\n") : [];
    let f = 0;
    let line = 0; // the next of this reply's lines
    for (let i = 0; i < batch.count; i++) {
      const code = status[i];
      if (code === FIND.tooBig) counts.oversized++;
      else if (code === FIND.unreadable) counts.unreadable++;
      else if (code === FIND.binary) {
        counts.searched++;
        counts.binary++;
      } else if (code === FIND.none) counts.searched++;
      else if (code === FIND.matched) {
        const entry = batch.entries[i];
        const file = found[f++];
        // Its lines are labelled as the walk's entry: only if they were read from it, at its path
        // and through no link (a file swapped for a link since the listing is not it).
        if (!openedAsChecked({ abs: run.pathOf(entry), id: null }, file.opened)) {
          counts.unreadable++;
          line += file.lines;
          continue;
        }
        counts.searched++;
        counts.matchedFiles++;
        const room = limits.searchLines - matches.length;
        label = joinLabels(label, await labelOfHash(policy, entry.rel, file.sha256));
        if (!entry.nameShown) label = joinLabels(label, UNTRUSTED_PUBLIC);
        for (let k = 0; k < Math.min(file.lines, room); k++) {
          matches.push({ sub: entry.sub, line: lineNumbers[line + k], text: texts[line + k] });
        }
        line += file.lines;
        if (file.more || file.lines > room) {
          counts.truncated = true;
          return done();
        }
        if (matches.length >= limits.searchLines) {
          // Exactly at the cap: truncated only if a file was left unsearched.
          const after = batch.first + i + 1;
          counts.truncated = after < run.filesFound || await run.finishWalk() ||
            after < run.filesFound;
          return done();
        }
      } else {
        // FIND.notReached: the worker kept the cap's worth of lines in this request already,
        // so the result is cut here at the latest (the cases above normally end it first).
        counts.truncated = true;
        return done();
      }
    }
  }
}

// ---- walking, and sending the files found to the pool ----

/** Paths per findInFiles request: enough to pay for the round trip, few enough to spread. */
const BATCH = 64;
/** Requests each worker may hold unanswered: enough to keep it busy, few enough to stop soon. */
const AHEAD = 4;
/**
 * Files found and not yet sent past which the walk is held, and at most how many are left when
 * it goes on: at ten times `gen` the walk finished long before the search, holding nearly all of
 * its 200,000 entries (docs/benchmarks.md, "Ten times `gen`"). Thousands of files are a good
 * tenth of a second of searching, far more than a listing takes.
 */
const WALK_AHEAD = 4096;
const WALK_RESUME = 2048;

interface Batch {
  /** Index of its first file in walk order. */
  first: number;
  count: number;
  /** Its files, in walk order. */
  entries: WalkEntry[];
  reply: Promise<WorkerResult<FindInFilesResult>> | null;
}

/** Thrown from the walk's accept to end the walk once the search needs no more files. */
const STOP_WALK = Symbol("stop walk");

/**
 * The walk and the search running together: each batch of paths goes to the pool's least busy
 * worker while the walk goes on, and {@link nextReply} hands the replies back in walk order.
 */
class SearchRun {
  /** How many files the walk found so far. */
  filesFound = 0;
  /**
   * The files found and not yet in a batch, in walk order. A batch holds its own, and is let go
   * once its reply is taken: a search of 200,000 files does not keep every entry to the end.
   */
  #unbatched: WalkEntry[] = [];
  readonly #policy: FileLabels & WorkspaceFiles;
  readonly #needle: Uint8Array;
  readonly #limits: Limits;
  /** Every batch made, in walk order; null once {@link nextReply} handed it back. */
  readonly #batches: (Batch | null)[] = [];
  #batched = 0; // files already in a batch
  #sentFiles = 0; // files in the batches sent
  #held: (() => void) | null = null; // lets the walk go on, while it is held
  #sent = 0; // batches sent
  #answered = 0; // batches sent and answered
  #taken = 0; // the batch nextReply hands back next
  #walking = true;
  #enough = false; // no more files are needed; the next one found ends the walk
  #moreFiles = false; // a file was found after enough
  #flushing = false;
  #wake: (() => void) | null = null;
  #walked: Promise<void> = Promise.resolve();

  constructor(policy: FileLabels & WorkspaceFiles, pattern: string, limits: Limits) {
    this.#policy = policy;
    this.#needle = new TextEncoder().encode(pattern);
    this.#limits = limits;
  }

  /** Starts the walk of `dir`: every file `include` matches is batched as it is found. */
  walkFiles(dir: ResolvedPath, include: Glob | null): void {
    this.#walked = walk(this.#policy, dir.rel, {
      baseId: dir.id,
      accept: (e) => {
        if (e.kind === "file" && (include === null || include.matches(e.sub))) this.#found(e);
        // The batches hold the files found; the walk's own result would keep every one to the end.
        return false;
      },
      limit: Number.MAX_SAFE_INTEGER,
      pace: () => {
        if (this.#enough || this.filesFound - this.#sentFiles <= WALK_AHEAD) return undefined;
        const held = new Promise<void>((resolve) => this.#held = resolve);
        this.#dispatch(); // the first worker, left to the walk, may search meanwhile
        return held;
      },
    }).then(
      () => {},
      (e) => {
        if (e !== STOP_WALK) throw e;
      },
    ).finally(() => {
      this.#walking = false;
      this.#dispatch();
      this.#notify();
    });
    this.#walked.catch(() => {}); // a failed walk is reported where it is awaited
  }

  /** Ends the walk at the next file it finds. */
  stopWalk(): void {
    this.#enough = true;
    this.#release();
  }

  /** Ends the walk at the next file it finds, and waits for it; says whether it found one. */
  async finishWalk(): Promise<boolean> {
    this.stopWalk();
    await this.#walked;
    return this.#moreFiles;
  }

  /** The next batch in walk order with its reply; null once the walk is over and all are taken. */
  async nextReply(): Promise<
    { batch: Batch; reply: WorkerResult<FindInFilesResult> } | null
  > {
    while (true) {
      const batch = this.#batches[this.#taken];
      if (batch?.reply) {
        const reply = await batch.reply;
        this.#batches[this.#taken++] = null;
        return { batch, reply };
      }
      if (!this.#walking && this.#taken >= this.#batches.length) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  #found(e: WalkEntry): void {
    if (this.#enough) {
      this.#moreFiles = true;
      throw STOP_WALK;
    }
    this.filesFound++;
    this.#unbatched.push(e);
    if (this.#unbatched.length >= BATCH) {
      this.#cut();
      this.#dispatch();
    } else if (!this.#flushing) {
      // Runs when the walk next waits on a worker: a partial batch, if a worker is idle.
      this.#flushing = true;
      queueMicrotask(() => {
        this.#flushing = false;
        this.#dispatch();
      });
    }
  }

  /** The files found and not yet in a batch become the next batch. */
  #cut(): void {
    const entries = this.#unbatched;
    this.#unbatched = [];
    this.#batches.push({ first: this.#batched, count: entries.length, entries, reply: null });
    this.#batched += entries.length;
  }

  #notify(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  /** Lets a held walk go on. */
  #release(): void {
    const go = this.#held;
    this.#held = null;
    go?.();
  }

  #dispatch(): void {
    if (this.#enough) return;
    const pool = this.#policy.worker.pool;
    // While the walk goes on, the first worker is left to it: the walk waits on each listing.
    const walking = this.#walking && this.#held === null;
    const workers = walking && pool.length > 1 ? pool.slice(1) : pool;
    // A partial batch only when a worker would otherwise wait (or the walk is over).
    if (this.#unbatched.length > 0 && this.#sent === this.#batches.length) {
      if (!this.#walking || this.#sent - this.#answered < workers.length) this.#cut();
    }
    while (
      this.#sent < this.#batches.length && this.#sent - this.#answered < workers.length * AHEAD
    ) {
      this.#send(this.#batches[this.#sent++]!, workers);
    }
    if (this.#held && this.filesFound - this.#sentFiles <= WALK_RESUME) this.#release();
    this.#notify();
  }

  /** The absolute path a file of the walk is searched at. */
  pathOf(entry: WalkEntry): string {
    return `${this.#policy.workspace.root}/${entry.rel}`;
  }

  #send(batch: Batch, workers: readonly EffectWorker[]): void {
    const limits = this.#limits;
    const paths: string[] = [];
    const hashWanted = new Uint8Array(batch.count);
    this.#sentFiles += batch.count;
    for (let i = 0; i < batch.count; i++) {
      const entry = batch.entries[i];
      paths.push(this.pathOf(entry));
      if (labelNeedsHash(this.#policy, entry.rel)) hashWanted[i] = 1;
    }
    batch.reply = fanout(workers, {
      op: "findInFiles",
      paths,
      needle: this.#needle,
      maxBytes: limits.searchFileBytes,
      maxLines: limits.searchLines,
      lineChars: limits.searchLineChars,
      hashWanted,
    });
    batch.reply.then(() => {
      this.#answered++;
      this.#dispatch();
    });
  }
}
