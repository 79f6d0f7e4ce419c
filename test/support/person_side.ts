/**
 * A real policy layer (the composition root's) over a temporary workspace, with a ScriptedPerson, for the tests of the
 * person's side (ask_user, todo_write, load_skill, skills, project memory). Everything lives
 * in temp folders that `close()` removes.
 */
import { toolPolicy } from "../../src/policy/api.ts";
import { join } from "node:path";
import { openWorkspace } from "../../src/policy/workspace.ts";
import { TrustMap } from "../../src/policy/trust_map.ts";
import { type ComposedSession, composeSession } from "../../src/session/compose.ts";
import type { Person } from "../../src/person/person.ts";
import { ScriptedPerson } from "./scripted_person.ts";
import { EffectWorker } from "../../src/worker/client.ts";
import { SessionState } from "../../src/state/session_state.ts";
import { settingsFrom } from "../../src/state/settings.ts";
import type { ToolContext } from "../../src/tools/tool.ts";

export interface Fixture {
  ws: string;
  state: string;
  policy: ComposedSession["policy"];
  session: SessionState;
  person: Person;
  events: { type: string; text: string }[];
  ctx: ToolContext;
  write(rel: string, text: string): Promise<void>;
  close(): Promise<void>;
}

export async function fixture(options: {
  person?: Person;
  oneShot?: boolean;
  /** Trust rules: directory → trusted. Default: the whole workspace trusted. */
  rules?: Record<string, boolean>;
} = {}): Promise<Fixture> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-ps-ws-" }));
  const state = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-ps-state-" }));
  const scratch = join(state, "scratch");
  await Deno.mkdir(scratch);
  const workspace = await openWorkspace(ws, state);
  const trust = new TrustMap(ws);
  trust.firstUse = "custom";
  for (const [dir, trusted] of Object.entries(options.rules ?? { ".": true })) {
    trust.setRule(dir, trusted);
  }
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false });
  const person = options.person ?? new ScriptedPerson();
  const { policy } = await composeSession({
    workspace,
    worker,
    person,
    trust,
    trustFile: null,
    sessionId: "test",
    auditFile: null,
    sessionDir: null,
    scratch,
    vouchesFile: null,
  });
  const session = new SessionState("test", options.oneShot ?? false);
  const events: { type: string; text: string }[] = [];
  const ctx: ToolContext = {
    decide: toolPolicy(policy, session),
    settings: settingsFrom({}),
    session,
    processor: { complete: () => Promise.reject(new Error("no processor in these tests")) },
    emit: (e) => events.push(e),
  };
  return {
    ws,
    state,
    policy,
    session,
    person,
    events,
    ctx,
    async write(rel, text) {
      const abs = join(ws, rel);
      await Deno.mkdir(join(abs, ".."), { recursive: true });
      await Deno.writeTextFile(abs, text);
    },
    async close() {
      await worker.terminate();
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(state, { recursive: true });
    },
  };
}
