/**
 * A count with its noun, agreeing: `1 line`, `2 lines`, `0 lines`. One function for every count
 * a person or the planner reads, so nothing says "1 lines" or "line(s)".
 *
 * @example
 * ```ts
 * plural(1, "line");                   // "1 line"
 * plural(3, "entry", "entries");       // "3 entries"
 * ```
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
