/** Whether a run asks, who decides, what an answer grants: evaluateRun by tables, no worker. */
import assert from "node:assert/strict";
import { evaluateRun, outputLabel, type RunFacts, type StageStanding } from "./run_evaluate.ts";
import { displayStage, type PreparedRun, type PreparedStage } from "./run_prepare.ts";
import type { ConfinementPlan } from "./sandbox.ts";
import { NO_COVERS } from "./host_sockets.ts";
import type { RefRecord } from "./refs.ts";
import type { CommandVouch, NewVouch, PipelineVouch } from "./vouches.ts";
import { answeredWith, auditEntryOf } from "./verdict.ts";
import type { RunAnswer } from "../person/person.ts";
import {
  type Label,
  TRUSTED_PRIVATE,
  TRUSTED_PUBLIC,
  UNTRUSTED_PRIVATE,
  UNTRUSTED_PUBLIC,
} from "../util/label.ts";

function stage(
  name: string,
  args: string[] = [],
  over: Partial<PreparedStage> = {},
): PreparedStage {
  return {
    typed: name,
    resolved: `/usr/bin/${name}`,
    workspaceRel: null,
    sha256: null,
    args,
    untrusted: false,
    injected: [],
    ...over,
  };
}

function prepared(stages: PreparedStage[], stdin: Label | null = null): PreparedRun {
  const ref: RefRecord = {
    id: 7,
    kind: "command_output",
    label: UNTRUSTED_PRIVATE,
    hasBytes: true,
    tool: "run",
  };
  return {
    stages,
    stdin: stdin ? { ref, label: stdin } : null,
    timeoutMs: 1000,
    display: stages.map(displayStage),
  };
}

const standing = (over: Partial<StageStanding> = {}): StageStanding => ({
  vouch: null,
  voided: null,
  fileVouch: "no",
  fileRun: "no",
  fileUnconfines: false,
  ...over,
});

const v1: CommandVouch = {
  id: "v1",
  program: "/usr/bin/ls",
  match: "exact",
  args: [],
  created: "",
};
const v2: CommandVouch = { ...v1, id: "v2", program: "/usr/bin/wc" };
const v3: PipelineVouch = { id: "v3", match: "pipeline", stages: [], created: "" };

const unconfinedPlan: ConfinementPlan = { confined: false, why: "run.sandbox is off" };
const confinedPlan: ConfinementPlan = {
  confined: true,
  bwrap: "/usr/bin/bwrap",
  box: { workspace: "/w", scratch: "/s", hide: [], keep: [], covers: NO_COVERS },
  wrapperGroup: null,
};

function facts(over: Partial<RunFacts> = {}): RunFacts {
  return {
    prepared: prepared([stage("ls")]),
    confinement: unconfinedPlan,
    standings: [standing()],
    whole: { status: "none" },
    context: TRUSTED_PUBLIC,
    approvals: false,
    canAsk: true,
    asker: "person",
    ...over,
  };
}

const vouched = [standing({ vouch: v1 })];
const pipe = prepared([stage("ls"), stage("wc", ["-l"])]);
const oneShot = { canAsk: false, asker: "policy-file" as const, approvals: true };

Deno.test("evaluateRun: who decides, what the line says, what the output is labelled", () => {
  const rows: {
    name: string;
    facts: RunFacts;
    /** The person's answer, where the verdict asks (and it must ask exactly then). */
    answer?: RunAnswer;
    run: boolean;
    by: string;
    decision: string;
    reason?: string | RegExp;
    output?: Label;
    vouched?: boolean;
    unconfined?: boolean;
    notice?: RegExp;
    keep?: NewVouch[];
  }[] = [
    {
      name: "vouched, trusted context, no stdin: runs unasked by the rule",
      facts: facts({ standings: vouched }),
      run: true,
      by: "rule",
      decision: "ran without asking (vouched)",
      reason: "vouched: v1",
      output: TRUSTED_PRIVATE,
      vouched: true,
      unconfined: false,
    },
    {
      name: "vouched by the policy file's vouch entry: the policy file decides",
      facts: facts({ standings: [standing({ fileVouch: "covers" })], ...oneShot }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (vouched)",
      reason: "vouched: the approval policy file",
      output: TRUSTED_PRIVATE,
    },
    {
      name: "a stored vouch and a policy file entry, stage by stage",
      facts: facts({
        prepared: pipe,
        standings: [standing({ vouch: v1 }), standing({ fileVouch: "covers" })],
      }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (vouched)",
      reason: "vouched: v1, the approval policy file",
    },
    {
      name: "a pipeline vouched whole covers stages vouched nowhere else",
      facts: facts({
        prepared: pipe,
        standings: [standing(), standing()],
        whole: { status: "vouched", vouch: v3 },
      }),
      run: true,
      by: "rule",
      decision: "ran without asking (vouched)",
      reason: "vouched: v3",
    },
    {
      name: "every entry covering every stage says unconfined: runs outside the box",
      facts: facts({
        standings: [standing({ fileVouch: "covers", fileUnconfines: true })],
        confinement: confinedPlan,
      }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (vouched)",
      unconfined: true,
    },
    {
      name: "an entry that says unconfined for one stage of two: the run stays in the box",
      facts: facts({
        prepared: pipe,
        standings: [
          standing({ fileVouch: "covers", fileUnconfines: true }),
          standing({ fileVouch: "covers" }),
        ],
        confinement: confinedPlan,
      }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (vouched)",
      unconfined: false,
    },
    {
      name: "unconfined by the policy file where nothing is confined: nothing to leave",
      facts: facts({ standings: [standing({ fileVouch: "covers", fileUnconfines: true })] }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (vouched)",
      unconfined: false,
    },
    {
      name: "not vouched: the person runs it once, and its output stays untrusted",
      facts: facts(),
      answer: { answer: "once" },
      run: true,
      by: "person",
      decision: "ran once",
      output: UNTRUSTED_PRIVATE,
      vouched: false,
      unconfined: false,
    },
    {
      name: "run once outside the box, where there is a box",
      facts: facts({ confinement: confinedPlan }),
      answer: { answer: "once", unconfined: true },
      run: true,
      by: "person",
      decision: "ran once, unconfined",
      unconfined: true,
    },
    {
      name: "run once unconfined where nothing is confined: ran once, nothing left",
      facts: facts(),
      answer: { answer: "once", unconfined: true },
      run: true,
      by: "person",
      decision: "ran once",
      unconfined: false,
    },
    {
      name: "vouched exactly: stored, and the output is trusted",
      facts: facts({ prepared: prepared([stage("ls", ["-a", "src"])]) }),
      answer: { answer: "vouch" },
      run: true,
      by: "person",
      decision: "vouched and ran",
      output: TRUSTED_PRIVATE,
      vouched: true,
      keep: [{ program: "/usr/bin/ls", args: ["-a", "src"], match: "exact" }],
    },
    {
      name: "vouched by a prefix of one argument",
      facts: facts({ prepared: prepared([stage("ls", ["-a", "src"])]) }),
      answer: { answer: "vouch", prefixArgs: 1 },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{ program: "/usr/bin/ls", args: ["-a"], match: "prefix" }],
    },
    {
      name: "a prefix as long as the arguments is an exact vouch",
      facts: facts({ prepared: prepared([stage("ls", ["-a"])]) }),
      answer: { answer: "vouch", prefixArgs: 1 },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{ program: "/usr/bin/ls", args: ["-a"], match: "exact" }],
    },
    {
      name: "a workspace program is vouched bound to its hash",
      facts: facts({
        prepared: prepared([stage("./b.sh", [], { resolved: "/w/b.sh", sha256: "ab" })]),
      }),
      answer: { answer: "vouch", prefixArgs: 0 },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{ program: "/w/b.sh", args: [], sha256: "ab", match: "exact" }],
    },
    {
      name: "a pipeline is vouched whole, exactly, whatever prefix is asked",
      facts: facts({ prepared: pipe, standings: [standing(), standing()] }),
      answer: { answer: "vouch", prefixArgs: 0 },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{
        match: "pipeline",
        stages: [{ program: "/usr/bin/ls", args: [] }, { program: "/usr/bin/wc", args: ["-l"] }],
      }],
    },
    {
      name: "a pipeline's stages each vouched by a prefix: one prefix vouch per stage",
      facts: facts({ prepared: pipe, standings: [standing(), standing()] }),
      answer: { answer: "vouch", stagePrefixes: [0, 1] },
      run: true,
      by: "person",
      decision: "vouched and ran",
      output: TRUSTED_PRIVATE,
      vouched: true,
      keep: [
        { program: "/usr/bin/ls", args: [], match: "prefix" },
        { program: "/usr/bin/wc", args: ["-l"], match: "prefix" },
      ],
    },
    {
      name: "a stage's workspace program is vouched by prefix bound to its hash",
      facts: facts({
        prepared: prepared([
          stage("./b.sh", ["x"], { resolved: "/w/b.sh", sha256: "ab" }),
          stage("wc"),
        ]),
        standings: [standing(), standing()],
      }),
      answer: { answer: "vouch", stagePrefixes: [0, 0] },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [
        { program: "/w/b.sh", args: [], sha256: "ab", match: "prefix" },
        { program: "/usr/bin/wc", args: [], match: "prefix" },
      ],
    },
    ...[[0], [0, 1, 0], [0, 2], [-1, 0], [0.5, 0]].map((stagePrefixes) => ({
      name: `prefixes that do not fit the stages (${stagePrefixes}) vouch the pipeline whole`,
      facts: facts({ prepared: pipe, standings: [standing(), standing()] }),
      answer: { answer: "vouch" as const, stagePrefixes },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{
        match: "pipeline" as const,
        stages: [{ program: "/usr/bin/ls", args: [] }, { program: "/usr/bin/wc", args: ["-l"] }],
      }],
    })),
    {
      name: "stage prefixes given for one command: it is vouched exactly",
      facts: facts({ prepared: prepared([stage("ls", ["-a"])]) }),
      answer: { answer: "vouch", stagePrefixes: [0] },
      run: true,
      by: "person",
      decision: "vouched and ran",
      keep: [{ program: "/usr/bin/ls", args: ["-a"], match: "exact" }],
    },
    {
      name: "refused, with the person's reason",
      facts: facts(),
      answer: { answer: "refuse", reason: "  not now " },
      run: false,
      by: "person",
      decision: "refused",
      reason: "the person refused: not now",
    },
    {
      name: "refused, no reason given",
      facts: facts(),
      answer: { answer: "refuse", reason: " " },
      run: false,
      by: "person",
      decision: "refused",
      reason: "the person refused to run it",
    },
    {
      name: "an untrusted context asks even for a vouched command, whose output stays trusted",
      facts: facts({ standings: vouched, context: UNTRUSTED_PUBLIC }),
      answer: { answer: "once" },
      run: true,
      by: "person",
      decision: "ran once",
      output: TRUSTED_PRIVATE,
      vouched: true,
    },
    {
      name: "a private stdin asks even for a vouched command",
      facts: facts({ standings: vouched, prepared: prepared([stage("ls")], TRUSTED_PRIVATE) }),
      answer: { answer: "once" },
      run: true,
      by: "person",
      decision: "ran once",
      output: TRUSTED_PRIVATE,
    },
    {
      name: "an untrusted stdin makes a vouched command's output untrusted",
      facts: facts({ standings: vouched, prepared: prepared([stage("ls")], UNTRUSTED_PUBLIC) }),
      run: true,
      by: "rule",
      decision: "ran without asking (vouched)",
      output: UNTRUSTED_PRIVATE,
      vouched: true,
    },
    {
      name: "a program in an untrusted place: asked, and its output untrusted though vouched",
      facts: facts({
        standings: vouched,
        prepared: prepared([stage("ls", [], { untrusted: true })]),
      }),
      answer: { answer: "once" },
      run: true,
      by: "person",
      decision: "ran once",
      output: UNTRUSTED_PRIVATE,
      vouched: false,
    },
    {
      name: "one-shot, a run entry covers it: run by the policy file, the reasons named",
      facts: facts({ standings: [standing({ fileRun: "covers" })], ...oneShot }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (policy file run entry)",
      reason: "the command is not vouched for",
      output: UNTRUSTED_PRIVATE,
      vouched: false,
    },
    {
      name: "one-shot, vouched, but the context is untrusted: no entry answers that, declined",
      facts: facts({ standings: vouched, context: UNTRUSTED_PUBLIC, ...oneShot }),
      run: false,
      by: "policy-file",
      decision: "declined",
      reason: /^not run: the planner's context is untrusted, .*; the approval policy file does not/,
    },
    {
      name: "one-shot, a run entry for one stage of two and a vouch for the other",
      facts: facts({
        prepared: pipe,
        standings: [standing({ fileRun: "covers" }), standing({ vouch: v2 })],
        ...oneShot,
      }),
      run: true,
      by: "policy-file",
      decision: "ran without asking (policy file run entry)",
      reason: "stage 1 not vouched for",
      vouched: false,
    },
    {
      name: "one-shot, a run entry never answers for a program in an untrusted place",
      facts: facts({
        prepared: prepared([stage("ls", [], { untrusted: true })]),
        standings: [standing({ fileRun: "covers" })],
        ...oneShot,
      }),
      run: false,
      by: "policy-file",
      decision: "declined",
      reason: /lies in an untrusted place, so it is asked about every time, and nobody can be/,
    },
    {
      name: "one-shot, no policy file: declined, and the person told",
      facts: facts({ canAsk: false, asker: "nobody" }),
      run: false,
      by: "nobody",
      decision: "declined",
      reason: "not run: the command is not vouched for, and nobody can be asked in a one-shot run",
      notice: /^declined a run: \/usr\/bin\/ls \(the command is not vouched for\)$/,
    },
    {
      name: "a vouch voided by a changed program is named among the reasons",
      facts: facts({ standings: [standing({ voided: v1 })], canAsk: false, asker: "nobody" }),
      run: false,
      by: "nobody",
      decision: "declined",
      reason: /not vouched for; the vouch v1 for stage 1 no longer holds: the program's contents/,
    },
    {
      name: "a pipeline vouch voided, and a policy file entry whose program changed",
      facts: facts({
        prepared: pipe,
        standings: [standing(), standing({ fileRun: "changed" })],
        whole: { status: "void", vouch: v3 },
        canAsk: false,
        asker: "nobody",
      }),
      run: false,
      by: "nobody",
      decision: "declined",
      reason: new RegExp(
        "the vouch v3 for this pipeline no longer holds: a program's contents changed; " +
          "the program of stage 2 changed since the run started",
      ),
    },
  ];
  for (const row of rows) {
    const verdict = evaluateRun(row.facts);
    assert.equal(verdict.kind === "ask", row.answer !== undefined, `${row.name}: asks`);
    const settled = answeredWith(verdict, row.answer);
    const decided = settled.kind === "allow" ? settled.grants : settled.refusal;
    assert.equal(decided.run, row.run, row.name);
    assert.equal(decided.by, row.by, row.name);
    const entry = auditEntryOf(settled);
    assert.ok(entry, row.name);
    assert.equal(entry.tool, "run", row.name);
    assert.equal(entry.decision, row.decision, row.name);
    assert.equal(entry.by, row.by, row.name);
    if (typeof row.reason === "string") assert.equal(entry.reason, row.reason, row.name);
    else if (row.reason) assert.match(entry.reason ?? "", row.reason, row.name);
    // Only a decline tells the person as it is decided: nobody is at the screen to be asked.
    if (row.decision === "declined") {
      assert.match(String(settled.notice ?? ""), row.notice ?? /^declined a run: /, row.name);
    } else assert.equal(settled.notice, undefined, row.name);
    assert.deepEqual(settled.keep, row.keep, row.name);
    if (decided.run) {
      if (row.output) assert.deepEqual(decided.outputLabel, row.output, row.name);
      assert.deepEqual(entry.labels?.output, decided.outputLabel, row.name);
      if (row.vouched !== undefined) assert.equal(decided.vouched, row.vouched, row.name);
      if (row.unconfined !== undefined) assert.equal(decided.unconfined, row.unconfined, row.name);
      // The line says a run left the box exactly when it did.
      assert.equal(entry.routing.unconfined, decided.unconfined ? true : undefined, row.name);
    } else {
      assert.equal(decided.reason, entry.reason, row.name);
      assert.equal(entry.labels?.output, undefined, row.name);
    }
  }
});

Deno.test("evaluateRun: the question shows the argv, the stdin, why it asks, the box", () => {
  const verdict = evaluateRun(facts({
    prepared: prepared([stage("sh", ["-c", "echo hi"]), stage("wc")], TRUSTED_PRIVATE),
    standings: [standing({ fileVouch: "changed" }), standing({ vouch: v2 })],
    context: UNTRUSTED_PUBLIC,
    confinement: confinedPlan,
  }));
  assert.equal(verdict.kind, "ask");
  if (verdict.kind !== "ask") return;
  const q = verdict.question;
  assert.deepEqual(q.stages, [
    { program: "sh", resolved: "/usr/bin/sh", args: ["-c", "echo hi"] },
    { program: "wc", resolved: "/usr/bin/wc", args: [] },
  ]);
  assert.deepEqual(q.display, ["/usr/bin/sh -c 'echo hi'", "/usr/bin/wc"]);
  assert.deepEqual(q.stdin, { ref: "ref:7", label: TRUSTED_PRIVATE });
  assert.equal(
    q.why,
    "stage 1 not vouched for; " +
      "the planner's context is untrusted, so every command asks, vouched or not; " +
      "its stdin (ref:7) is private, which asks even for a vouched command; " +
      "the program of stage 1 changed since the run started, so the approval policy file's " +
      "entry no longer covers it",
  );
  assert.equal(q.warnings.length, 1);
  assert.match(q.warnings[0], /^sh runs other programs or code it is given/);
  // The same line, stage by stage, for the picker that vouches each stage on its own.
  assert.deepEqual(q.stageWarnings, [q.warnings[0], null]);
  assert.equal(q.confinement.confined, true);
  assert.match(
    q.confinement.confined ? q.confinement.detail ?? "" : "",
    /^file system read-only except the workspace and scratch, no network/,
  );

  const unboxed = evaluateRun(facts());
  assert.equal(unboxed.kind, "ask");
  if (unboxed.kind !== "ask") return;
  assert.deepEqual(unboxed.question.confinement, { confined: false, why: "run.sandbox is off" });
  assert.equal(unboxed.question.stdin, null);
  assert.deepEqual(unboxed.question.warnings, []);

  // A question that could not be put is a refusal by the person's side, never a guess.
  const unasked = unboxed.unasked?.(new Error("the terminal closed"));
  assert.ok(unasked && unasked.kind === "refuse");
  assert.deepEqual(unasked.refusal, {
    run: false,
    by: "person",
    reason: "not run: the person could not be asked (Error: the terminal closed)",
  });
});

Deno.test("evaluateRun: the audit line keeps the log's keys and names the stdin only as input", () => {
  const verdict = evaluateRun(facts({
    prepared: prepared([stage("./b.sh", ["x"], { resolved: "/w/b.sh", sha256: "ab" })]),
    standings: [standing({ vouch: v1 })],
    whole: { status: "none" },
  }));
  const entry = auditEntryOf(answeredWith(verdict));
  assert.equal(
    JSON.stringify(entry),
    '{"tool":"run","routing":{"stages":[{"program":"./b.sh","resolved":"/w/b.sh","args":["x"],' +
      '"sha256":"ab"}]},"inputs":{"stdin":null},"labels":{"argv":{"integrity":"T",' +
      '"confidentiality":"pub"},"output":{"integrity":"T","confidentiality":"priv"}},' +
      '"decision":"ran without asking (vouched)","by":"rule","reason":"vouched: v1"}',
  );
  const refused = evaluateRun(facts({
    prepared: prepared([stage("cat")], UNTRUSTED_PRIVATE),
    canAsk: false,
    asker: "nobody",
  }));
  const line = auditEntryOf(answeredWith(refused));
  assert.deepEqual(line?.inputs, { stdin: "ref:7" });
  assert.deepEqual(line?.labels, { argv: TRUSTED_PUBLIC, stdin: UNTRUSTED_PRIVATE });
  assert.equal(JSON.stringify(line?.routing).includes("ref:7"), false);
});

Deno.test("outputLabel: untrusted unless vouched, never more trusted than the stdin, always priv", () => {
  assert.deepEqual(outputLabel(false, null), UNTRUSTED_PRIVATE);
  assert.deepEqual(outputLabel(false, TRUSTED_PUBLIC), UNTRUSTED_PRIVATE);
  assert.deepEqual(outputLabel(true, null), TRUSTED_PRIVATE);
  assert.deepEqual(outputLabel(true, TRUSTED_PUBLIC), TRUSTED_PRIVATE);
  assert.deepEqual(outputLabel(true, UNTRUSTED_PUBLIC), UNTRUSTED_PRIVATE);
});
