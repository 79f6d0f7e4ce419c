/**
 * NO_COLOR sets the colour level to none everywhere (issue 17): chalk-style colour libraries
 * (Ink's chalk) ignore NO_COLOR and read only FORCE_COLOR, at import, so the command
 * line sets FORCE_COLOR=0 first. Checked with the binary's own permission flags, which must let
 * the main thread write it.
 */
import assert from "node:assert/strict";
import { mainFlags } from "./support/flags.ts";

const PROBE = new URL("./support/colour_probe.ts", import.meta.url).pathname;

async function probe(env: Record<string, string>): Promise<{ force: string; code: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...mainFlags(), PROBE],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const [, force, code] = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { force, code: JSON.parse(code) };
}

Deno.test("NO_COLOR: a colour library imported after start-up colours nothing", async () => {
  // NO_COLOR wins over a FORCE_COLOR the person set.
  const off = await probe({ NO_COLOR: "1", FORCE_COLOR: "3" });
  assert.equal(off.force, "FORCE_COLOR=0");
  assert.equal(off.code, "const x = 1;");
  // The same library does colour when forced and NO_COLOR is unset or empty (the convention).
  const forced: Record<string, string>[] = [{ FORCE_COLOR: "3" }, {
    NO_COLOR: "",
    FORCE_COLOR: "3",
  }];
  for (const env of forced) {
    const on = await probe(env);
    assert.equal(on.force, "FORCE_COLOR=3");
    assert.ok(on.code.includes("\x1b["), "the probe proves nothing: no colour even when forced");
  }
  assert.equal((await probe({})).force, "FORCE_COLOR=unset");
});
