/**
 * A process racing the effect worker: in `ws`, the folder `d` is put aside, a link to `outside`
 * put in its place, and the folder put back, over and over. Bounded: 2,000 flips or 5 s,
 * whichever first. `done` resolves with the number of flips made.
 */
export function startFlipper(ws: string, outside: string): { done: Promise<number> } {
  const child = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      `cd "$1" || exit 1; i=0; end=$(( $(date +%s) + 5 ))
       while [ $i -lt 2000 ] && [ $(date +%s) -lt $end ]; do
         mv d d.real && ln -s "$2" d && rm d && mv d.real d; i=$((i+1))
       done; echo $i`,
      "flipper",
      ws,
      outside,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  return {
    done: child.output().then((o) => Number(new TextDecoder().decode(o.stdout).trim())),
  };
}
