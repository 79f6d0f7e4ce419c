/**
 * The canary test of issue 3: a workspace whose untrusted files, untrusted file names and
 * untrusted directories hold unique canary strings. Every filesystem tool is driven over it in
 * every mode (person keeps / shows as untrusted / vouches, approves or refuses writes; one-shot
 * with and without a policy file), and nothing returned to the planner may hold a canary —
 * except the contents of a file the person chose to show as untrusted or vouched for.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withPolicy } from "./support/policy_fixture.ts";
import { ScriptedPerson } from "./support/scripted_person.ts";
import { PolicyFilePerson } from "../src/person/policy_file.ts";
import type {
  Approval,
  Person,
  QuarantinedReadAnswer,
  QuarantinedReadRequest,
  WriteApprovalRequest,
} from "../src/person/person.ts";
import type { ApprovalsFile } from "../src/policy/approvals_file.ts";
import type { ToolDef } from "../src/tools/tool.ts";
import { readFileTool } from "../src/tools/read_file.ts";
import { listFilesTool } from "../src/tools/list_files.ts";
import { searchTool } from "../src/tools/search.ts";
import { writeFileTool } from "../src/tools/write_file.ts";
import { editFileTool } from "../src/tools/edit_file.ts";

const FILES: Record<string, string | Uint8Array> = {
  "src/trusted.ts": "token trusted\n",
  "src/tainted.txt": "CANARY_C4 token\n",
  "vendor/CANARY_N1.js": "CANARY_C1 token\n",
  "vendor/CANARY_D2/CANARY_N3.txt": "CANARY_C3 token\nsecond token line\n",
  "vendor/.gitignore": "CANARY_C5\n",
  "vendor/bin.dat": new TextEncoder().encode("\0CANARY_C6 token\n"),
  "CANARY_R7.md": "CANARY_C7 token\n",
};

interface TrustSetup {
  name: string;
  trust: Record<string, boolean>;
  canaries: string[];
}

const COMMON = [
  "CANARY_N1",
  "CANARY_D2",
  "CANARY_N3",
  "CANARY_C1",
  "CANARY_C3",
  "CANARY_C4",
  "CANARY_C5",
  "CANARY_C6",
];
const SETUPS: TrustSetup[] = [
  // The root trusted, vendor/ not: CANARY_R7.md is a trusted file with a trusted name.
  { name: "root trusted", trust: { ".": true, vendor: false }, canaries: COMMON },
  // Only src/ trusted: every name at the root, and CANARY_R7.md's content, are untrusted.
  {
    name: "only src trusted",
    trust: { src: true },
    canaries: [...COMMON, "CANARY_R7", "CANARY_C7"],
  },
];

/** Answers every question the same way, and records nothing the test needs beyond the audit. */
class ModePerson extends ScriptedPerson {
  constructor(private read: QuarantinedReadAnswer, private approve: boolean) {
    super();
  }
  override quarantinedRead(request: QuarantinedReadRequest): Promise<QuarantinedReadAnswer> {
    this.asked.push({ kind: "read", request });
    return Promise.resolve(this.read);
  }
  override approveWrite(request: WriteApprovalRequest): Promise<Approval> {
    this.asked.push({ kind: "write", request });
    return Promise.resolve(this.approve ? { approved: true } : { approved: false });
  }
}

interface Mode {
  name: string;
  person: () => Person;
  approvals: ApprovalsFile | null;
}

const MODES: Mode[] = [
  { name: "keep, writes approved", person: () => new ModePerson("keep", true), approvals: null },
  { name: "keep, writes refused", person: () => new ModePerson("keep", false), approvals: null },
  { name: "show as untrusted", person: () => new ModePerson("untrusted", true), approvals: null },
  { name: "vouch", person: () => new ModePerson("vouch", true), approvals: null },
  { name: "one-shot, no policy file", person: () => new PolicyFilePerson(null), approvals: null },
  ...(["keep", "untrusted"] as const).map((answer) => {
    const file: ApprovalsFile = { quarantinedRead: answer, writes: ["**"] };
    return {
      name: `one-shot policy file (${answer}, writes **)`,
      person: () => new PolicyFilePerson(file),
      approvals: file,
    };
  }),
];

for (const setup of SETUPS) {
  for (const mode of MODES) {
    Deno.test(`canary: no untrusted content or name reaches the planner (${setup.name}; ${mode.name})`, async () => {
      await withPolicy({
        files: FILES,
        trust: setup.trust,
        person: mode.person(),
        approvals: mode.approvals,
      }, async (fx) => {
        fx.policy.storedTrust.setFile("src/tainted.txt", { integrity: "U", why: "write" });
        const vouched = new Set<string>();
        let checked = 0;

        const canariesIn = async (rel: string): Promise<string[]> => {
          try {
            const text = new TextDecoder().decode(await Deno.readFile(join(fx.root, rel)));
            return setup.canaries.filter((c) => text.includes(c));
          } catch {
            return [];
          }
        };

        const drive = async (tool: ToolDef<never>, args: Record<string, unknown>) => {
          const auditBefore = fx.policy.audit.entries.length;
          const out = await fx.call(tool, args);
          const allowed = new Set(vouched);
          for (const e of fx.policy.audit.entries.slice(auditBefore)) {
            const path = e.routing.path as string;
            if (e.decision === "quarantined read: untrusted") {
              for (const c of await canariesIn(path)) allowed.add(c);
            }
            if (e.decision === "file vouched") {
              for (const c of await canariesIn(path)) {
                allowed.add(c);
                vouched.add(c);
              }
            }
          }
          for (const canary of setup.canaries) {
            if (allowed.has(canary)) continue;
            assert.ok(
              !out.content.includes(canary),
              `${tool.name}(${JSON.stringify(args)}) showed ${canary}:\n${out.content}`,
            );
          }
          checked++;
          return out;
        };

        const everyTool = async (round: number) => {
          for (
            const args of [{}, { directory: "vendor" }, { pattern: "**/*" }, { pattern: "*.js" }, {
              directory: "src",
            }]
          ) {
            await drive(listFilesTool, args);
          }
          for (
            const args of [
              { pattern: "token" },
              { pattern: "CANARY" },
              { pattern: "token", include: "*.txt" },
              { pattern: "token", directory: "vendor" },
              { pattern: "second token" },
            ]
          ) await drive(searchTool, args);
          await drive(readFileTool, { path: "src/trusted.ts" });
          await drive(readFileTool, { path: "src/tainted.txt" });
          const refs = fx.policy.refs.size;
          for (let i = 0; i < refs; i++) {
            await drive(readFileTool, { path_ref: `ref:${i}` });
            await drive(readFileTool, { path_ref: `ref:${i}`, offset: 2, limit: 1 });
          }
          for (let i = 0; i < refs; i++) {
            await drive(writeFileTool, {
              path: `out/r${round}-copy${i}.txt`,
              contents_ref: `ref:${i}`,
            });
            await drive(writeFileTool, { path_ref: `ref:${i}`, contents: "planner text token\n" });
            await drive(editFileTool, {
              path_ref: `ref:${i}`,
              old_text: "token",
              new_text: "TOKEN",
            });
            await drive(editFileTool, { path_ref: `ref:${i}`, old_text: "CANARY", new_text: "x" });
          }
          await drive(editFileTool, {
            path: "src/tainted.txt",
            old_text: "token",
            new_text: "tok",
          });
          await drive(readFileTool, { path: `out/r${round}-copy0.txt` });
        };

        await everyTool(0);
        // Again, over whatever the first round wrote, reused references included.
        await everyTool(1);
        assert.ok(checked > 60, `${checked} results checked`);
      });
    });
  }
}
