/**
 * search (tools.md): a literal substring over workspace files. Files are read in parallel
 * through the worker (readMany batches, several in flight) and searched as bytes with a native
 * substring search; only matching lines are ever decoded. The result is shown only when every
 * file it touches (and every name in it) is trusted; otherwise the whole result becomes one
 * reference and the planner is shown counts.
 */
import { z } from "zod";
import { defineTool, failure, shown, toolSchema } from "./tool.ts";
import { resolvePath } from "../policy/paths.ts";
import { isGitPath } from "../policy/git_dir.ts";
import { join, type Label, TRUSTED_PUBLIC, UNTRUSTED_PUBLIC } from "../policy/label.ts";
import { decodeText, hasNul, labelOfBytes } from "../policy/reads.ts";
import { compileGlob } from "../util/glob.ts";
import { compileNeedle } from "../util/bytes_search.ts";
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

const BATCH = 64;
const IN_FLIGHT = 3;

function sizeText(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}

interface Match {
  sub: string;
  line: number;
  text: string;
}

/**
 * Matching lines of one file, from its text (already decoded, so validated): each line once,
 * however many times it matches. The engine's string search and newline scan do the work.
 */
function matchLines(
  text: string,
  needle: string,
  room: number,
  lineChars: number,
): { lines: { line: number; text: string }[]; more: boolean } {
  const lines: { line: number; text: string }[] = [];
  let at = text.indexOf(needle);
  let start = 0; // start of the line numbered lineNo
  let lineNo = 1;
  while (at !== -1) {
    if (lines.length >= room) return { lines, more: true };
    let nl = text.indexOf("\n", start);
    while (nl !== -1 && nl < at) {
      lineNo++;
      start = nl + 1;
      nl = text.indexOf("\n", start);
    }
    let line = text.slice(start, nl === -1 ? text.length : nl);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > lineChars) {
      line = `${line.slice(0, lineChars)} … [line cut: ${line.length} characters]`;
    }
    lines.push({ line: lineNo, text: line });
    if (nl === -1) break;
    start = nl + 1;
    lineNo++;
    at = text.indexOf(needle, start);
  }
  return { lines, more: false };
}

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
    const listed = await walk(policy, dir.rel, {
      accept: (e) => e.kind === "file" && (include === null || include.matches(e.sub)),
      limit: Number.MAX_SAFE_INTEGER,
    });
    const files = listed.entries;
    const needleBytes = new TextEncoder().encode(args.pattern);
    const find = compileNeedle(needleBytes);
    // The pattern as the bytes spell it (a lone surrogate becomes U+FFFD, as in the files).
    const needleText = new TextDecoder().decode(needleBytes);

    const matches: Match[] = [];
    const labels: Label[] = [];
    let matchedFiles = 0;
    let searched = 0;
    let binary = 0;
    let oversized = 0;
    let unreadable = 0;
    let truncated = false;
    const read = (from: number) =>
      policy.worker.call({
        op: "readMany",
        paths: files.slice(from, from + BATCH).map((f) => `${policy.workspace.root}/${f.rel}`),
        maxBytes: limits.searchFileBytes,
      });
    const inFlight: ReturnType<typeof read>[] = [];
    let nextBatch = 0;
    const fill = () => {
      while (inFlight.length < IN_FLIGHT && nextBatch < files.length) {
        inFlight.push(read(nextBatch));
        nextBatch += BATCH;
      }
    };
    fill();
    let base = 0;
    while (inFlight.length > 0 && !truncated) {
      const batch = await inFlight.shift()!;
      fill();
      if (!batch.ok) return failure(`the files could not be read (${batch.error.name})`);
      for (let i = 0; i < batch.value.length && !truncated; i++) {
        const item = batch.value[i];
        const entry: WalkEntry = files[base + i];
        if (item.skipped === "too_big") oversized++;
        else if (item.skipped) unreadable++;
        if (!item.bytes) continue;
        searched++;
        const bytes = item.bytes;
        if (hasNul(bytes)) {
          binary++;
          continue;
        }
        // Bytes first: most files do not match and are never decoded.
        if (find(bytes, 0) === -1) continue;
        const text = decodeText(bytes);
        if (text === null) {
          binary++;
          continue;
        }
        const found = matchLines(
          text,
          needleText,
          limits.searchLines - matches.length,
          limits.searchLineChars,
        );
        matchedFiles++;
        labels.push(await labelOfBytes(policy, entry.rel, bytes));
        if (!entry.nameShown) labels.push(UNTRUSTED_PUBLIC);
        for (const m of found.lines) matches.push({ sub: entry.sub, ...m });
        if (found.more) truncated = true;
        else if (matches.length >= limits.searchLines && base + i + 1 < files.length) {
          truncated = true;
        } else if (matches.length >= limits.searchLines) break;
      }
      base += BATCH;
    }
    // Reads still in flight after a truncation are simply dropped.
    await Promise.all(inFlight);

    const resultLabel = join(...labels);
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
