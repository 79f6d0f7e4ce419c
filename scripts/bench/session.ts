/**
 * A real session over a corpus, opened the way the program opens one (openSession: workspace,
 * state folders, trust map, references, audit log on disk, the effect worker behind its wall,
 * the policy layer), with the whole workspace trusted. Tools are called as the driver calls
 * them: arguments checked by the tool's schema, then the handler. So a timing includes the cost
 * of the walls, not just of the search loop.
 */
import { toolPolicy } from "../../src/policy/api.ts";
import { type OpenSession, openSession } from "../../src/session/open.ts";
import type { WallChoice } from "../../src/worker/client.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import { type Limits, type Settings, settingsFrom } from "../../src/state/settings.ts";
import type { ToolContext, ToolDef, ToolOutput } from "../../src/tools/tool.ts";

export interface BenchSession {
  open: OpenSession;
  settings: Settings;
  /** Validates with the tool's schema, then runs the handler; throws on an error result. */
  call(tool: ToolDef<never>, args: unknown, limits?: Partial<Limits>): Promise<ToolOutput>;
  close(): Promise<void>;
}

const noProcessor = {
  complete(): Promise<string> {
    return Promise.reject(new Error("no processor in the benchmark"));
  },
};

/** `wall` forces the effect worker's wall, so one run can alternate the two. */
export async function openBenchSession(
  workspaceDir: string,
  wall: WallChoice = "auto",
): Promise<BenchSession> {
  const stateDir = await Deno.makeTempDir({ prefix: "bb-bench-state-" });
  const settings = settingsFrom({});
  // The first-use question, answered as a person trusting the whole workspace would.
  const person = new ScriptedPerson([
    { firstUse: { choice: "custom", trusted: ["."], untrusted: [] } },
  ]);
  const open = await openSession({
    workspaceDir,
    stateDir,
    settings,
    person,
    approvals: null,
    oneShot: false,
    wall,
  });
  const decide = toolPolicy(open.policy, open.state);
  const context = (limits?: Partial<Limits>): ToolContext => ({
    decide,
    settings: limits ? { ...settings, limits: { ...settings.limits, ...limits } } : settings,
    session: open.state,
    processor: noProcessor,
    emit: () => {},
  });
  const plain = context();
  return {
    open,
    settings,
    async call(tool, args, limits) {
      const parsed = tool.schema.safeParse(args);
      if (!parsed.success) throw new Error(`${tool.name}: bad arguments: ${parsed.error.message}`);
      const out = await (tool as ToolDef<unknown>).handler(
        parsed.data,
        limits ? context(limits) : plain,
      );
      if (out.isError) throw new Error(`${tool.name}: ${out.content.slice(0, 300)}`);
      return out;
    },
    async close() {
      await open.policy.worker.terminate();
      open.close();
      await Deno.remove(stateDir, { recursive: true }).catch(() => {});
    },
  };
}
