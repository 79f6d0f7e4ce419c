/**
 * The interactive session asks the policy layer only through its port (`PersonPolicy`, from
 * `policy/api.ts`): not through the rule files (shell.ts, show.ts, runs.ts, …) behind it.
 */
import assert from "node:assert/strict";

const FILES = ["interactive.ts", "slash_commands.ts"];

Deno.test("interactive session: the policy layer only through policy/api.ts", async () => {
  for (const name of FILES) {
    const text = await Deno.readTextFile(new URL(`./${name}`, import.meta.url));
    const policy = [...text.matchAll(/(?:from|import\()\s*["']([^"']*\/policy\/[^"']+)["']/g)]
      .map((m) => m[1]);
    assert.ok(
      policy.every((s) => s === "../policy/api.ts"),
      `${name} imports ${policy.join(", ")}`,
    );
  }
  // The check sees imports at all: the baseline file names the port.
  const session = await Deno.readTextFile(new URL("./interactive.ts", import.meta.url));
  assert.match(session, /from "\.\.\/policy\/api\.ts"/);
});
