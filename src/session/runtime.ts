/**
 * Everything a session needs to talk to the planner, built once: the opened session (policy,
 * worker, state), the model clients, the transcript (new, or loaded to resume), the system
 * prompt of each turn (skills and trusted AGENTS.md found afresh), and the driver. One-shot
 * mode and the interactive session both start here. Nothing is sent to a model.
 */
import { commandsRunUnasked, sessionConfinement } from "../policy/runs.ts";
import { driverPolicy, type PersonPolicy, personPolicy, toolPolicy } from "../policy/api.ts";
import { join } from "node:path";
import { type OpenSession, openSession } from "./open.ts";
import { type ApprovalsFile, readOutputShapes } from "../policy/approvals_file.ts";
import type { Person } from "../person/person.ts";
import type { Label } from "../util/label.ts";
import { resumeContext, storedLineLabel, systemPromptLabel } from "../policy/driver_labels.ts";
import type { Settings } from "../state/settings.ts";
import { type LoadedTranscript, loadTranscript, TranscriptWriter } from "../state/transcript.ts";
import { discoverSkills, projectMemory, userSkillsDir } from "../skills/discover.ts";
import { skillsPort } from "../policy/ports/skills.ts";
import { modelsFrom } from "../model/factory.ts";
import { type RunUsage, UsageMeter } from "../model/usage.ts";
import type { RetryPolicy } from "../model/retry.ts";
import type { ChatMessage, ModelClient } from "../model/types.ts";
import { Driver, type SystemPromptPart } from "../driver/driver.ts";
import type { DriverEvent } from "../driver/events.ts";
import { buildSystemPrompt } from "../driver/system_prompt.ts";

export interface RuntimeOptions {
  workspaceDir: string;
  stateDir: string;
  /** The user config file; its folder holds the user's skills. */
  configPath: string | null;
  settings: Settings;
  person: Person;
  approvals: ApprovalsFile | null;
  oneShot: boolean;
  /** A session id to go on with (its transcript is loaded). */
  resume?: string;
  emit: (event: DriverEvent) => void;
  retry?: RetryPolicy;
  /**
   * Where the run stages' probe's lines go ("commands will be refused: …") when the runtime is
   * handed over before the probe has answered (one-shot: stderr, so that the first request need
   * not wait for it; docs/decisions.md, "The run stages' probe after the first request"). They are
   * said as soon as it answers, and before anything a planner reply leads to: every reply is held
   * until then, and every run awaits the probe itself (policy/runs.ts `carryOutRun`). Absent: the
   * runtime waits for the probe, and its lines are in `problems`.
   */
  sayConfinement?: (lines: string[]) => void;
}

export interface Runtime {
  session: OpenSession;
  driver: Driver;
  /** What the person's side of the session (its commands, shell mode) asks of the policy layer. */
  policy: PersonPolicy;
  transcript: TranscriptWriter;
  /** Problems found while opening (corrupt state, a torn transcript line), to show the person. */
  problems: string[];
  /**
   * Settles once the run stages' probe has answered and its lines were said (in `problems`, or
   * through `sayConfinement`); never rejects. A one-shot run awaits it before its last event.
   */
  confinementSaid: Promise<void>;
  /**
   * `/model NAME`: the planner model for the next turns, at the same endpoint; the processor
   * keeps its model. An error (a message) when no client can be made.
   */
  usePlannerModel(name: string): string | null;
  /** The servers' token counts over every model request so far (model/usage.ts). */
  usage(): RunUsage;
  close(): void;
}

export class RuntimeError extends Error {
  override name = "RuntimeError";
}

/** Builds the runtime; throws RuntimeError (a configuration problem) before opening anything. */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const usage = new UsageMeter();
  const models = modelsFrom(options.settings, options.retry, usage);
  if (!models.ok) throw new RuntimeError(models.error);
  // One-shot, the first request is the next thing after opening: the model worker loads on its
  // own thread meanwhile, rather than after it was asked (issue 24).
  if (options.oneShot) models.value.warm();
  const session = await openSession({
    workspaceDir: options.workspaceDir,
    stateDir: options.stateDir,
    settings: options.settings,
    person: options.person,
    approvals: options.approvals,
    oneShot: options.oneShot,
    resume: options.resume,
  }).catch((e) => {
    models.value.close(); // a warmed worker would keep the process alive
    throw e;
  });
  const problems = [...session.problems];
  // Said once, at the start: where bwrap does not work, "auto" runs commands unconfined; where
  // the configured confinement cannot stand (bwrap unusable under "bwrap", a cover bwrap cannot
  // mount), every run is refused, and the person should not first hear it at a run. Probed once
  // a session (sessionConfinement keeps the plan), while the transcript and the resumed
  // conversation are read; awaited before the runtime is handed over, or (`sayConfinement`)
  // said when it answers, its reaction registered first so that it comes before any run's.
  const confinementPlan = sessionConfinement(session.policy, options.settings);
  const confinementAt = problems.length;
  let closed = false;
  const said = confinementPlan.then(
    (confinement) => {
      const lines = confinementLines(confinement, options.settings);
      if (options.sayConfinement) {
        if (!closed) options.sayConfinement(lines);
      } else problems.splice(confinementAt, 0, ...lines);
    },
    () => {}, // a plan that broke: every run awaits it again and fails there
  );
  const transcript = new TranscriptWriter(session.paths.transcript);
  let history: ChatMessage[] = [];
  let historyLabels: (Label | null)[] = [];
  let historySummary: LoadedTranscript["summary"] = null;
  if (options.resume) {
    const loaded = await loadTranscript(session.paths.transcript);
    history = loaded.messages;
    // The transcript says what each line recorded; what that placed is the policy layer's rule.
    historyLabels = loaded.lines.map(storedLineLabel);
    historySummary = loaded.summary;
    problems.push(...loaded.problems);
    // The policy layer decides the context the transcript left, and places it.
    resumeContext(session.policy, loaded.contextLines);
  } else {
    await transcript.start({
      id: session.paths.id,
      workspace: session.workspace.root,
      started: new Date().toISOString(),
    });
  }
  const userDir = options.configPath ? userSkillsDir(options.configPath) : null;
  const skills = skillsPort(session.policy);
  const systemPrompt = async (): Promise<SystemPromptPart> => {
    const found = await discoverSkills(skills, userDir);
    session.state.skills = found.skills;
    // Found again at every turn's start: each is news once (the screen says it once).
    for (const p of found.problems) options.emit({ type: "notice", text: p, once: `skill: ${p}` });
    const memory = await projectMemory(skills);
    if (memory?.note) {
      options.emit({ type: "notice", text: memory.note, once: `AGENTS.md: ${memory.note}` });
    }
    return {
      text: buildSystemPrompt({
        skills: found.skills,
        agents: memory?.text ?? null,
        oneShot: options.oneShot,
        unasked: await commandsRunUnasked(session.policy),
        readOutputShapes: readOutputShapes(options.approvals),
      }),
      label: systemPromptLabel(
        memory?.text ? memory.label : null,
        found.skills.map((s) => s.label),
      ),
    };
  };
  // Deferred, a planner reply is handed to the driver only once the probe's lines are said.
  const held = (planner: ModelClient): ModelClient =>
    options.sayConfinement ? repliesAfter(planner, said) : planner;
  const driver = new Driver({
    planner: held(models.value.planner),
    processor: models.value.processor,
    policy: driverPolicy(session.policy),
    decide: toolPolicy(session.policy, session.state),
    settings: options.settings,
    session: session.state,
    transcript,
    emit: options.emit,
    systemPrompt,
    history,
    historyLabels,
    historySummary,
  });
  if (!options.sayConfinement) {
    await said;
    await confinementPlan; // a plan that broke is an internal error, as before
  }
  const extra: { close(): void }[] = [];
  return {
    session,
    driver,
    policy: personPolicy(session.policy),
    transcript,
    problems,
    confinementSaid: said,
    usePlannerModel: (name) => {
      const next = modelsFrom(
        {
          ...options.settings,
          planner: { ...options.settings.planner, model: name },
          processor: {
            ...options.settings.processor,
            model: options.settings.processor.model ?? options.settings.planner.model,
          },
        },
        options.retry,
        usage,
      );
      if (!next.ok) return next.error;
      // The model before this one is not used again (a /model runs between turns): its worker ends.
      for (const previous of extra.splice(0)) previous.close();
      extra.push(next.value);
      driver.usePlanner(held(next.value.planner));
      return null;
    },
    usage: () => usage.total,
    close: () => {
      closed = true;
      models.value.close();
      for (const m of extra) m.close();
      transcript.close();
      session.close();
    },
  };
}

/** What the run stages' probe tells the person at the start (docs/decisions.md, "Confinement"). */
function confinementLines(
  confinement: Awaited<ReturnType<typeof sessionConfinement>>,
  settings: Settings,
): string[] {
  if (!confinement.ok) return [`commands will be refused: ${confinement.error}`];
  if (!confinement.value.confined && settings.sandbox === "auto") {
    return [`commands will run unconfined: ${confinement.value.why}`];
  }
  return [];
}

/**
 * The planner client whose replies (and failures) are handed over only once `said` settles:
 * the request goes at once, and nothing the reply leads to — a tool call, a run, the last event —
 * comes before the run stages' probe's lines. Nor does the reply's own text: what the endpoint
 * streams before then is held and handed on, in order, once they are said.
 */
export function repliesAfter(client: ModelClient, said: Promise<void>): ModelClient {
  const served = client.servedContext?.bind(client);
  return {
    get endpoint() {
      return client.endpoint;
    },
    get model() {
      return client.model;
    },
    complete: async (request) => {
      const onText = request.onText;
      let early: string[] | null = [];
      // Registered before the request goes: the held text is handed on as soon as they are said.
      const opened = said.then(() => {
        for (const text of early!) onText?.(text);
        early = null;
      });
      const streamed = onText
        ? { ...request, onText: (text: string) => early ? void early.push(text) : onText(text) }
        : request;
      try {
        return await client.complete(streamed);
      } finally {
        await opened;
      }
    },
    ...(served ? { servedContext: served } : {}),
  };
}

/** The session ids of a workspace's state folder, newest first (ids sort by time). */
export async function sessionIds(sessionsDir: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(sessionsDir)) {
      if (e.isDirectory) ids.push(e.name);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return ids.sort().reverse();
}

/** Whether a session of that id has a transcript. */
export async function sessionExists(sessionsDir: string, id: string): Promise<boolean> {
  if (!/^[A-Za-z0-9._-]+$/.test(id)) return false;
  try {
    return (await Deno.stat(join(sessionsDir, id, "transcript.jsonl"))).isFile;
  } catch {
    return false;
  }
}
