/**
 * A textbook backtracking glob matcher, the baseline the glob benchmark compares against: it
 * tries every split for each `*` and `**`, so a hostile pattern costs time exponential in its
 * number of stars. It counts its steps and gives up past a budget, so the bench cannot hang.
 */

export class BudgetExceeded extends Error {
  constructor(readonly steps: number) {
    super(`gave up after ${steps} steps`);
  }
}

/** Same dialect as compileGlob: `*`, `?`, `**` (whole segments); a slash-less pattern matches the last segment. */
export function naiveMatch(pattern: string, path: string, budget = 20_000_000): boolean {
  const text = pattern.includes("/") ? path : path.slice(path.lastIndexOf("/") + 1);
  let steps = 0;
  const match = (pi: number, si: number): boolean => {
    if (++steps > budget) throw new BudgetExceeded(steps);
    if (pi === pattern.length) return si === text.length;
    if (pattern.startsWith("**/", pi)) {
      // Zero or more whole segments: try every segment start from here on.
      for (let k = si; k <= text.length; k++) {
        if ((k === si || text[k - 1] === "/") && match(pi + 3, k)) return true;
      }
      return false;
    }
    if (pattern.startsWith("**", pi) && pi + 2 === pattern.length) return true;
    const c = pattern[pi];
    if (c === "*") {
      for (let k = si; k <= text.length; k++) {
        if (match(pi + 1, k)) return true;
        if (text[k] === "/") break;
      }
      return false;
    }
    if (si >= text.length) return false;
    if (c === "?") return text[si] !== "/" && match(pi + 1, si + 1);
    return c === text[si] && match(pi + 1, si + 1);
  };
  return match(0, 0);
}
