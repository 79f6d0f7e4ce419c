import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_ENDPOINT, isLoopback, loadConfig, parseConfig } from "./config.ts";
import { DEFAULT_LIMITS, settingsFrom } from "./settings.ts";

function refusal(text: string): string {
  const r = parseConfig(text, "config.json");
  assert.equal(r.ok, false, text);
  return r.ok ? "" : r.error;
}

Deno.test("config: a full valid file is accepted", () => {
  const r = parseConfig(
    JSON.stringify({
      endpoint: "http://127.0.0.1:8080/v1",
      model: "qwen",
      contextWindow: 65536,
      timeouts: { requestMs: 60000, runMs: 30000 },
      privatePatterns: ["*.sqlite"],
      run: { sandbox: "bwrap", programs: ["/usr/bin/git"] },
    }),
    "config.json",
  );
  assert.ok(r.ok, r.ok ? "" : r.error);
  assert.equal(r.value.model, "qwen");
});

Deno.test("config: an invalid file is an error naming the field, never a default", () => {
  const cases: [string, RegExp][] = [
    ['{"modle": "x"}', /^config\.json: unknown field 'modle' \(did you mean 'model'\?\)$/],
    ['{"endpoint": "not a url"}', /^config\.json: endpoint: /],
    ['{"contextWindow": "big"}', /contextWindow: .*expected number/],
    ['{"contextWindow": 5}', /contextWindow: .*1024/],
    ['{"timeouts": {"runMs": 700000}}', /timeouts\.runMs: /],
    ['{"timeouts": {"other": 1}}', /timeouts: unknown field 'other'/],
    ['{"run": {"sandbox": "docker"}}', /run\.sandbox: /],
    ['{"privatePatterns": "*.key"}', /privatePatterns: .*expected array/],
    ['{"model": ""}', /model: /],
    ["{,}", /^config\.json is not valid JSON/],
  ];
  for (const [text, want] of cases) assert.match(refusal(text), want, text);
});

Deno.test("config: a missing file is empty unless it was asked for by --config", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bb-config-" });
  try {
    const path = join(dir, "config.json");
    assert.deepEqual(await loadConfig(path, false), { ok: true, value: {} });
    const required = await loadConfig(path, true);
    assert.equal(required.ok, false);
    if (!required.ok) assert.ok(required.error.includes(path));
    await Deno.writeTextFile(path, '{"bad": true}');
    const bad = await loadConfig(path, false);
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.equal(bad.error, `${path}: unknown field 'bad'`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settings: defaults of docs/contract.md §14, the command line over the config", () => {
  const s = settingsFrom({});
  assert.equal(s.planner.url, DEFAULT_ENDPOINT);
  assert.equal(DEFAULT_ENDPOINT, "http://127.0.0.1:11434/v1");
  assert.equal(s.planner.local, true);
  assert.equal(s.processor.url, DEFAULT_ENDPOINT, "the processor defaults to the planner's");
  assert.equal(s.limits.readLines, 2000);
  assert.equal(s.limits.readBytes, 256 * 1024);
  assert.equal(s.limits.listEntries, 1000);
  assert.equal(s.limits.searchLines, 200);
  assert.equal(s.limits.runTimeoutMs, 120_000);
  assert.equal(s.limits.runMaxTimeoutMs, 600_000);
  assert.equal(s.limits.shownOutputChars, 30_000);
  assert.equal(s.limits.refOutputBytes, 16 * 1024 * 1024);
  assert.equal(s.limits.askQuestions, 4);
  assert.equal(s.maxTurns, 50);
  assert.deepEqual(DEFAULT_LIMITS, settingsFrom({}).limits);
  const c = settingsFrom(
    { endpoint: "https://models.example/v1", model: "a", timeouts: { runMs: 5000 } },
    { model: "b", maxTurns: 3 },
  );
  assert.equal(c.planner.model, "b");
  assert.equal(c.processor.model, "b");
  assert.equal(c.planner.local, false, "a remote endpoint is not local unless configured");
  assert.equal(c.limits.runTimeoutMs, 5000);
  assert.equal(c.maxTurns, 3);
  assert.equal(
    settingsFrom({ endpoint: "https://m.example/v1", endpointLocal: true }).planner.local,
    true,
  );
});

Deno.test("config: loopback means 127.0.0.0/8, ::1 and localhost only", () => {
  for (
    const u of [
      "http://127.0.0.1:11434/v1",
      "http://localhost/v1",
      "http://[::1]:8080/v1",
      "http://127.9.9.9/",
    ]
  ) {
    assert.equal(isLoopback(u), true, u);
  }
  for (
    const u of [
      "http://10.0.0.1/v1",
      "http://127.0.0.1.evil.example/v1",
      "http://localhost.example/",
      "nonsense",
    ]
  ) {
    assert.equal(isLoopback(u), false, u);
  }
});
