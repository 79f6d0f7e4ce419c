/**
 * Runs one glob measurement in a child process, so that a matcher that backtracks for minutes
 * is stopped by killing the process: a regular expression stuck in V8 ignores a Worker's
 * terminate(), and its thread would keep a core busy until the bench exits.
 *
 * picomatch is the bench's yardstick, not a dependency of the product: it is pinned here, by its
 * full specifier, and kept out of `deno.json`'s import map (docs/decisions.md, "Test and bench
 * dependencies").
 */
import picomatch from "npm:picomatch@4.0.7";
import { compileGlob } from "../../src/util/glob.ts";
import { BudgetExceeded, naiveMatch } from "./naive_glob.ts";

export interface GlobJob {
  matcher: "compileGlob" | "picomatch" | "naive";
  pattern: string;
  text: string;
  /** Stop repeating once this much time was spent (at least one run is always made). */
  budgetMs: number;
}

export type GlobResult =
  | { ok: true; perMatchMs: number; matched: boolean; runs: number }
  | { ok: false; reason: string };

function main(job: GlobJob): GlobResult {
  const { matcher, pattern, text, budgetMs } = job;
  let test: (s: string) => boolean;
  if (matcher === "compileGlob") {
    const glob = compileGlob(pattern);
    test = (s) => glob.matches(s);
  } else if (matcher === "picomatch") {
    const isMatch = picomatch(pattern, { dot: true, basename: !pattern.includes("/") });
    test = (s) => isMatch(s);
  } else {
    test = (s) => naiveMatch(pattern, s);
  }
  try {
    const w = performance.now();
    let matched = test(text); // warm-up, and a first idea of the cost
    const reps = performance.now() - w > 1 ? 1 : 20;
    const samples: number[] = [];
    const start = performance.now();
    while (samples.length < 500 && (samples.length < 5 || performance.now() - start < budgetMs)) {
      const t = performance.now();
      // Several matches per sample, so the timer's resolution does not round them away.
      for (let i = 0; i < reps; i++) matched = test(text);
      samples.push((performance.now() - t) / reps);
    }
    samples.sort((a, b) => a - b);
    return {
      ok: true,
      perMatchMs: samples[samples.length >> 1],
      matched,
      runs: samples.length * reps,
    };
  } catch (e) {
    return { ok: false, reason: e instanceof BudgetExceeded ? e.message : String(e) };
  }
}

if (import.meta.main) {
  const job = JSON.parse(await new Response(Deno.stdin.readable).text()) as GlobJob;
  console.log(JSON.stringify(main(job)));
}
