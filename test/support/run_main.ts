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
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...mainFlags(), MAIN_TS, ...args],
    env: { NO_COLOR: "1", ...options.env },
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
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
