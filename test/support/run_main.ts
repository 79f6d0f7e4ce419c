/**
 * Runs Brave Bot's real entry point as a child process with exactly the binary's permission
 * flags, for tests of the command line.
 */
import { MAIN_TS, mainFlags } from "./flags.ts";

export interface MainResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runMain(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<MainResult> {
  const child = spawnMain(args, {
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "null" : "piped",
  });
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    try {
      await w.write(new TextEncoder().encode(options.stdin));
      await w.close();
    } catch (e) {
      // A program that stops reading at its limit closes the pipe: that is its right.
      if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
    }
  }
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  const out = await child.output();
  clearTimeout(timer);
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * Starts the real entry point with the binary's flags and returns the child, for tests that
 * act on it while it runs (a kill, an interrupt). Output is piped unless told otherwise.
 */
export function spawnMain(
  args: string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    stdin?: "null" | "piped";
    output?: "null" | "piped";
  } = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...mainFlags(), MAIN_TS, ...args],
    env: { NO_COLOR: "1", ...options.env },
    cwd: options.cwd,
    stdin: options.stdin ?? "null",
    stdout: options.output ?? "piped",
    stderr: options.output ?? "piped",
  }).spawn();
}

/** Polls `done` every 50 ms, at most `tries` times: a bounded wait on a server's progress. */
export async function waitUntil(
  done: () => boolean,
  tries = 300,
  what = "the awaited condition",
): Promise<void> {
  for (let i = 0; i < tries && !done(); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  // A wait that runs out fails the test here, rather than letting it go on as if it had come.
  if (!done()) throw new Error(`waitUntil: ${what} did not happen within ${tries * 50} ms`);
}
