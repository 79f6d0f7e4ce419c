/**
 * Method calls are imports too: what the driver, the tools, the skills finder and the person's
 * side receive is an exact list of members, written here once. `deno task check` compiles this
 * file, and each list `satisfies` a record over its port's keys: a port that gains a member the
 * list does not name, or loses one it names, fails to compile, so no port gains a method
 * unnoticed. `test/layering_ports_test.ts` compares the same lists with the ports the policy
 * layer's factories build, which could hold more than their type says.
 *
 * Some members may never be added, whatever the list says: the effect worker, the audit log's
 * writer, the person, the references' bytes, and for a tool, placing anything in the planner
 * context. Each line below them is an error, and if a port ever gains the member, the
 * `@ts-expect-error` above it is unused, which is itself an error.
 */
import type {
  DriverPolicy,
  FilesReadPort,
  FilesWritePort,
  OtherPort,
  PersonPolicy,
  ProcessorPort,
  RunPort,
  ToolPolicy,
} from "../src/policy/api.ts";
import type { SkillsPort } from "../src/policy/ports/skills.ts";
import type { ToolContext } from "../src/tools/tool.ts";

/** The tools' port, slice by slice (`policy/ports/`), and the one member of its own. */
export const FILES_READ_PORT = {
  route: true,
  readFile: true,
  listFiles: true,
  search: true,
} as const satisfies Record<keyof FilesReadPort, true>;

export const FILES_WRITE_PORT = {
  writeFile: true,
  editFile: true,
} as const satisfies Record<keyof FilesWritePort, true>;

export const RUN_PORT = {
  run: true,
  readOutput: true,
} as const satisfies Record<keyof RunPort, true>;

export const OTHER_PORT = {
  spawnProcessor: true,
  loadSkill: true,
  askUser: true,
  todoLabel: true,
} as const satisfies Record<keyof OtherPort, true>;

export const TOOL_POLICY = {
  ...FILES_READ_PORT,
  ...FILES_WRITE_PORT,
  ...RUN_PORT,
  ...OTHER_PORT,
  contextLabel: true,
} as const satisfies Record<keyof ToolPolicy, true>;

/** The driver's port (`policy/ports/driver.ts`). */
export const DRIVER_POLICY = {
  contextLabel: true,
  placeInContext: true,
  clearContext: true,
  onContextChange: true,
  onStateProblem: true,
  refreshTrust: true,
  decisions: true,
  gateResult: true,
  showToPerson: true,
  personWordsLabel: true,
  systemPromptLabel: true,
  summaryLabel: true,
} as const satisfies Record<keyof DriverPolicy, true>;

/** The person's side of a session (`policy/ports/person_facing.ts`). */
export const PERSON_POLICY = {
  contextLabel: true,
  showToPerson: true,
  runShellLine: true,
  walls: true,
  stopRuns: true,
  storedTrust: true,
  refreshTrust: true,
  changeTrust: true,
  vouches: true,
  sessionDiff: true,
  planUndo: true,
  applyUndo: true,
} as const satisfies Record<keyof PersonPolicy, true>;

/** What the skills finder receives (`policy/ports/skills.ts`). */
export const SKILLS_PORT = {
  workspaceRoot: true,
  resolve: true,
  listTrustedFolder: true,
  readWorkspaceSkill: true,
  readTrustedHead: true,
  userSkillLabel: true,
} as const satisfies Record<keyof SkillsPort, true>;

/** What a tool's handler is given (`tools/tool.ts`), and the processor the driver hands it. */
export const TOOL_CONTEXT = {
  decide: true,
  settings: true,
  session: true,
  processor: true,
  signal: true,
  emit: true,
} as const satisfies Record<keyof ToolContext, true>;

export const PROCESSOR_PORT = {
  complete: true,
  servedTokens: true,
} as const satisfies Record<keyof ProcessorPort, true>;

export function toolPortHasNoEffects(tool: ToolPolicy): void {
  // @ts-expect-error: a tool's port has no effect worker
  tool.worker;
  // @ts-expect-error: a tool's port records no audit entry itself
  tool.record;
  // @ts-expect-error: a tool's port cannot place bytes in the planner context
  tool.placeInContext;
  // @ts-expect-error: a tool's port does not hand out the person
  tool.person;
  // @ts-expect-error: a tool's port does not hand out the references' table
  tool.refs;
  // @ts-expect-error: a tool's port does not hand out the audit log
  tool.audit;
}

export function driverPortHasNoEffects(driver: DriverPolicy): void {
  // @ts-expect-error: the driver's port has no effect worker
  driver.worker;
  // @ts-expect-error: the driver's port records no audit entry itself
  driver.record;
  // @ts-expect-error: the driver's port does not hand out the references' table
  driver.refs;
  // @ts-expect-error: the driver's port does not hand out the person: the egress gate asks
  driver.person;
}

export function toolContextHasNoPolicy(ctx: ToolContext): void {
  // @ts-expect-error: a tool reaches the policy layer only through its decision port
  ctx.policy;
}
