/**
 * The one edit distance: the command line's did-you-mean, a config file's mistyped key and
 * load_skill's "close:" hint all measure names with it.
 */

/**
 * Edit distance with adjacent transpositions (optimal string alignment): an insertion, a
 * deletion, a substitution or a swap of two neighbours is one step, so `trsut` is one step from
 * `trust`, `doctr` one from `doctor`. UTF-16 units are compared. Three rows of the shorter
 * string's length are kept, so a long text from the planner costs time in proportion to both
 * lengths but memory only in proportion to the shorter.
 */
export function editDistance(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current[j] = d;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length];
}

/**
 * The name `word` is a slip for, or null: one edit away (two for names of seven characters or
 * more), ignoring case, the nearest winning (the first listed on a tie). A word that is one of
 * the names is no slip, nor is a word much longer than any name could be; names of one or two
 * characters are never offered (one edit is half of them).
 */
export function nearestName(word: string, names: readonly string[]): string | null {
  if (names.includes(word) || word.length > 64) return null;
  const w = word.toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    if (name.length < 3) continue;
    const distance = editDistance(w, name.toLowerCase());
    if (distance > (name.length >= 7 ? 2 : 1)) continue;
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best?.name ?? null;
}
