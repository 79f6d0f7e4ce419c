/**
 * Asks Deno, from inside the worker, whether an access is refused. `bravebot doctor` and the
 * wall tests use it to show that the second wall stands without the policy layer.
 */

export async function probe(
  what: "read" | "write" | "net" | "env",
  target: string,
): Promise<{ refused: boolean; error: string | null }> {
  try {
    switch (what) {
      case "read":
        await Deno.readFile(target);
        break;
      case "write":
        await Deno.writeTextFile(target, "bravebot probe\n", { append: true });
        break;
      case "net": {
        const [host, port] = target.split(":");
        const conn = await Deno.connect({ hostname: host, port: Number(port) });
        conn.close();
        break;
      }
      case "env":
        // Under --ignore-env a denied variable reads as undefined instead of throwing: the
        // wall stands when the value is not visible, whichever way Deno says so.
        if (Deno.env.get(target) === undefined) {
          return { refused: true, error: `${target} is not visible (undefined)` };
        }
        break;
    }
    return { refused: false, error: null };
  } catch (e) {
    const name = (e as Error).name;
    return { refused: name === "NotCapable", error: `${name}: ${(e as Error).message}` };
  }
}
