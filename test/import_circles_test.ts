/**
 * No import circle in `src/` (docs/architecture.md). A circle is a set of modules each of which
 * reaches every other through imports; static, dynamic, re-exported, `import type` and
 * `new URL("….ts")` imports all count, since a type shared both ways ties the two modules as
 * tightly as a value (issue 22). The circles are the strongly connected components of the
 * import graph (Tarjan's algorithm), and each one is listed with the imports that close it.
 */
import assert from "node:assert/strict";
import { importGraph } from "./support/imports.ts";

/** The modules of each circle of `graph` (each sorted; a module importing itself is one too). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const frames: { node: string; edges: readonly string[]; at: number }[] = [];
    const enter = (node: string) => {
      index.set(node, next);
      low.set(node, next);
      next++;
      stack.push(node);
      onStack.add(node);
      frames.push({ node, edges: (graph.get(node) ?? []).filter((to) => graph.has(to)), at: 0 });
    };
    enter(root);
    while (frames.length) {
      const frame = frames[frames.length - 1];
      if (frame.at < frame.edges.length) {
        const to = frame.edges[frame.at++];
        if (!index.has(to)) enter(to);
        else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      frames.pop();
      const { node } = frame;
      if (frames.length) {
        const parent = frames[frames.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(node)!));
      }
      if (low.get(node) !== index.get(node)) continue;
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        members.push(member);
      } while (member !== node);
      if (members.length > 1 || frame.edges.includes(node)) found.push(members.sort());
    }
  }
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

Deno.test("import circles: circles() finds each circle and only circles", () => {
  const graph = new Map<string, string[]>([
    ["a", ["b"]],
    ["b", ["c", "x"]],
    ["c", ["a"]], // a -> b -> c -> a
    ["d", ["e"]],
    ["e", ["d", "npm"]], // d <-> e; "npm" is outside the graph
    ["f", ["f"]], // f imports itself
    ["g", ["a", "d"]], // reaches circles but is in none
    ["x", []],
  ]);
  assert.deepEqual(circles(graph), [["a", "b", "c"], ["d", "e"], ["f"]]);
  assert.deepEqual(circles(new Map([["a", ["b"]], ["b", []]])), []);
});

Deno.test("import circles: none in src/", async () => {
  const graph = new Map<string, string[]>();
  for (const [from, imports] of await importGraph()) {
    graph.set(from, [...new Set(imports.map((i) => i.to))]);
  }
  assert.ok(graph.size > 50, `found ${graph.size} files under src/`);
  const reported = circles(graph).map((members) => {
    const inside = new Set(members);
    const edges = members.flatMap((from) =>
      graph.get(from)!.filter((to) => inside.has(to)).map((to) => `${from} -> ${to}`)
    );
    return `circle of ${members.join(", ")}:\n  ${edges.join("\n  ")}`;
  });
  assert.deepEqual(reported, [], `import circles in src/:\n${reported.join("\n")}`);
});
