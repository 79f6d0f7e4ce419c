import assert from "node:assert/strict";

/** Runs `code` (with the writer imported) in a fresh process; what it wrote to each stream. */
async function written(code: string): Promise<{ stdout: string; stderr: string }> {
  const url = new URL("./output.ts", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `import * as o from "${url}"; ${code}`],
    env: { NO_COLOR: "1" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return {
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

const HOSTILE = JSON.stringify("a\x1b]52;c;cm0=\x07b\u202ec\x1b[8md\u{E0041}\n");

Deno.test("output (adversarial): whatever is printed, no control or invisible character reaches the stream", async () => {
  const { stdout, stderr } = await written(
    `o.printOut(${HOSTILE}); o.printErr(${HOSTILE}); o.writeOut("x\\ty");`,
  );
  const shown = "a⟦U+001B⟧]52;c;cm0=⟦U+0007⟧b⟦U+202E⟧c⟦U+001B⟧[8md⟦U+E0041⟧\n\n";
  assert.equal(stdout, `${shown}x⟦U+0009⟧y`);
  assert.equal(stderr, shown);
});

Deno.test("output: a caller's own colour passes only when it says so, and nothing else with it", async () => {
  const { stdout } = await written(
    `o.printOut("\\x1b[32mok\\x1b[39m \\x1b]8;;http://e/\\x1b\\\\l", { colour: true }); ` +
      `o.printOut("\\x1b[32mok\\x1b[39m");`,
  );
  assert.equal(
    stdout,
    "\x1b[32mok\x1b[39m ⟦U+001B⟧]8;;http://e/⟦U+001B⟧\\l\n⟦U+001B⟧[32mok⟦U+001B⟧[39m\n",
  );
});

Deno.test("output: eraseLine writes exactly its own sequence", async () => {
  assert.equal((await written("o.eraseLine();")).stdout, "\r\x1b[2K");
});
