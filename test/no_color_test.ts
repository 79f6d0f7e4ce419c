/**
 * NO_COLOR sets the colour level to none everywhere (issue 17): the terminal UI's colour library
 * reads only FORCE_COLOR, at import, so the command line sets FORCE_COLOR=0 first. Checked with
 * the binary's own permission flags, which must let the main thread write it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mainFlags } from "./support/flags.ts";

const MAIN = new URL("../src/cli/main.ts", import.meta.url).href;

async function forceColourAfterStart(env: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "bb-no-color-" });
  try {
    const probe = join(dir, "probe.ts");
    // What a library importing after start-up sees: the environment as main() left it.
    await Deno.writeTextFile(
      probe,
      `import process from "node:process";\n` +
        `import { main } from "${MAIN}";\n` +
        `await main(["--version"]);\n` +
        `console.log("FORCE_COLOR=" + (process.env.FORCE_COLOR ?? "unset"));\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...mainFlags(), probe],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("NO_COLOR: FORCE_COLOR is 0 before anything can import a colour library", async () => {
  assert.equal(await forceColourAfterStart({ NO_COLOR: "1" }), "FORCE_COLOR=0");
  // NO_COLOR wins over a FORCE_COLOR the person set.
  assert.equal(await forceColourAfterStart({ NO_COLOR: "1", FORCE_COLOR: "3" }), "FORCE_COLOR=0");
  // Without it (or with it empty, as the convention says) nothing is changed.
  assert.equal(await forceColourAfterStart({}), "FORCE_COLOR=unset");
  assert.equal(await forceColourAfterStart({ NO_COLOR: "", FORCE_COLOR: "1" }), "FORCE_COLOR=1");
});
