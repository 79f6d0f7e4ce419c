/**
 * search (tools.md): a literal substring over workspace files. The policy layer walks and
 * chooses the files; the effect workers search them in place (findInFiles, split across the
 * pool while the walk goes on) and send back only counts, matching lines and hashes. The
 * result is labeled here, from each matched file's hash and name: it is shown only when every
 * file it touches (and every name in it) is trusted; otherwise the whole result becomes one
 * reference and the planner is shown counts.
 */
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import { resolvePath } from "../policy/paths.ts";
import { isGitPath } from "../policy/git_dir.ts";
import { joinLabels, type Label, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../util/label.ts";
import { labelNeedsHash, labelOfHash } from "../policy/reads.ts";
import { compileGlob } from "../util/glob.ts";
import type { WorkerResult } from "../worker/client.ts";
import { fanout } from "../worker/pool.ts";
import { FIND, type FindInFilesResult } from "../worker/search_protocol.ts";
import {
  bracesHint,
  displayBase,
  displayPath,
  globField,
  pathField,
  plural,
  regexHint,
  shownPath,
  typeError,
} from "./fs_common.ts";
import { walk, type WalkEntry } from "./walk.ts";

const routing = z.strictObject({
  directory: pathField.optional().describe("workspace-relative, defaults to ."),
  include: globField.optional().describe("optional glob limiting which files are searched"),
});
const content = z.strictObject({
  pattern: z.string({ error: typeError("pattern", "a string of literal text") }).min(
    1,
    "pattern is empty",
  )
    .max(1024, "pattern is longer than 1024 characters")
    .describe("literal text; not a regular expression"),
});
const schema = toolSchema(routing, content);

/** Paths per findInFiles request: enough to pay for the round trip, few enough to spread. */
const BATCH = 64;
/** Requests each worker may hold unanswered: enough to keep it busy, few enough to stop soon. */
const AHEAD = 4;

function sizeText(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}

interface Match {
  sub: string;
  line: number;
  text: string;
}

interface Batch {
  /** Index of its first file in walk order. */
  first: number;
  count: number;
  reply: Promise<WorkerResult<FindInFilesResult>> | null;
}

/** Thrown from the walk's accept to end the walk once the search needs no more files. */
const STOP_WALK = Symbol("stop walk");

export const searchTool = defineTool({
  name: "search",
  description:
    "Find a literal substring (not a regex) in workspace files; returns matching lines. " +
    "directory defaults to .; include: optional glob.",
  routing,
  content,
  schema,
  async handler(args, ctx) {
    const policy = ctx.policy;
    const limits = ctx.settings.limits;
    const given = args.directory ?? ".";
    const resolved = await resolvePath(policy.workspace, given);
    if (!resolved.ok) return failure(resolved.error);
    const dir = resolved.value;
    if (dir.kind === "missing") return failure(`${given} does not exist`);
    if (dir.kind !== "directory") {
      return failure(
        `${given} is a file; search takes a directory (narrow to one file with include)`,
      );
    }
    if (isGitPath(dir.rel)) return failure(".git is never searched");
    const include = args.include !== undefined ? compileGlob(args.include) : null;
    const needle = new TextEncoder().encode(args.pattern);
    const pool = policy.worker.pool;
    const root = policy.workspace.root;

    // The walk and the search run together: each batch of paths goes to the pool's least busy
    // worker while the walk goes on, and the replies are taken in walk order, so the result is
    // the same as searching one file after another.
    const files: WalkEntry[] = [];
    const batches: Batch[] = [];
    let batched = 0; // files already in a batch
    let sent = 0; // batches sent
    let answered = 0; // batches sent and answered
    let walking = true;
    let enough = false; // no more files are needed; the next one found ends the walk
    let moreFiles = false; // a file was found after enough
    let wake: (() => void) | null = null;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const dispatch = () => {
      if (enough) return;
      // While the walk goes on, the first worker is left to it: the walk waits on each listing.
      const workers = walking && pool.length > 1 ? pool.slice(1) : pool;
      // A partial batch only when a worker would otherwise wait (or the walk is over).
      if (batched < files.length && sent === batches.length) {
        if (!walking || sent - answered < workers.length) {
          const count = Math.min(BATCH, files.length - batched);
          batches.push({ first: batched, count, reply: null });
          batched += count;
        }
      }
      while (sent < batches.length && sent - answered < workers.length * AHEAD) {
        const batch = batches[sent++];
        const paths: string[] = [];
        const hashWanted = new Uint8Array(batch.count);
        for (let i = 0; i < batch.count; i++) {
          const rel = files[batch.first + i].rel;
          paths.push(`${root}/${rel}`);
          if (labelNeedsHash(policy, rel)) hashWanted[i] = 1;
        }
        batch.reply = fanout(workers, {
          op: "findInFiles",
          paths,
          needle,
          maxBytes: limits.searchFileBytes,
          maxLines: limits.searchLines,
          lineChars: limits.searchLineChars,
          hashWanted,
        });
        batch.reply.then(() => {
          answered++;
          dispatch();
        });
      }
      notify();
    };
    let flushing = false;
    const walked = walk(policy, dir.rel, {
      accept: (e) => {
        if (e.kind !== "file" || (include !== null && !include.matches(e.sub))) return false;
        if (enough) {
          moreFiles = true;
          throw STOP_WALK;
        }
        files.push(e);
        if (files.length - batched >= BATCH) {
          batches.push({ first: batched, count: BATCH, reply: null });
          batched += BATCH;
          dispatch();
        } else if (!flushing) {
          // Runs when the walk next waits on a worker: a partial batch, if a worker is idle.
          flushing = true;
          queueMicrotask(() => {
            flushing = false;
            dispatch();
          });
        }
        return true;
      },
      limit: Number.MAX_SAFE_INTEGER,
    }).then(
      () => {},
      (e) => {
        if (e !== STOP_WALK) throw e;
      },
    ).finally(() => {
      walking = false;
      dispatch();
      notify();
    });
    walked.catch(() => {}); // a failed walk is reported where it is awaited
    /** Ends the walk at the next file it finds; says whether it found one. */
    const finishWalk = async (): Promise<boolean> => {
      enough = true;
      await walked;
      return moreFiles;
    };

    const matches: Match[] = [];
    const labels: Label[] = [];
    let matchedFiles = 0;
    let searched = 0;
    let binary = 0;
    let oversized = 0;
    let unreadable = 0;
    let truncated = false;
    let next = 0; // the batch to take next
    taking: while (true) {
      const batch = batches[next];
      if (!batch?.reply) {
        if (!walking && next >= batches.length) break;
        await new Promise<void>((resolve) => wake = resolve);
        continue;
      }
      const reply = await batch.reply;
      next++;
      if (!reply.ok) {
        await finishWalk();
        return failure(`the files could not be read (${reply.error.name})`);
      }
      const { status, found, lineNumbers } = reply.value;
      const texts = lineNumbers.length > 0 ? reply.value.texts.split("\n") : [];
      let f = 0;
      let line = 0; // the next of this reply's lines
      for (let i = 0; i < batch.count; i++) {
        const code = status[i];
        if (code === FIND.tooBig) oversized++;
        else if (code === FIND.unreadable) unreadable++;
        else if (code === FIND.binary) {
          searched++;
          binary++;
        } else if (code === FIND.none) searched++;
        else if (code === FIND.matched) {
          searched++;
          matchedFiles++;
          const entry = files[batch.first + i];
          const file = found[f++];
          const room = limits.searchLines - matches.length;
          labels.push(await labelOfHash(policy, entry.rel, file.sha256));
          if (!entry.nameShown) labels.push(UNTRUSTED_PUBLIC);
          for (let k = 0; k < Math.min(file.lines, room); k++) {
            matches.push({ sub: entry.sub, line: lineNumbers[line + k], text: texts[line + k] });
          }
          line += file.lines;
          if (file.more || file.lines > room) {
            truncated = true;
            break taking;
          }
          if (matches.length >= limits.searchLines) {
            // Exactly at the cap: truncated only if a file was left unsearched.
            const after = batch.first + i + 1;
            truncated = after < files.length || await finishWalk() || after < files.length;
            break taking;
          }
        } else {
          // FIND.notReached: the worker kept the cap's worth of lines in this request already,
          // so the result is cut here at the latest (the cases above normally end it first).
          truncated = true;
          break taking;
        }
      }
    }
    await finishWalk();

    const resultLabel = joinLabels(...labels);
    const counts = [
      `${plural(matches.length, "matching line")} in ${plural(matchedFiles, "file")}`,
      `searched ${plural(searched, "file")}`,
    ];
    if (binary > 0) counts.push(`skipped ${binary} binary`);
    if (oversized > 0) counts.push(`skipped ${oversized} over ${sizeText(limits.searchFileBytes)}`);
    if (unreadable > 0) counts.push(`${unreadable} unreadable`);
    const notes: string[] = [counts.join("; ")];
    if (truncated) {
      notes.push(
        `truncated at ${limits.searchLines} matching lines: the result is incomplete; ` +
          "narrow it with directory or include",
      );
    }
    if (matches.length === 0) {
      const hint = regexHint(args.pattern);
      if (hint) notes.push(hint);
      if (files.length === 0) {
        const braces = bracesHint(args.include);
        if (braces) notes.push(braces);
      }
    }
    const shownBase = displayBase(given);
    const body = matches.map((m) =>
      `${shownPath(displayPath(shownBase, m.sub))}:${m.line}: ${m.text}`
    );

    if (resultLabel.integrity === "U") {
      const bytes = new TextEncoder().encode([...body, ...notes.map((n) => `[${n}]`)].join("\n"));
      const ref = await policy.refs.add({
        kind: "file_content",
        label: resultLabel,
        size: bytes.length,
        lines: matches.length,
        tool: "search",
      }, bytes);
      await policy.record({
        tool: "search",
        routing: { directory: dir.rel, include: args.include ?? null },
        labels: { result: resultLabel },
        decision: `quarantined as ref:${ref.id}`,
        by: "rule",
      });
      return shown(
        [
          `the result touches files nobody vouched for, so it is quarantined as ref:${ref.id}; ` +
          `pass it to spawn_processor to work with it`,
          ...notes.map((n) => `[${n}]`),
        ].join("\n"),
        TRUSTED_PUBLIC,
      );
    }
    await policy.record({
      tool: "search",
      routing: { directory: dir.rel, include: args.include ?? null },
      labels: { result: resultLabel },
      decision: "shown (trusted)",
      by: "rule",
    });
    return shown([...body, ...notes.map((n) => `[${n}]`)].join("\n"), resultLabel);
  },
});
