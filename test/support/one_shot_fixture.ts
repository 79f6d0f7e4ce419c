/**
 * One-shot runs of the real program against the scripted model: a temporary workspace, state
 * folder and config, the mock model started in this process, and `main.ts` run as a child with
 * exactly the binary's permission flags. Everything is removed afterwards.
 */
import { join } from "node:path";
import { type MockModel, type MockReply, startMockModel } from "../../scripts/mock-model.ts";
import { writeTree } from "./policy_fixture.ts";
import { type MainResult, runMain } from "./run_main.ts";

export interface OneShotCase {
  files?: Record<string, string>;
  replies: MockReply[];
  /** The approval policy file's contents (object, or raw text), if any. */
  approvals?: unknown;
  config?: Record<string, unknown>;
  args?: string[];
  prompt?: string;
  /** Omit --model (to test that it is required). */
  noModel?: boolean;
  /** Point --endpoint somewhere else (e.g. a closed port). */
  endpoint?: string;
  timeoutMs?: number;
  /** Bytes piped to the program's stdin (default: none, stdin is /dev/null). */
  stdin?: string;
  /** The program's environment, over the test's own (PATH without bwrap). */
  env?: Record<string, string>;
  /** Runs on the workspace after `files` are written: links, FIFOs, what writeTree cannot make. */
  setup?: (root: string) => Promise<void>;
}

export interface OneShotRun extends MainResult {
  mock: MockModel;
  root: string;
  stateDir: string;
  /** The session folders' transcripts, parsed. */
  transcripts: unknown[][];
  /** Files of the workspace after the run. */
  read(rel: string): Promise<string>;
  /** Every byte the state folder holds after the run (transcripts, refs, audit, trust…). */
  allState(): Promise<string>;
  /** A second one-shot run with `--continue`: same workspace, state and config, another endpoint. */
  resume(prompt: string, endpoint: string, args?: string[]): Promise<MainResult>;
}

export async function oneShotRun(
  c: OneShotCase,
  fn: (run: OneShotRun) => Promise<void> | void,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-1shot-ws-" }));
  const stateDir = await Deno.makeTempDir({ prefix: "bb-1shot-state-" });
  const mock = await startMockModel({ script: { replies: c.replies } });
  try {
    await writeTree(root, c.files ?? {});
    await c.setup?.(root);
    const configPath = join(stateDir, "config.json");
    await Deno.writeTextFile(configPath, JSON.stringify(c.config ?? {}));
    /** `-p PROMPT` in this workspace, state folder and config, against `endpoint`. */
    const base = (prompt: string, endpoint: string, model = true) => [
      "-p",
      prompt,
      "-w",
      root,
      "--state-dir",
      join(stateDir, "state"),
      "--config",
      configPath,
      "--endpoint",
      endpoint,
      ...(model ? ["--model", "mock-planner"] : []),
    ];
    const args = base(c.prompt ?? "do the task", c.endpoint ?? mock.url, !c.noModel);
    if (c.approvals !== undefined) {
      const approvalsPath = join(stateDir, "approvals.json");
      await Deno.writeTextFile(
        approvalsPath,
        typeof c.approvals === "string" ? c.approvals : JSON.stringify(c.approvals),
      );
      args.push("--approvals", approvalsPath);
    }
    args.push(...(c.args ?? []));
    const result = await runMain(args, {
      timeoutMs: c.timeoutMs ?? 90_000,
      stdin: c.stdin,
      env: c.env,
    });
    const transcripts: unknown[][] = [];
    for await (const file of walkTranscripts(join(stateDir, "state"))) {
      const text = await Deno.readTextFile(file);
      transcripts.push(text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)));
    }
    await fn({
      ...result,
      mock,
      root,
      stateDir,
      transcripts,
      read: (rel) => Deno.readTextFile(join(root, rel)),
      allState: () => readAll(join(stateDir, "state")),
      resume: (prompt, endpoint, more = []) =>
        runMain([...base(prompt, endpoint), "--continue", ...more]),
    });
  } finally {
    await mock.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(stateDir, { recursive: true });
  }
}

async function readAll(dir: string): Promise<string> {
  let text = "";
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) text += await readAll(p);
    else if (e.isFile) text += new TextDecoder().decode(await Deno.readFile(p)) + "\n";
  }
  return text;
}

async function* walkTranscripts(dir: string): AsyncGenerator<string> {
  let entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch {
    return;
  }
  entries = entries.sort((a, b) => a.name < b.name ? -1 : 1);
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* walkTranscripts(p);
    else if (e.name === "transcript.jsonl") yield p;
  }
}

/** A stack trace reached the person: lines like `    at foo (file:///…)`. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+(:\d+:\d+|\(native\))/m.test(text);
}
