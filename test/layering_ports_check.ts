/**
 * Method calls are imports too: the ports the driver and the tools receive must not hand out the
 * effect worker, the audit log's writer, the person or the references' bytes, and the tools' port
 * cannot place anything in the planner context. `deno task check` compiles this file: each line
 * below is an error, and if a port ever gains the member, the `@ts-expect-error` above it is
 * unused, which is itself an error. Nothing here runs.
 */
import type { DriverPolicy, ToolPolicy } from "../src/policy/api.ts";
import type { ToolContext } from "../src/tools/tool.ts";

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
