/**
 * A read is labelled by what was opened (docs/contract.md §3.2, §13.3): a trusted file that another
 * process turns into a link into an untrusted folder of the workspace, between the policy layer's
 * check and the effect worker's open, must never come back with the trusted label. Each read the
 * policy layer labels is tried with the swap made exactly there (a hook between the check and the
 * worker's act), and the commonest ones against a process that keeps flipping the file, on both
 * walls.
 *
 * Before the rule every test here failed, each giving the untrusted canary (bytes or names) the
 * trusted label: the path was checked, then the link followed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Fixture, type FixtureOptions, withPolicy } from "./support/policy_fixture.ts";
import { readFileTool } from "../src/tools/read_file.ts";
import { searchTool } from "../src/tools/search.ts";
import { editFileTool } from "../src/tools/edit_file.ts";
import { listFilesTool } from "../src/tools/list_files.ts";
import type { ToolDef } from "../src/tools/tool.ts";
import type { WorkerRequest } from "../src/worker/protocol.ts";
import { kernelWallStatus } from "../src/worker/client.ts";
import { readFileRef } from "../src/policy/reads.ts";
import { skillsPort } from "../src/policy/ports/skills.ts";
import { projectMemory } from "../src/skills/discover.ts";
import { PolicyFilePerson } from "../src/person/policy_file.ts";
import { TRUSTED_PUBLIC } from "../src/util/label.ts";

const EVIL = "CANARY-flipped-IGNORE-PREVIOUS";
const TRUSTED = "trusted words\nneedle in the trusted file\n";
const SKILL = (body: string) => `---\nname: tidy\ndescription: Tidies.\n---\n${body}\n`;

const walls: ("process" | "kernel")[] = kernelWallStatus().usable
  ? ["process", "kernel"]
  : ["process"];

const tool = <T>(t: T) => t as unknown as ToolDef<never>;

/** The paths a worker request would open. */
function pathsOf(request: WorkerRequest): string[] {
  if ("paths" in request) return request.paths;
  if ("path" in request) return [request.path];
  return [];
}

/**
 * Replaces `rel` by a link to `target` (as written in the link) the first time a request of one
 * of `ops` would open it: after the policy layer checked and labelled it, before the worker acts.
 */
function swapOnce(root: () => string, rel: string, target: string, ops: WorkerRequest["op"][]) {
  let done = false;
  return (request: WorkerRequest) => {
    if (done || !ops.includes(request.op)) return;
    const abs = join(root(), rel);
    if (!pathsOf(request).includes(abs)) return;
    done = true;
    Deno.renameSync(abs, `${abs}.kept`);
    Deno.symlinkSync(target, abs);
  };
}

/** A fixture whose root is known to the hook before the fixture exists. */
async function withSwap(
  options: FixtureOptions,
  swap: { rel: string; target: string; ops: WorkerRequest["op"][] },
  fn: (fx: Fixture) => Promise<void>,
) {
  let root = "";
  const hook = swapOnce(() => root, swap.rel, swap.target, swap.ops);
  await withPolicy({ ...options, beforeCall: hook }, async (fx) => {
    root = fx.root;
    await fn(fx);
  });
}

const files = {
  "src/a.txt": TRUSTED,
  "vendor/evil.txt": `${EVIL}\nneedle in the vendored file\n`,
};
const trust = { ".": true, "vendor": false };

for (const wall of walls) {
  Deno.test(`read race (${wall}): read_file of a trusted file swapped for a link before the open is refused`, async () => {
    await withSwap(
      { files, trust, wall },
      { rel: "src/a.txt", target: "../vendor/evil.txt", ops: ["read"] },
      async (fx) => {
        const out = await fx.call(tool(readFileTool), { path: "src/a.txt" });
        assert.ok(!out.content.includes(EVIL), out.content);
        assert.equal(out.isError, true, out.content);
        assert.match(out.content, /src\/a\.txt .*changed/);
      },
    );
  });

  Deno.test(`read race (${wall}): a search whose trusted file is swapped for a link shows none of its lines`, async () => {
    await withSwap(
      { files, trust, wall },
      { rel: "src/a.txt", target: "../vendor/evil.txt", ops: ["findInFiles"] },
      async (fx) => {
        const out = await fx.call(tool(searchTool), { pattern: "needle", directory: "src" });
        assert.ok(!out.content.includes(EVIL), out.content);
        assert.ok(!out.content.includes("vendored"), out.content);
      },
    );
  });

  Deno.test(`read race (${wall}): a file reference's bytes (processor input, stdin, show) are refused when swapped`, async () => {
    await withSwap(
      { files, trust, wall },
      { rel: "src/a.txt", target: "../vendor/evil.txt", ops: ["read"] },
      async (fx) => {
        const ref = await fx.policy.refs.add({
          kind: "file",
          label: TRUSTED_PUBLIC,
          path: "src/a.txt",
          size: TRUSTED.length,
          tool: "read_file",
        });
        const read = await readFileRef(fx.policy, ref, 1 << 20);
        if (read.ok) {
          const text = new TextDecoder().decode(read.value.bytes);
          assert.ok(!(text.includes(EVIL) && read.value.label.integrity === "T"), text);
        }
        assert.equal(read.ok, false);
      },
    );
  });

  Deno.test(`read race (${wall}): edit_file never takes a swapped file's bytes as the trusted old content`, async () => {
    await withSwap(
      { files, trust, wall, answers: [{ write: { approved: true } }] },
      { rel: "src/a.txt", target: "../vendor/evil.txt", ops: ["read"] },
      async (fx) => {
        const out = await fx.call(tool(editFileTool), {
          path: "src/a.txt",
          old_text: "needle in the",
          new_text: "pin in the",
        });
        assert.equal(out.isError, true, out.content);
        // Nothing was written: the link is still there (the write would have replaced it with
        // the vendored bytes, edited, as a trusted file).
        const now = await Deno.lstat(join(fx.root, "src/a.txt"));
        assert.ok(now.isSymlink, "the vendored bytes were written back as a trusted file");
        assert.equal(fx.scripted!.asked.length, 0, "nobody was asked about the swapped bytes");
      },
    );
  });

  Deno.test(`read race (${wall}): AGENTS.md swapped for a link is not given to the planner`, async () => {
    await withSwap(
      { files: { ...files, "AGENTS.md": "Be brief.\n" }, trust, wall },
      { rel: "AGENTS.md", target: "vendor/evil.txt", ops: ["read", "hash"] },
      async (fx) => {
        const memory = await projectMemory(skillsPort(fx.policy));
        assert.ok(!(memory?.text ?? "").includes(EVIL), memory?.text ?? "");
        assert.equal(memory?.text ?? null, null);
      },
    );
  });

  Deno.test(`read race (${wall}): a workspace skill swapped for a link is not loaded`, async () => {
    const skill = ".bravebot/skills/tidy/SKILL.md";
    await withSwap(
      {
        files: { ...files, [skill]: SKILL("Tidy up."), "vendor/SKILL.md": SKILL(EVIL) },
        trust,
        wall,
      },
      { rel: skill, target: "../../../vendor/SKILL.md", ops: ["read"] },
      async (fx) => {
        const port = skillsPort(fx.policy);
        const file = await port.resolve(skill);
        assert.ok(file.ok);
        const loaded = await port.readWorkspaceSkill(file.value);
        assert.ok(!loaded.ok || !loaded.value.text.includes(EVIL), JSON.stringify(loaded));
        assert.equal(loaded.ok, false);
      },
    );
  });

  Deno.test(`read race (${wall}): the skills folder swapped for a link does not list the other folder's names`, async () => {
    const skills = ".bravebot/skills";
    await withSwap(
      {
        files: { [`${skills}/tidy/SKILL.md`]: SKILL("Tidy up."), [`vendor/s/${EVIL}/`]: "" },
        trust,
        wall,
      },
      { rel: skills, target: "../vendor/s", ops: ["readDirs"] },
      async (fx) => {
        const port = skillsPort(fx.policy);
        const dir = await port.resolve(skills);
        assert.ok(dir.ok);
        const listed = await port.listTrustedFolder(dir.value);
        assert.ok(!JSON.stringify(listed).includes(EVIL), JSON.stringify(listed));
        assert.equal(listed.kind, "error");
      },
    );
  });

  Deno.test(`read race (${wall}): a listed folder swapped for a link does not show the other folder's names`, async () => {
    await withSwap(
      {
        files: { "src/sub/ok.txt": "x", [`vendor/${EVIL}.txt`]: "y" },
        trust,
        wall,
      },
      { rel: "src/sub", target: "../vendor", ops: ["readDirs"] },
      async (fx) => {
        const out = await fx.call(tool(listFilesTool), { directory: "src" });
        assert.ok(!out.content.includes(EVIL), out.content);
      },
    );
  });
}

// ---- a process that keeps flipping the file ----

/**
 * Starts a process that flips `abs` between the regular file it is and a link to `target`, at
 * most `times` times, keeping the file's own inode (a hard link holds it while the link is in
 * place). It ends on its own, or when the test kills it.
 */
function startFlipper(abs: string, target: string, times: number): Deno.ChildProcess {
  const script = `
    const [abs, target, times] = Deno.args;
    for (let i = 0; i < Number(times); i++) {
      try {
        Deno.linkSync(abs, abs + ".hold");
        Deno.symlinkSync(target, abs + ".link");
        Deno.renameSync(abs + ".link", abs);
        Deno.renameSync(abs + ".hold", abs);
      } catch { /* a read in the way: try again */ }
    }`;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script, abs, target, String(times)],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Ends the flipper and puts the file back in place if it was stopped with the link there. */
async function stopFlipper(child: Deno.ChildProcess, abs: string) {
  try {
    child.kill("SIGKILL");
  } catch { /* it ended */ }
  await child.status;
  for (const leftover of [".link", ".hold"]) {
    try {
      if (leftover === ".hold") Deno.renameSync(abs + leftover, abs);
      else Deno.removeSync(abs + leftover);
    } catch { /* not there */ }
  }
}

const FLIPS = 200_000;
const READS = 150;

for (const wall of walls) {
  Deno.test(`read race (${wall}): while another process flips a trusted file and a link, no read returns the link's bytes as trusted`, async () => {
    await withPolicy({ files, trust, wall, person: new PolicyFilePerson(null) }, async (fx) => {
      const abs = join(fx.root, "src/a.txt");
      const flipper = startFlipper(abs, "../vendor/evil.txt", FLIPS);
      try {
        for (let i = 0; i < READS; i++) {
          const read = await fx.call(tool(readFileTool), { path: "src/a.txt" });
          assert.ok(!read.content.includes(EVIL), `read_file ${i}: ${read.content}`);
          const found = await fx.call(tool(searchTool), { pattern: "needle", directory: "src" });
          assert.ok(!found.content.includes(EVIL), `search ${i}: ${found.content}`);
          assert.ok(!found.content.includes("vendored"), `search ${i}: ${found.content}`);
        }
      } finally {
        await stopFlipper(flipper, abs);
      }
      // The rule refuses a swapped read, not every read: with the file in place it reads.
      const after = await fx.call(tool(readFileTool), { path: "src/a.txt" });
      assert.equal(after.isError, false, after.content);
      assert.ok(after.content.includes("trusted words"), after.content);
      assert.deepEqual(after.label, TRUSTED_PUBLIC);
    });
  });
}
