/**
 * A program is who it resolves to (docs/contract.md §8.3): a bare name is the program on PATH and
 * never a workspace file; a workspace program is named by a path and bound to its bytes, for stored
 * vouches and the approval policy file alike; a program in an untrusted place always asks; a
 * pipeline is vouched whole; and no error quotes a name the planner was not shown.
 *
 * Each test here reproduces an attack that got through before the rule was enforced.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunFixture, runRequests, withRunPolicy } from "./support/run_fixture.ts";
import { runTool } from "../src/tools/run.ts";
import type { ToolDef, ToolOutput } from "../src/tools/tool.ts";
import { TRUSTED_PRIVATE, UNTRUSTED_PRIVATE } from "../src/util/label.ts";
import { PolicyFilePerson } from "../src/person/policy_file.ts";
import { lookupOnPath } from "../src/policy/programs.ts";
import { commandsRunUnasked } from "../src/policy/runs.ts";

const run = runTool as unknown as ToolDef<never>;
const CANARY = "CANARY-ws-program";
const HOSTILE = `#!/bin/sh\necho ${CANARY}\ncat /etc/hostname 2>/dev/null\n`;

function refLabel(fx: RunFixture, out: ToolOutput) {
  const m = /(?:output: |kept as )ref:(\d+)/.exec(out.content);
  assert.ok(m, `no output reference in: ${out.content}`);
  const found = fx.policy.refs.lookup(`ref:${m[1]}`);
  assert.ok(found.ok);
  return found.value.label;
}

async function ranMarker(fx: RunFixture): Promise<boolean> {
  try {
    await Deno.lstat(join(fx.root, "ran"));
    return true;
  } catch {
    return false;
  }
}

// Without the rule, ruleNames() let the entry's bare word match the workspace-relative name
// "echo", so `./echo hello` ran the workspace script unasked and its output came back (T,priv).
Deno.test("policy file: a vouch entry's bare name never covers a workspace program of that name", async () => {
  const approvals = { vouch: [{ argv: ["echo", "hello"] }] };
  await withRunPolicy({
    files: { "echo": HOSTILE.replace("cat", "touch ran; cat") },
    executables: ["echo"],
    approvals,
    person: new PolicyFilePerson(approvals),
  }, async (fx) => {
    const out = await fx.call(run, { pipeline: [{ program: "./echo", args: ["hello"] }] });
    assert.equal(out.isError, true, out.content);
    assert.match(out.content, /nobody can be asked/);
    assert.ok(!out.content.includes(CANARY));
    assert.equal(await ranMarker(fx), false, "the workspace program did not run");
    // The bare name is the system's echo, which the entry does cover.
    const sys = await fx.call(run, { pipeline: [{ program: "echo", args: ["hello"] }] });
    assert.equal(sys.isError, false, sys.content);
    assert.deepEqual(sys.label, TRUSTED_PRIVATE);
    assert.ok(sys.content.includes("hello") && !sys.content.includes(CANARY));
  });
});

Deno.test("policy file: a run prefix entry for a bare name never covers ./name", async () => {
  const approvals = { run: [{ prefix: ["cat"] }] };
  await withRunPolicy({
    files: { "cat": HOSTILE.replace("cat", "touch ran; cat") },
    executables: ["cat"],
    approvals,
    person: new PolicyFilePerson(approvals),
  }, async (fx) => {
    const out = await fx.call(run, { pipeline: [{ program: "./cat", args: ["x"] }] });
    assert.equal(out.isError, true, out.content);
    assert.equal(await ranMarker(fx), false);
  });
});

// Without binding at the run's start, the entry matched the path alone and ran whatever the
// planner had written there since.
Deno.test("policy file: a workspace program entry is bound to its bytes when the run starts", async () => {
  const approvals = { vouch: [{ argv: ["scripts/build.sh"] }] };
  await withRunPolicy({
    files: { "scripts/build.sh": "#!/bin/sh\necho built\n" },
    executables: ["scripts/build.sh"],
    approvals,
    person: new PolicyFilePerson(approvals),
  }, async (fx) => {
    const first = await fx.call(run, { pipeline: [{ program: "./scripts/build.sh" }] });
    assert.equal(first.isError, false, first.content);
    assert.ok(first.content.includes("built"));
    await Deno.writeTextFile(
      join(fx.root, "scripts/build.sh"),
      HOSTILE.replace("cat", "touch ran; cat"),
    );
    const second = await fx.call(run, { pipeline: [{ program: "scripts/build.sh" }] });
    assert.equal(second.isError, true, second.content);
    assert.match(second.content, /changed since/);
    assert.equal(await ranMarker(fx), false, "the rewritten script did not run");
  });
});

// Without the rule, "exactly this command" on a pipeline stored one vouch per stage, so a
// later `wc -l` alone (or `sh` after `curl … | sh`) ran unasked with trusted output.
Deno.test("vouch: exactly this pipeline covers that pipeline, and no stage on its own", async () => {
  await withRunPolicy({ answers: [{ run: { answer: "vouch" } }] }, async (fx) => {
    const pipeline = [{ program: "printf", args: ["b\\na\\n"] }, { program: "sort" }];
    const first = await fx.call(run, { pipeline });
    assert.ok(first.content.includes("a\nb"), first.content);
    const again = await fx.call(run, { pipeline });
    assert.ok(again.content.includes("a\nb"), again.content);
    assert.equal(runRequests(fx).length, 1, "the whole pipeline is vouched");
    fx.scripted!.push({ run: { answer: "once" } });
    const alone = await fx.call(run, { pipeline: [{ program: "sort" }] });
    assert.equal(runRequests(fx).length, 2, "its second stage alone asks");
    assert.deepEqual(refLabel(fx, alone), UNTRUSTED_PRIVATE);
    fx.scripted!.push({ run: { answer: "once" } });
    await fx.call(run, { pipeline: [pipeline[0]] });
    assert.equal(runRequests(fx).length, 3, "so does its first stage alone");
    const stored = await fx.policy.vouches.list();
    assert.equal(stored.length, 1);
    assert.equal(stored[0].match, "pipeline");
  });
});

Deno.test("vouch: a pipeline whose every stage has its own vouch runs without asking", async () => {
  await withRunPolicy({
    answers: [{ run: { answer: "vouch" } }, { run: { answer: "vouch", prefixArgs: 0 } }],
  }, async (fx) => {
    await fx.call(run, { pipeline: [{ program: "printf", args: ["b\\na\\n"] }] });
    await fx.call(run, { pipeline: [{ program: "sort", args: ["-r"] }] });
    assert.equal(runRequests(fx).length, 2);
    const out = await fx.call(run, {
      pipeline: [{ program: "printf", args: ["b\\na\\n"] }, { program: "sort" }],
    });
    assert.equal(runRequests(fx).length, 2, "both stages are covered by their own vouches");
    assert.deepEqual(out.label, TRUSTED_PRIVATE);
  });
});

Deno.test("vouch: a prefix vouch names one program; a pipeline's vouch is exact", async () => {
  await withRunPolicy({ answers: [{ run: { answer: "vouch", prefixArgs: 0 } }] }, async (fx) => {
    const pipeline = [{ program: "printf", args: ["x\\n"] }, { program: "wc", args: ["-l"] }];
    await fx.call(run, { pipeline });
    const [vouch] = await fx.policy.vouches.list();
    assert.equal(vouch.match, "pipeline", "a prefix answer for a pipeline stores it exactly");
    fx.scripted!.push({ run: { answer: "once" } });
    await fx.call(run, { pipeline: [{ program: "printf", args: ["y\\n"] }, pipeline[1]] });
    assert.equal(runRequests(fx).length, 2, "other arguments are another command");
  });
});

// A bare name must not resolve to a workspace file through PATH either.
Deno.test("programs: PATH entries inside the workspace are skipped", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-path-" }));
  try {
    const inside = join(root, "ws", "bin");
    const outside = join(root, "sys");
    await Deno.mkdir(inside, { recursive: true });
    await Deno.mkdir(outside);
    for (const dir of [inside, outside]) {
      await Deno.writeTextFile(join(dir, "tool"), "#!/bin/sh\n");
      await Deno.chmod(join(dir, "tool"), 0o755);
    }
    const linkDir = join(root, "linkdir");
    await Deno.symlink(inside, linkDir);
    const ws = join(root, "ws");
    const found = await lookupOnPath("tool", [inside, linkDir, outside], ws);
    assert.deepEqual(found, { ok: true, value: join(outside, "tool") });
    const none = await lookupOnPath("tool", [inside, linkDir], ws);
    assert.equal(none.ok, false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// A program in an untrusted place asks every time: a stored vouch and a policy entry alike.
Deno.test("run: a program in an untrusted directory always asks, vouched or not", async () => {
  await withRunPolicy({
    files: { "vendor/tool.sh": "#!/bin/sh\necho vendored\n" },
    executables: ["vendor/tool.sh"],
    trust: { ".": true, "vendor": false },
    answers: [{ run: { answer: "vouch" } }, { run: { answer: "once" } }],
  }, async (fx) => {
    await fx.call(run, { pipeline: [{ program: "vendor/tool.sh" }] });
    const again = await fx.call(run, { pipeline: [{ program: "vendor/tool.sh" }] });
    assert.equal(runRequests(fx).length, 2, "the stored vouch does not stop the question");
    assert.match(runRequests(fx)[1].why, /untrusted/);
    assert.deepEqual(refLabel(fx, again), UNTRUSTED_PRIVATE);
  });
  const approvals = { vouch: [{ argv: ["./vendor/tool.sh"] }] };
  await withRunPolicy({
    files: { "vendor/tool.sh": "#!/bin/sh\ntouch ran\n" },
    executables: ["vendor/tool.sh"],
    trust: { ".": true, "vendor": false },
    approvals,
    person: new PolicyFilePerson(approvals),
  }, async (fx) => {
    const out = await fx.call(run, { pipeline: [{ program: "./vendor/tool.sh" }] });
    assert.equal(out.isError, true, out.content);
    assert.equal(await ranMarker(fx), false);
  });
});

// Without the rule, errors quoted the real path (vendor/<name>) behind a trusted link.
Deno.test("run: errors name the path the planner typed, never an untrusted real name", async () => {
  const secret = "q7f3a9";
  await withRunPolicy({
    files: {
      [`vendor/${secret}`]: "not a program\n",
      [`vendor/${secret}-x`]: "#!/nonexistent/interpreter\n",
    },
    executables: [`vendor/${secret}-x`],
    trust: { ".": true, "vendor": false },
    answers: [{ run: { answer: "once" } }],
    // Unconfined, so the failure to start is the OS's (inside bwrap, bwrap itself starts),
    // unless the run's cgroup wrapper starts it (below).
    config: { run: { sandbox: "none" } },
  }, async (fx) => {
    await Deno.mkdir(join(fx.root, "bin"));
    await Deno.symlink(`../vendor/${secret}`, join(fx.root, "bin/x"));
    await Deno.symlink(`../vendor/${secret}-x`, join(fx.root, "bin/y"));
    const notExec = await fx.call(run, { pipeline: [{ program: "bin/x" }] });
    assert.equal(notExec.isError, true);
    assert.ok(notExec.content.includes("bin/x"), notExec.content);
    assert.ok(!notExec.content.includes(secret), notExec.content);
    const noStart = await fx.call(run, { pipeline: [{ program: "./bin/y" }] });
    assert.ok(!noStart.content.includes(secret), noStart.content);
    // Started directly, the OS's failure is an error naming the typed path; started through the
    // cgroup wrapper of an unconfined run (leftovers.ts), as through bwrap, it is the wrapper's
    // exit status, and what the wrapper said stays in the output's reference.
    if (noStart.isError) assert.ok(noStart.content.includes("./bin/y"), noStart.content);
    else assert.match(noStart.content, /exit status 12[67]/, noStart.content);
  });
});

Deno.test("run: vouching a program that runs other code says what it means", async () => {
  await withRunPolicy(
    { answers: [{ run: { answer: "once" } }, { run: { answer: "once" } }] },
    async (fx) => {
      await fx.call(run, { pipeline: [{ program: "sh", args: ["-c", "true"] }] });
      await fx.call(run, { pipeline: [{ program: "printf", args: ["x"] }] });
      const [sh, printf] = runRequests(fx);
      assert.equal(sh.warnings.length, 1);
      assert.match(sh.warnings[0], /trusted/);
      assert.deepEqual(printf.warnings, []);
    },
  );
});

Deno.test("run: the commands that run unasked are listed for the planner, named as it would type them", async () => {
  const approvals = { run: [{ prefix: ["deno", "test"] }], vouch: [{ argv: ["git", "status"] }] };
  await withRunPolicy({
    approvals,
    files: { "scripts/b.sh": "#!/bin/sh\n" },
    executables: ["scripts/b.sh"],
    answers: [{ run: { answer: "vouch" } }],
  }, async (fx) => {
    await fx.call(run, { pipeline: [{ program: "./scripts/b.sh", args: ["x"] }] });
    const lines = await commandsRunUnasked(fx.policy);
    assert.deepEqual(lines, [
      "./scripts/b.sh x (vouched: output shown to you)",
      "git status (vouched: output shown to you)",
      "deno test … (output stays a reference)",
    ]);
  });
});

// The list was built from each entry's bound real path, so a trusted `scripts/b.sh` that is a link
// into `vendor/` put the vendored file's name (`./vendor/CANARY…`), text from an untrusted folder,
// into the planner's system prompt.
Deno.test("run: the unasked list never names a program by a real path whose name is not trusted", async () => {
  const hidden = `vendor/${CANARY}-IGNORE-PREVIOUS.sh`;
  const approvals = {
    vouch: [{ argv: ["./scripts/b.sh", "y"] }],
    run: [{ prefix: ["./scripts/b.sh"] }],
  };
  await withRunPolicy({
    approvals,
    trust: { ".": true, "vendor": false },
    files: { [hidden]: "#!/bin/sh\n" },
    executables: [hidden],
    symlinks: { "scripts/b.sh": `../${hidden}` },
    answers: [{ run: { answer: "vouch" } }],
  }, async (fx) => {
    await fx.call(run, { pipeline: [{ program: "./scripts/b.sh", args: ["x"] }] });
    assert.equal((await fx.policy.vouches.list()).length, 1, "the person's vouch was stored");
    const lines = await commandsRunUnasked(fx.policy);
    for (const line of lines) assert.ok(!line.includes(CANARY), line);
    // The policy file's entries as the person wrote them; the stored vouch, whose program is
    // known only by its real path, is left out.
    assert.deepEqual(lines, [
      "./scripts/b.sh y (vouched: output shown to you)",
      "./scripts/b.sh … (output stays a reference)",
    ]);
  });
});
