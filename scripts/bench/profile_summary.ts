/**
 * Summarises V8 CPU profiles (from `deno run --cpu-prof --cpu-prof-dir=DIR …`): self time per
 * function, heaviest first, for each profile in DIR (one per isolate: the main thread and each
 * worker). Used to find where a missed target's time goes.
 *
 *   deno run --allow-read scripts/bench/profile_summary.ts DIR [top=25]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function selfTimes(profile: Profile): { name: string; ms: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    const f = node.callFrame;
    const file = f.url.replace(/^.*\/(src|scripts|node_modules|ext)\//, "$1/");
    const name = `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
    const next = profile.timeDeltas[i + 1] ?? 0;
    totals.set(name, (totals.get(name) ?? 0) + next / 1000);
  }
  return [...totals].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
}

if (import.meta.main) {
  const dir = Deno.args[0];
  const top = Number(Deno.args[1] ?? 25);
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".cpuprofile")) continue;
    const profile = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) as Profile;
    const total = (profile.endTime - profile.startTime) / 1000;
    console.log(`\n${e.name}: ${total.toFixed(0)} ms`);
    for (const { name, ms } of selfTimes(profile).slice(0, top)) {
      console.log(`${ms.toFixed(1).padStart(9)} ms  ${name}`);
    }
  }
}
