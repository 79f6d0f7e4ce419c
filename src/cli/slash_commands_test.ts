import assert from "node:assert/strict";
import { COMMANDS, findCommand, HELP, SLASH_COMMANDS } from "./slash_commands.ts";

Deno.test("slash commands: /help and Tab completion are made from the one table", () => {
  assert.deepEqual(COMMANDS, SLASH_COMMANDS.map((c) => c.name));
  assert.equal(new Set(COMMANDS).size, COMMANDS.length, "a name is listed twice");
  const listed = HELP.filter((l) => l.startsWith("  /"));
  // Each command has one line of /help, in the table's order, with its arguments and its words.
  assert.equal(listed.length, SLASH_COMMANDS.length);
  SLASH_COMMANDS.forEach((c, i) => {
    const usage = `/${c.name}${c.args ? ` ${c.args}` : ""}`;
    assert.ok(listed[i].startsWith(`  ${usage} `), listed[i]);
    assert.ok(listed[i].endsWith(` ${c.help}`), listed[i]);
  });
  // An alias answers, and is neither completed nor listed.
  assert.equal(findCommand("/quit").command?.name, "exit");
  assert.ok(!COMMANDS.includes("quit"));
  assert.ok(!HELP.some((l) => l.includes("/quit")));
});

Deno.test("slash commands: the help's words start in one column, the wide usages' in another", () => {
  const listed = HELP.filter((l) => l.startsWith("  /"));
  const narrow = new Set<number>();
  const wide = new Set<number>();
  SLASH_COMMANDS.forEach((c, i) => {
    const usage = `/${c.name}${c.args ? ` ${c.args}` : ""}`;
    const start = listed[i].length - c.help.length;
    assert.ok(start >= 2 + usage.length + 1, listed[i]);
    (usage.length < 16 ? narrow : wide).add(start);
  });
  assert.deepEqual([...narrow], [18]);
  assert.equal(wide.size, 1);
});

Deno.test("slash commands: a line names its command and its words", () => {
  const found = findCommand("/trust   add  docs ");
  assert.equal(found.command?.name, "trust");
  assert.deepEqual(found.args, ["add", "docs"]);
  assert.equal(findCommand("/nonsense x").command, undefined);
  assert.equal(findCommand("/nonsense x").typed, "nonsense");
  assert.equal(findCommand("/").typed, "");
});
