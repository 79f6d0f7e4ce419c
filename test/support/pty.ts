/**
 * Drives the real program in a pseudo-terminal (test/support/pty_drive.py): main.ts with the
 * binary's own flags, step by step — wait until the screen matches `expect`, then type `send`.
 * One harness for every PTY test, so each test says only what the person does and sees.
 *
 * No fixed pauses: keys go as soon as the screen shows what they answer, except the answer to a
 * question, which a question takes only after its quiet time (a key sooner is type-ahead).
 */
import { join } from "node:path";
import { MAIN_TS, mainFlags } from "./flags.ts";
import { ARM_MS } from "../../src/person/ink/screen.ts";

const PTY = new URL("./pty_drive.py", import.meta.url).pathname;

export interface PtyStep {
  /** A regular expression the screen (ANSI removed) must come to match. */
  expect?: string;
  /** What is typed once it does. */
  send?: string;
  /** Seconds to wait for `expect` (the driver's default otherwise). */
  timeout?: number;
  /**
   * `expect` is a question and `send` answers it: the keys go once the question has been on the
   * screen for its quiet time ({@link ARM_MS}), as a person's would. Any other keys go at once.
   */
  answer?: boolean;
  /** Resize the terminal to this many columns once matched (before `send`). */
  columns?: number;
  /** Seconds to wait after the match before typing (otherwise 0, or the quiet time where `answer` is set). */
  pause?: number;
}

export interface PtyRun {
  /** What the terminal showed, ANSI removed (stdout and stderr of the driver). */
  screen: string;
  /** The bytes the program wrote to the terminal, as they were. */
  raw: string;
  /** Every step matched and the program exited 0. */
  ok: boolean;
  /** The same bytes undecoded, for replaying them in a terminal (test/support/terminal.ts). */
  bytes: Uint8Array;
  /** The terminal's width at the start, and each resize: after how many bytes, to what width. */
  columns: number;
  resizes: { at: number; columns: number }[];
}

/**
 * Seconds from seeing a question to answering it: its quiet time, and a fifth of a second for
 * the question to be marked drawn after its text reaches the terminal (an effect after Ink's
 * write, later on a loaded machine).
 */
const ANSWER_PAUSE_S = (ARM_MS + 200) / 1000;

/** Keys as a terminal sends them. */
export const KEY = {
  enter: "\r",
  up: "\u001b[A",
  down: "\u001b[B",
  esc: "\u001b",
  ctrlC: "\u0003",
  ctrlD: "\u0004",
  /** A bracketed paste of `text` (mode 2004). */
  paste: (text: string) => `\u001b[200~${text}\u001b[201~`,
};

/**
 * Runs `main.ts ARGS…` in a pseudo-terminal through `steps`; `env` is the program's whole env;
 * `columns` the terminal's width (120 unless given).
 */
export async function drivePty(
  steps: PtyStep[],
  args: string[],
  env: Record<string, string> = { TERM: "xterm-256color", NO_COLOR: "1" },
  terminal: { columns?: number } = {},
): Promise<PtyRun> {
  const dir = await Deno.makeTempDir({ prefix: "bb-pty-" });
  try {
    const stepsFile = join(dir, "steps.json");
    const rawFile = join(dir, "raw.bin");
    const driven = steps.map(({ answer, ...step }) => ({
      ...step,
      pause: step.pause ?? (answer ? ANSWER_PAUSE_S : 0),
    }));
    await Deno.writeTextFile(stepsFile, JSON.stringify(driven));
    const out = await new Deno.Command("python3", {
      args: [PTY, stepsFile, "--", Deno.execPath(), "run", ...mainFlags(), MAIN_TS, ...args],
      env: {
        ...env,
        PTY_RAW: rawFile,
        ...(terminal.columns ? { PTY_COLS: String(terminal.columns) } : {}),
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    const bytes = await Deno.readFile(rawFile).catch(() => new Uint8Array());
    const resized: [number, number][] = JSON.parse(
      await Deno.readTextFile(`${rawFile}.resizes`).catch(() => "[]"),
    );
    return {
      screen: text(out.stdout) + text(out.stderr),
      raw: text(bytes),
      ok: out.code === 0,
      bytes,
      columns: terminal.columns ?? 120,
      resizes: resized.map(([at, columns]) => ({ at, columns })),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The arguments of a session in `ws` against the mock model at `endpoint`. */
export function sessionArgs(
  o: { ws: string; state: string; config: string; endpoint: string; model?: string },
): string[] {
  return [
    "-w",
    o.ws,
    "--state-dir",
    o.state,
    "--config",
    o.config,
    "--endpoint",
    o.endpoint,
    "--model",
    o.model ?? "mock",
  ];
}

/** A session's places for a PTY test: a workspace, a state folder and an empty config. */
export interface SessionPlaces {
  root: string;
  ws: string;
  state: string;
  config: string;
  /** {@link sessionArgs} for these places, against the mock model at `endpoint`. */
  args(endpoint: string): string[];
  /** Removes everything under `root`. */
  remove(): Promise<void>;
}

/** Makes the places of one session in a new temporary folder (`files` written in the workspace). */
export async function sessionPlaces(
  prefix: string,
  files: Record<string, string> = {},
): Promise<SessionPlaces> {
  const root = await Deno.makeTempDir({ prefix });
  const ws = join(root, "ws");
  const state = join(root, "state");
  const config = join(root, "config.json");
  await Deno.mkdir(ws);
  for (const [rel, text] of Object.entries(files)) await Deno.writeTextFile(join(ws, rel), text);
  await Deno.writeTextFile(config, "{}");
  return {
    root,
    ws,
    state,
    config,
    args: (endpoint) => sessionArgs({ ws, state, config, endpoint }),
    remove: () => Deno.remove(root, { recursive: true }),
  };
}
