/**
 * The routing/content split of docs/tools.md#the-eleven-tools is built, not declared: each tool's
 * schema is the union of its routing, content and modifiers, no name stands in two parts, and the
 * routing is the table's.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { allTools } from "./registry.ts";
import { defineTool, shown } from "./tool.ts";
import { TRUSTED_PUBLIC } from "../util/label.ts";

const keys = (o: z.ZodObject) => Object.keys(o.shape).sort();

Deno.test("tools: the eleven schemas are their parts, and the routing is docs/tools.md's", () => {
  const routing: Record<string, string[]> = {
    read_file: ["path", "path_ref"],
    list_files: ["directory", "pattern"],
    search: ["directory", "include"],
    write_file: ["path", "path_ref"],
    edit_file: ["path", "path_ref"],
    run: ["pipeline"],
    read_output: ["ref"],
    spawn_processor: ["about"],
    load_skill: ["name"],
    ask_user: ["questions"],
    todo_write: [],
  };
  const modifiers: Record<string, string[]> = {
    read_file: ["limit", "offset"],
    edit_file: ["replace_all"],
    run: ["timeout_seconds"],
  };
  const tools = allTools();
  assert.equal(tools.length, 11);
  for (const tool of tools) {
    assert.deepEqual(keys(tool.routing), routing[tool.name], tool.name);
    assert.deepEqual(keys(tool.modifiers), modifiers[tool.name] ?? [], tool.name);
    const all = [...keys(tool.routing), ...keys(tool.content), ...keys(tool.modifiers)].sort();
    const schema = z.toJSONSchema(tool.schema) as { properties?: Record<string, unknown> };
    assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), all, tool.name);
    // Strict: an argument in no part is refused.
    assert.equal(tool.schema.safeParse({ no_such_argument: 1 }).success, false, tool.name);
  }
});

Deno.test("tools: a name in two parts is refused when the tool is defined", () => {
  const part = z.strictObject({ path: z.string() });
  assert.throws(
    () =>
      defineTool({
        name: "read_file",
        description: "twice",
        routing: part,
        content: part,
        handler: () => Promise.resolve(shown("", TRUSTED_PUBLIC)),
      }),
    /more than one part/,
  );
});
