import assert from "node:assert/strict";
import { join } from "node:path";
import { AuditLog } from "./audit.ts";
import { composeSession } from "../session/compose.ts";
import { label } from "../util/label.ts";
import { TrustMap } from "./trust_map.ts";
import type { EffectWorker } from "../worker/client.ts";
import type { Person } from "../person/person.ts";
import type { Workspace } from "./workspace.ts";

async function lines(path: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(path);
  assert.ok(text.endsWith("\n"));
  return text.trimEnd().split("\n").map((l) => JSON.parse(l));
}

Deno.test("audit: one JSON line per decision, with time, tool, routing, labels, decision, decider", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-audit-" });
  try {
    const path = join(dir, "audit.jsonl");
    const log = new AuditLog(path, "sess-1");
    const before = Date.now();
    await log.append({
      tool: "write_file",
      routing: { path: "src/a.ts" },
      labels: { content: "(T,pub)", context: "(T,pub)" },
      decision: "approved",
      by: "person",
    });
    await log.append({
      tool: "run",
      routing: { stages: [{ program: "git", args: ["status"] }] },
      labels: { output: "(T,priv)" },
      decision: "ran",
      by: "rule",
      reason: "vouched",
    });
    await log.append({
      tool: "read_output",
      routing: { ref: "ref:3" },
      labels: {},
      decision: "declined",
      by: "policy-file",
      sha256: "0".repeat(64),
    });
    const rows = await lines(path);
    assert.equal(rows.length, 3);
    assert.deepEqual(rows.map((r) => r.by), ["person", "rule", "policy-file"]);
    assert.deepEqual(rows.map((r) => r.tool), ["write_file", "run", "read_output"]);
    assert.deepEqual(rows[0].routing, { path: "src/a.ts" });
    assert.deepEqual(rows[1].labels, { output: "(T,priv)" });
    assert.equal(rows[1].reason, "vouched");
    for (const r of rows) {
      assert.equal(r.session, "sess-1");
      const t = Date.parse(String(r.time));
      assert.ok(Number.isFinite(t) && t >= before - 1000, `an ISO time: ${r.time}`);
      assert.equal(typeof r.decision, "string");
    }
    assert.deepEqual(log.entries.length, 3);
    // A second log on the same file (a resumed session) appends; nothing is rewritten.
    await new AuditLog(path, "sess-1").append({
      tool: "todo_write",
      routing: {},
      labels: {},
      decision: "d",
      by: "nobody",
    });
    assert.equal((await lines(path)).length, 4);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit: Policy.record writes the labels in (T,pub) notation with the context label", async () => {
  const { policy } = await composeSession({
    workspace: { root: "/w", protectedDirs: [], caseInsensitive: false } as Workspace,
    worker: {} as EffectWorker,
    person: { decider: "person" } as unknown as Person,
    trust: new TrustMap("/w"),
    trustFile: null,
    sessionId: "s",
    auditFile: null,
    sessionDir: null,
    scratch: "/s",
    vouchesFile: null,
  });
  const audit = policy.audit;
  policy.placeInContext(label("U", "pub"));
  await policy.record({
    tool: "read_file",
    routing: { path: "vendor/x.js" },
    labels: { content: label("U", "priv") },
    decision: "quarantined",
    by: "nobody",
  });
  assert.equal(audit.entries.length, 1);
  assert.deepEqual(audit.entries[0].labels, { context: "(U,pub)", content: "(U,priv)" });
  assert.equal(audit.entries[0].decision, "quarantined");
});

Deno.test("audit: content in an entry's routing is refused: routing is the tool's routing half", async () => {
  const log = new AuditLog(null, "s");
  await assert.rejects(
    log.append({
      tool: "run",
      routing: { stages: [], stdin: "ref:1" },
      labels: {},
      decision: "ran",
      by: "rule",
    }),
    /'stdin' is not routing/,
  );
  await assert.rejects(
    log.append({
      tool: "spawn_processor",
      routing: { reads: ["ref:0"] },
      labels: {},
      decision: "x",
      by: "rule",
    }),
    /'reads' is not routing/,
  );
  await log.append({
    tool: "run",
    routing: { stages: [] },
    inputs: { stdin: "ref:1" },
    labels: {},
    decision: "ran",
    by: "rule",
  });
  assert.equal(log.entries.length, 1);
});
