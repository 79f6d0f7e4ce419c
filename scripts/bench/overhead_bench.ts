/**
 * What a tool call costs beyond the tool's own work: the scripted model (scripts/mock-model.ts,
 * a real HTTP server on 127.0.0.1) asks for 1,000 `read_file` calls on a small trusted file,
 * and the real driver runs them through the policy layer and the effect worker, writing the
 * transcript and audit log as a session does. The planner client is wrapped so the time spent
 * waiting for the model is known and left out.
 *
 * Two figures: per call, from the driver announcing the call (`tool_call`, arguments parsed)
 * to its result being recorded (`tool_result`, after the transcript append); and per call over
 * the whole turn, the turn's time minus the model's, divided by the calls (this adds the
 * driver's work between replies: fitting the window, recording the assistant message).
 */
import { driverPolicy, toolPolicy } from "../../src/policy/api.ts";
import { join } from "node:path";
import { startMockModel } from "../mock-model.ts";
import { Driver } from "../../src/driver/driver.ts";
import { readFileTool } from "../../src/tools/read_file.ts";
import type { ToolContext } from "../../src/tools/tool.ts";
import type { DriverEvent } from "../../src/driver/events.ts";
import { modelsFrom } from "../../src/model/factory.ts";
import type { ModelClient } from "../../src/model/types.ts";
import { TranscriptWriter } from "../../src/state/transcript.ts";
import { openSession } from "../../src/session/open.ts";
import { ScriptedPerson } from "../../test/support/scripted_person.ts";
import { settingsFrom } from "../../src/state/settings.ts";
import { cpuSample, formatMs, median, percentile } from "./measure.ts";
import type { Row } from "./report.ts";

export async function overheadBench(calls: number, log: (s: string) => void): Promise<Row[]> {
  const perReply = 10;
  const replies = Math.ceil(calls / perReply);
  const ws = await Deno.makeTempDir({ prefix: "bb-bench-ws-" });
  const stateDir = await Deno.makeTempDir({ prefix: "bb-bench-state-" });
  const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}: a small trusted file`);
  await Deno.writeTextFile(join(ws, "small.txt"), lines.join("\n") + "\n");
  const mock = await startMockModel({
    script: {
      replies: [
        {
          for: "planner",
          stream: false,
          times: replies,
          tool_calls: Array.from({ length: perReply }, () => ({
            name: "read_file",
            arguments: { path: "small.txt" },
          })),
        },
        { for: "planner", stream: false, text: "done" },
      ],
    },
  });
  const settings = {
    ...settingsFrom({}, { endpoint: mock.url, model: "mock", maxTurns: replies + 5 }),
    // Large enough that no result is compacted: the run measures calls, not compaction.
    contextWindow: 4_000_000,
  };
  const person = new ScriptedPerson([
    { firstUse: { choice: "custom", trusted: ["."], untrusted: [] } },
  ]);
  const session = await openSession({
    workspaceDir: ws,
    stateDir,
    settings,
    person,
    approvals: null,
    oneShot: false,
  });
  const models = modelsFrom(settings);
  if (!models.ok) throw new Error(models.error);
  let modelMs = 0;
  const inner = models.value.planner;
  const planner: ModelClient = {
    endpoint: inner.endpoint,
    model: inner.model,
    async complete(request) {
      const t = performance.now();
      try {
        return await inner.complete(request);
      } finally {
        modelMs += performance.now() - t;
      }
    },
  };
  const started = new Map<string, number>();
  const perCall: number[] = [];
  let errors = 0;
  const emit = (e: DriverEvent) => {
    if (e.type === "tool_call") started.set(e.id, performance.now());
    if (e.type === "tool_result") {
      const t = started.get(e.id);
      if (t !== undefined) perCall.push(performance.now() - t);
      if (e.is_error) errors++;
    }
  };
  const transcript = new TranscriptWriter(session.paths.transcript);
  const driver = new Driver({
    planner,
    processor: models.value.processor,
    policy: driverPolicy(session.policy),
    decide: toolPolicy(session.policy, session.state),
    settings,
    session: session.state,
    transcript,
    emit,
  });
  try {
    const cpu0 = (await cpuSample()).cpuMs;
    const t0 = performance.now();
    const outcome = await driver.runTurn("read small.txt many times");
    const turnMs = performance.now() - t0;
    const { cpuMs: cpu1, load } = await cpuSample();
    if (outcome.status !== "finished" || errors > 0) {
      throw new Error(
        `the scripted turn did not finish cleanly: ${outcome.status} ${
          outcome.error ?? ""
        } (${errors} error results)`,
      );
    }
    const direct = await directCalls(
      calls,
      {
        decide: toolPolicy(session.policy, session.state),
        settings,
        session: session.state,
        processor: models.value.processor,
        emit: () => {},
      },
      transcript,
      () => session.policy.refreshTrust(),
    );
    log(
      `overhead, no driver and no model: ${calls} read_file calls, the transcript append after each; ` +
        `median ${formatMs(direct.median)}, CPU per call ${formatMs(direct.cpuMs)} ` +
        `(this process and the wall's children); load ${direct.load}`,
    );
    // Calls in a reply run one after another, with nothing else between their events.
    const mid = median(perCall);
    const overall = (turnMs - modelMs) / perCall.length;
    log(
      `overhead: ${perCall.length} read_file calls; per call median ${formatMs(mid)}, p90 ${
        formatMs(percentile(perCall, 90))
      }; turn ${formatMs(turnMs)} of which model ${formatMs(modelMs)}; non-model per call ${
        formatMs(overall)
      }; CPU per call over the turn ${
        formatMs((cpu1 - cpu0) / perCall.length)
      } (the scripted model's server included); load ${load}`,
    );
    return [
      {
        bench: "tool call overhead",
        case: `${perCall.length} read_file, median per call`,
        ours: formatMs(mid),
        others: `p90 ${formatMs(percentile(perCall, 90))}`,
        ratio: "",
        target: "≤ 0.3 ms",
        met: mid <= 0.3,
      },
      {
        bench: "tool call overhead",
        case: `${calls} read_file, no driver or model: CPU per call`,
        ours: `${formatMs(direct.median)} (CPU ${formatMs(direct.cpuMs)})`,
        others: `load ${direct.load.toFixed(1)}`,
        ratio: "",
        target: "",
        met: null,
      },
      {
        bench: "tool call overhead",
        case: "whole turn minus model time, per call",
        ours: formatMs(overall),
        others: `model ${formatMs(modelMs / (replies + 1))} per reply`,
        ratio: "",
        target: "",
        met: null,
      },
    ];
  } finally {
    models.value.close();
    transcript.close();
    session.close();
    await mock.stop();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
    await Deno.remove(stateDir, { recursive: true }).catch(() => {});
  }
}

/**
 * The same calls without the driver and the scripted model, so that the CPU time of a call
 * (this process's threads and the kernel wall's children) can be read: the trust map's
 * refresh, the tool through the policy layer and the worker (with its audit line), and the
 * transcript append the driver makes after each.
 */
async function directCalls(
  calls: number,
  ctx: ToolContext,
  transcript: TranscriptWriter,
  refreshTrust: () => Promise<void>,
): Promise<{ median: number; cpuMs: number; load: number }> {
  const times: number[] = [];
  const cpu0 = (await cpuSample()).cpuMs;
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await refreshTrust();
    const parsed = readFileTool.schema.parse({ path: "small.txt" }) as Parameters<
      typeof readFileTool.handler
    >[0];
    const out = await readFileTool.handler(parsed, ctx);
    if (out.isError) throw new Error(`read_file failed: ${out.content.slice(0, 200)}`);
    await transcript.message(
      { role: "tool", tool_call_id: `direct-${i}`, content: out.content },
      out.label,
    );
    times.push(performance.now() - t);
  }
  const { cpuMs, load } = await cpuSample();
  return { median: median(times), cpuMs: (cpuMs - cpu0) / calls, load };
}
