/**
 * The fixed tool list (docs/tools.md#the-eleven-tools: eleven, no twelfth from a configuration
 * file, no MCP). The driver finds tools only here; a name not in this table is reported to the
 * planner.
 */
import type { ToolDef } from "./tool.ts";
import { readFileTool } from "./read_file.ts";
import { listFilesTool } from "./list_files.ts";
import { searchTool } from "./search.ts";
import { writeFileTool } from "./write_file.ts";
import { editFileTool } from "./edit_file.ts";
import { runTool } from "./run.ts";
import { readOutputTool } from "./read_output.ts";
import { spawnProcessorTool } from "./spawn_processor.ts";
import { loadSkill } from "./load_skill.ts";
import { askUser } from "./ask_user.ts";
import { todoWrite } from "./todo_write.ts";

// Each tool module is imported here and added to TOOLS, in the order of
// docs/tools.md#the-eleven-tools.
const TOOLS: readonly ToolDef<never>[] = [
  readFileTool,
  listFilesTool,
  searchTool,
  writeFileTool,
  editFileTool,
  runTool,
  readOutputTool,
  spawnProcessorTool,
  loadSkill,
  askUser,
  todoWrite,
] as readonly ToolDef<never>[];

export function allTools(): readonly ToolDef<unknown>[] {
  return TOOLS as readonly ToolDef<unknown>[];
}
