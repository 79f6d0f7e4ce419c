import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkTrustableDir,
  type FileEntry,
  FOREIGN_TREES,
  loadTrustMap,
  normaliseRuleDir,
  PERSON_TRUST_WAIT,
  TrustMap,
  updateTrustMap,
} from "./trust_map.ts";
import { LockTimeout, saveJsonFile } from "../state/jsonfile.ts";
import { holdLock } from "../../test/support/lock_holder.ts";
import { personPolicy } from "./ports/person_facing.ts";
import { type ComposedSession, type ComposeOptions, composeSession } from "../session/compose.ts";
import { openWorkspace } from "./workspace.ts";
import { label } from "../util/label.ts";
import { statePaths } from "../state/session_paths.ts";
import type { EffectWorker } from "../worker/client.ts";
import type { Person } from "../person/person.ts";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);
const noHash = () => Promise.reject(new Error("the hash must not be asked for"));

async function tempDir(): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-trust-" }));
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("trust map: a path no rule covers is untrusted", () => {
  const map = new TrustMap("/w");
  assert.equal(map.ruleIntegrity("src/a.ts"), "U");
  assert.equal(map.ruleIntegrity("."), "U");
  map.setRule("docs", true);
  assert.equal(map.ruleIntegrity("src/a.ts"), "U");
});

Deno.test("trust map: the longest matching prefix wins, by whole segments", () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setRule("src", false);
  map.setRule("src/gen", true);
  map.setRule("src/gen/tmp", false);
  const expect: [string, "T" | "U"][] = [
    [".", "T"],
    ["README.md", "T"],
    ["src", "U"],
    ["src/a.ts", "U"],
    ["srcx/a.ts", "T"],
    ["src/gen", "T"],
    ["src/gen/x.ts", "T"],
    ["src/generated/x.ts", "U"],
    ["src/gen/tmp/y", "U"],
  ];
  for (const [rel, want] of expect) assert.equal(map.ruleIntegrity(rel), want, rel);
  // Order of rules does not matter, only their length.
  const reversed = new TrustMap("/w");
  for (const r of [...map.rules].reverse()) reversed.setRule(r.dir, r.trusted);
  for (const [rel, want] of expect) assert.equal(reversed.ruleIntegrity(rel), want, rel);
});

Deno.test("trust map: setRule replaces the rule for the same folder; removeRule reports", () => {
  const map = new TrustMap("/w");
  map.setRule("src", true);
  map.setRule("src", false);
  assert.equal(map.rules.length, 1);
  assert.equal(map.ruleIntegrity("src/a"), "U");
  assert.equal(map.removeRule("src"), true);
  assert.equal(map.removeRule("src"), false);
});

Deno.test("trust map: first use 'workspace' trusts all but foreign trees, at any depth", () => {
  const map = new TrustMap("/w");
  map.applyFirstUse("workspace");
  assert.equal(map.firstUse, "workspace");
  const expect: [string, "T" | "U"][] = [
    ["src/main.ts", "T"],
    [".", "T"],
    ["node_modules", "U"],
    ["node_modules/left-pad/index.js", "U"],
    ["packages/app/node_modules/x/y.js", "U"],
    ["a/b/c/d/e/vendor/lib.go", "U"],
    [".git/config", "U"],
    ["sub/.git/hooks/pre-commit", "U"],
    ["dist/bundle.js", "U"],
    ["my_node_modules/x.js", "T"],
    ["node_modules_backup/x.js", "T"],
    ["src/building/x.ts", "T"],
  ];
  for (const [rel, want] of expect) assert.equal(map.ruleIntegrity(rel), want, rel);
  for (const tree of FOREIGN_TREES) assert.equal(map.ruleIntegrity(`x/${tree}/y`), "U", tree);
});

Deno.test("trust map: first use 'nothing' trusts nothing", () => {
  const map = new TrustMap("/w");
  map.applyFirstUse("nothing");
  assert.equal(map.firstUse, "nothing");
  assert.equal(map.ruleIntegrity("src/main.ts"), "U");
  assert.equal(map.ruleIntegrity("."), "U");
});

Deno.test("trust map: a written-out rule beats a **/ rule of the same length; deeper wins", () => {
  const map = new TrustMap("/w");
  map.applyFirstUse("workspace");
  map.setRule("node_modules/our-lib", true);
  assert.equal(map.ruleIntegrity("node_modules/our-lib/index.js"), "T");
  assert.equal(map.ruleIntegrity("node_modules/other/index.js"), "U");
  // The deepest node_modules counts: it is longer than the trusted prefix above it.
  assert.equal(map.ruleIntegrity("node_modules/our-lib/node_modules/dep/x.js"), "U");
  map.setRule("vendor", true);
  assert.equal(map.ruleIntegrity("vendor/x.go"), "T", "trust add vendor/ means what it says");
  assert.equal(map.ruleIntegrity("a/vendor/x.go"), "U", "but only that vendor/");
});

Deno.test("trust map: per-file entries override the rules for that file only", async () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setRule("vendor", false);
  map.setFile("src/written.ts", { integrity: "U", why: "write" });
  map.setFile("vendor/patched.js", { integrity: "T", sha256: HASH_A, why: "write" });
  assert.equal(await map.fileIntegrity("src/written.ts", noHash), "U");
  assert.equal(await map.fileIntegrity("src/other.ts", noHash), "T");
  assert.equal(await map.fileIntegrity("vendor/patched.js", () => Promise.resolve(HASH_A)), "T");
  assert.equal(await map.fileIntegrity("vendor/other.js", noHash), "U");
});

Deno.test("trust map: a hash-bound entry falls back to the rules when the content changes", async () => {
  const map = new TrustMap("/w");
  map.setRule("vendor", false);
  map.setRule("src", true);
  map.setFile("vendor/x.js", { integrity: "T", sha256: HASH_A, why: "vouch" });
  map.setFile("src/y.ts", { integrity: "T", sha256: HASH_A, why: "write" });
  assert.equal(await map.fileIntegrity("vendor/x.js", () => Promise.resolve(HASH_B)), "U");
  assert.equal(await map.fileIntegrity("vendor/x.js", () => Promise.resolve(null)), "U");
  assert.equal(await map.fileIntegrity("src/y.ts", () => Promise.resolve(HASH_B)), "T");
  // An untrusting entry is not bound: changing the bytes does not clean them.
  map.setFile("src/z.ts", { integrity: "U", why: "write" });
  assert.equal(await map.fileIntegrity("src/z.ts", () => Promise.resolve(HASH_B)), "U");
});

Deno.test("trust map: rule folders are normalised as typed, and bad ones refused with a reason", () => {
  const good: [string, string][] = [
    ["src/", "src"],
    ["./src", "src"],
    ["src//lib/", "src/lib"],
    [".", "."],
    ["./", "."],
    ["**/vendor/", "**/vendor"],
  ];
  for (const [input, want] of good) {
    assert.deepEqual(normaliseRuleDir(input), { ok: true, value: want });
  }
  const bad: [string, RegExp][] = [
    ["../x", /'\.\.' segments/],
    ["/etc", /absolute/],
    ["**/a/b", /names one directory/],
    ["**/*", /names one directory/],
    ["src\\lib", /backslash/],
  ];
  for (const [input, reason] of bad) {
    const r = normaliseRuleDir(input);
    assert.equal(r.ok, false, input);
    if (!r.ok) assert.match(r.error, reason);
  }
});

Deno.test("trust map: an overlay adds rules for the run; the stored map is untouched", async () => {
  const stored = new TrustMap("/w");
  stored.setRule("src", false);
  const overlay = stored.withOverlay([{ dir: "src", trusted: true }, {
    dir: "docs",
    trusted: true,
  }]);
  assert.equal(overlay.ruleIntegrity("src/a.ts"), "T");
  assert.equal(overlay.ruleIntegrity("docs/a.md"), "T");
  assert.equal(stored.ruleIntegrity("src/a.ts"), "U");
  assert.deepEqual(stored.rules, [{ dir: "src", trusted: false }]);
  // Files written during the run are real: both see them.
  overlay.setFile("docs/new.md", { integrity: "U", why: "write" });
  assert.equal(await stored.fileIntegrity("docs/new.md", noHash), "U");
});

Deno.test("trust map: save and load round-trip rules, files and the first-use answer", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "state", "trust.json");
  const { map } = await updateTrustMap(file, "/w", (map) => {
    map.applyFirstUse("workspace");
    map.setRule("src/gen", false);
    map.setFile("a.txt", { integrity: "T", sha256: HASH_A, why: "vouch" });
    map.setFile("b.txt", { integrity: "U", why: "write" });
  });
  if (Deno.build.os !== "windows") assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  const { map: back, problem } = await loadTrustMap(file, "/w");
  assert.equal(problem, undefined);
  assert.deepEqual(back.toJSON(), map.toJSON());
  assert.equal(back.firstUse, "workspace");
  assert.equal(back.ruleIntegrity("x/node_modules/y"), "U");
  assert.equal(await back.fileIntegrity("b.txt", noHash), "U");
  // No temporary files are left beside it; the lock file stays (it is never replaced).
  assert.deepEqual(
    [...Deno.readDirSync(join(t.dir, "state"))].map((e) => e.name).sort(),
    ["trust.json", "trust.json.lock"],
  );
});

Deno.test("trust map: a missing file is an empty map with no problem", async () => {
  await using t = await tempDir();
  const { map, problem } = await loadTrustMap(join(t.dir, "trust.json"), "/w");
  assert.equal(problem, undefined);
  assert.equal(map.firstUse, null);
  assert.equal(map.rules.length, 0);
});

async function expectSetAside(
  dir: string,
  file: string,
  problem: string | undefined,
  reason: RegExp,
): Promise<string> {
  assert.ok(problem, "a problem is reported");
  assert.ok(problem.includes(file), `the problem names the file: ${problem}`);
  assert.match(problem, reason);
  const aside = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.startsWith("trust.json.corrupt-")
  );
  assert.equal(aside.length, 1, "the file is moved aside, not deleted");
  assert.ok(problem.includes(join(dir, aside[0])), "the problem says where it went");
  await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
  return join(dir, aside[0]);
}

Deno.test("trust map: a corrupt trust.json is set aside with its path, never trusted", async () => {
  const corruptions: [string, RegExp][] = [
    [
      '{"version": 1, "workspace": "/w", "firstUse": "workspace", "rules": [{"dir": ".", "tr',
      /not valid JSON/,
    ],
    [
      '{"version":1,"workspace":"/w","firstUse":null,"rules":[{"dir":".","trusted":"yes"}],"files":{}}',
      /rules\.0\.trusted/,
    ],
    ['{"version":2,"workspace":"/w","firstUse":null,"rules":[],"files":{}}', /version/],
    ["", /not valid JSON/],
  ];
  for (const [text, reason] of corruptions) {
    await using t = await tempDir();
    const file = join(t.dir, "trust.json");
    await Deno.writeTextFile(file, text);
    const { map, problem } = await loadTrustMap(file, "/w");
    const aside = await expectSetAside(t.dir, file, problem, reason);
    assert.equal(await Deno.readTextFile(aside), text, "the bytes are kept for the person");
    assert.equal(map.ruleIntegrity("."), "U", "nothing from a corrupt file is trusted");
    assert.equal(map.firstUse, null, "so the first-use question is asked again");
    // A change afterwards writes a new file and leaves the corrupt one where it was put.
    await updateTrustMap(file, "/w", (m) => m.setRule("src", true));
    assert.equal(await Deno.readTextFile(aside), text);
  }
});

Deno.test("trust map: a folder in place of trust.json is reported and set aside", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "trust.json");
  await Deno.mkdir(file);
  const { map, problem } = await loadTrustMap(file, "/w");
  await expectSetAside(t.dir, file, problem, /unreadable/);
  assert.equal(map.rules.length, 0);
});

Deno.test("trust map: a map that belongs to another workspace is set aside, not borrowed", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "trust.json");
  const other = new TrustMap("/elsewhere");
  other.setRule(".", true);
  await saveJsonFile(file, other.toJSON());
  const { map, problem } = await loadTrustMap(file, "/w");
  await expectSetAside(t.dir, file, problem, /belongs to \/elsewhere, not \/w/);
  assert.equal(map.ruleIntegrity("."), "U");
});

Deno.test("trust map: stored in the state directory keyed by the real path, not the workspace", async () => {
  await using t = await tempDir();
  const a = join(t.dir, "a");
  const b = join(t.dir, "b");
  await Deno.mkdir(a);
  await Deno.mkdir(b);
  await Deno.symlink(a, join(t.dir, "a-link"));
  const state = join(t.dir, "state");
  const wa = await openWorkspace(a, state);
  const wLink = await openWorkspace(join(t.dir, "a-link"), state);
  const wb = await openWorkspace(b, state);
  const pa = statePaths(state, wa.root).trustFile;
  assert.equal(statePaths(state, wLink.root).trustFile, pa, "a link to the same folder shares it");
  assert.notEqual(statePaths(state, wb.root).trustFile, pa, "another checkout does not");
  assert.ok(pa.startsWith(state + "/"));
  assert.ok(!pa.startsWith(a + "/"));
});

// ---- through the policy layer: writes, vouches and the --approvals overlay ----

async function policyFor(
  root: string,
  trustFile: string,
  approvals: ComposeOptions["approvals"],
  hashes: Record<string, string> = {},
): Promise<ComposedSession["policy"]> {
  const worker = {
    // A hash asked with `identify` says which file it hashed: the path asked, through no link.
    call: (req: { op: string; path: string; identify?: true }) =>
      Promise.resolve(
        req.op === "hash" && hashes[req.path]
          ? {
            ok: true,
            value: req.identify
              ? { sha256: hashes[req.path], opened: { dev: 1, ino: 1, real: req.path } }
              : hashes[req.path],
          }
          : { ok: false, error: { name: "NotFound", message: "" } },
      ),
  } as unknown as EffectWorker;
  const { map } = await loadTrustMap(trustFile, root);
  return (await composeSession({
    workspace: await openWorkspace(root, join(root, "..", "state")),
    worker,
    person: { decider: "person" } as unknown as Person,
    trust: map,
    trustFile,
    sessionId: "s",
    auditFile: null,
    sessionDir: null,
    scratch: root,
    vouchesFile: null,
    approvals,
  })).policy;
}

Deno.test("policy: --approvals trust rules apply for the run but are never saved", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const trustFile = join(t.dir, "state", "trust.json");
  const policy = await policyFor(root, trustFile, { trust: ["src/"], untrust: ["src/vendor"] });
  assert.equal(policy.trust.ruleIntegrity("src/a.ts"), "T");
  assert.equal(policy.trust.ruleIntegrity("src/vendor/a.ts"), "U");
  await policy.recordWrite("docs/new.md", label("T", "pub"), HASH_A);
  const saved = JSON.parse(await Deno.readTextFile(trustFile));
  assert.deepEqual(saved.rules, [], "the overlay's rules are not in the saved map");
  assert.deepEqual(saved.files["docs/new.md"], { integrity: "T", sha256: HASH_A, why: "write" });
  const next = await policyFor(root, trustFile, null);
  assert.equal(next.trust.ruleIntegrity("src/a.ts"), "U", "the next run without the file");
});

Deno.test("policy: a U write marks the file untrusted anywhere; a T write trusts those bytes", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const trustFile = join(t.dir, "state", "trust.json");
  const hashes = { [join(root, "vendor/x.js")]: HASH_A };
  const policy = await policyFor(root, trustFile, { trust: ["."], untrust: ["vendor"] }, hashes);
  await policy.recordWrite("src/tainted.ts", label("U", "pub"), HASH_B);
  assert.deepEqual(await policy.fileLabel("src/tainted.ts"), label("U", "pub"));
  await policy.recordWrite("vendor/x.js", label("T", "pub"), HASH_A);
  assert.deepEqual(await policy.fileLabel("vendor/x.js"), label("T", "pub"));
  hashes[join(root, "vendor/x.js")] = HASH_B;
  assert.deepEqual(await policy.fileLabel("vendor/x.js"), label("U", "pub"), "changed: rules");
  await policy.vouchFile("vendor/x.js", HASH_B);
  assert.deepEqual(await policy.fileLabel("vendor/x.js"), label("T", "pub"));
  assert.deepEqual(await policy.fileLabel(".env"), label("T", "priv"));
  assert.deepEqual(policy.nameLabel("vendor"), label("U", "pub"));
});

// ---- two sessions at once: changes are applied to the file under its lock ----

/** Fails loudly instead of hanging when a lock is never released. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const UNTRUSTED: FileEntry = { integrity: "U", why: "write" };

Deno.test("trust map: two updaters, thirty entries each, interleaved: every entry is kept", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "state", "trust.json");
  await updateTrustMap(file, "/w", (m) => m.setRule("src", true));
  const session = (who: string) =>
    Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        updateTrustMap(file, "/w", (m) => m.setFile(`src/${who}${i}.ts`, UNTRUSTED))),
    );
  await within(20_000, "60 updates", Promise.all([session("a"), session("b")]));
  const { map } = await loadTrustMap(file, "/w");
  assert.equal(map.files.size, 60);
  for (const [, e] of map.files) assert.equal(e.integrity, "U");
  assert.equal(map.generation, 61, "each change counted once");
  assert.equal(map.ruleIntegrity("src/x.ts"), "T");
});

Deno.test("trust map: a rule removed by one session is not brought back by another's writes", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "state", "trust.json");
  await updateTrustMap(file, "/w", (m) => {
    m.setRule("src", true);
    m.setRule("docs", true);
  });
  // The other session read the map (with docs/) before the removal, and keeps writing.
  const { map: stale } = await loadTrustMap(file, "/w");
  assert.equal(stale.ruleIntegrity("docs/a.md"), "T");
  const writes = Array.from(
    { length: 20 },
    (_, i) => updateTrustMap(file, "/w", (m) => m.setFile(`src/w${i}.ts`, UNTRUSTED)),
  );
  const removal = updateTrustMap(file, "/w", (m) => m.removeRule("docs"));
  await within(20_000, "updates", Promise.all([...writes, removal]));
  const { map } = await loadTrustMap(file, "/w");
  assert.equal(map.ruleIntegrity("docs/a.md"), "U", "the removed rule came back");
  assert.equal(map.files.size, 20);
});

const TRUST_MAP_URL = new URL("./trust_map.ts", import.meta.url).href;
const REPO_ROOT = new URL("../..", import.meta.url).pathname;

/**
 * Another process that says it is ready, waits for `go`, then writes thirty untrusted entries
 * `src/<who>N`, one change at a time, as a session's writes do.
 */
function childWriter(file: string, who: string, go: string): Deno.ChildProcess {
  const code = `
    import { updateTrustMap } from ${JSON.stringify(TRUST_MAP_URL)};
    const [file, who, go] = Deno.args;
    const prefix = "src/" + who;
    await Deno.writeTextFile(go + "." + who, "");
    for (let i = 0; ; i++) {
      try { Deno.statSync(go); break; } catch { if (i > 2000) throw new Error("no go"); }
      await new Promise((r) => setTimeout(r, 5));
    }
    for (let i = 0; i < 30; i++) {
      await updateTrustMap(file, "/w", (m) => m.setFile(prefix + i, { integrity: "U", why: "write" }));
    }`;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", code, file, who, go],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("trust map: two processes, thirty entries each, at the same time: every entry is kept", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "state", "trust.json");
  const go = join(t.dir, "go");
  await updateTrustMap(file, "/w", (m) => m.setRule("src", true));
  const children = [childWriter(file, "a", go), childWriter(file, "b", go)];
  const kill = () => {
    for (const c of children) {
      try {
        c.kill("SIGKILL");
      } catch { /* already ended */ }
    }
  };
  const timer = setTimeout(kill, 60_000);
  try {
    // Both started and waiting, then released together, so their changes interleave.
    const ready = () =>
      ["a", "b"].every((who) => {
        try {
          return Deno.statSync(`${go}.${who}`).isFile;
        } catch {
          return false;
        }
      });
    for (let i = 0; i < 600 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
    if (!ready()) kill();
    await Deno.writeTextFile(go, "");
    const outs = await Promise.all(children.map((c) => c.output()));
    for (const out of outs) assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  } finally {
    clearTimeout(timer);
  }
  const { map } = await loadTrustMap(file, "/w");
  const missing = ["a", "b"].flatMap((w) =>
    Array.from({ length: 30 }, (_, i) => `src/${w}${i}`).filter((rel) => !map.files.has(rel))
  );
  assert.deepEqual(missing, [], "entries lost between the two processes");
});

/** Applies `change` (source of a function of the map) to the stored map from another process. */
async function inOtherProcess(file: string, root: string, change: string): Promise<void> {
  const code = `
    import { updateTrustMap } from ${JSON.stringify(TRUST_MAP_URL)};
    await updateTrustMap(Deno.args[0], Deno.args[1], ${change});`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code, file, root],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const out = await child.output();
  clearTimeout(timer);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

Deno.test("policy: a file entry or rule another process wrote counts at the next label decision", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const trustFile = join(t.dir, "state", "trust.json");
  await updateTrustMap(trustFile, root, (m) => m.setRule("src", true));
  const policy = await policyFor(root, trustFile, null);
  assert.deepEqual(await policy.fileLabel("src/a.ts"), label("T", "pub"));

  await inOtherProcess(
    trustFile,
    root,
    `(m) => m.setFile("src/a.ts", { integrity: "U", why: "write" })`,
  );
  assert.deepEqual(await policy.fileLabel("src/a.ts"), label("U", "pub"), "the entry counts");

  await inOtherProcess(trustFile, root, `(m) => m.removeRule("src")`);
  await policy.refreshTrust(); // as the driver does before every tool call
  assert.deepEqual(policy.nameLabel("src"), label("U", "pub"), "the removal counts");
  assert.deepEqual(await policy.fileLabel("src/b.ts"), label("U", "pub"));

  // This session's own write is applied to the file as it is now: both changes stay.
  await policy.recordWrite("docs/x.md", label("U", "pub"), HASH_A);
  const { map } = await loadTrustMap(trustFile, root);
  assert.equal(map.files.get("src/a.ts")?.integrity, "U");
  assert.equal(map.files.get("docs/x.md")?.integrity, "U");
  assert.equal(map.ruleIntegrity("src/b.ts"), "U", "the removed rule did not come back");
});

Deno.test("policy: the --approvals rules stay on top of a map read again mid-run", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const trustFile = join(t.dir, "state", "trust.json");
  const policy = await policyFor(root, trustFile, { trust: ["src/"], untrust: ["src/vendor"] });
  assert.deepEqual(await policy.fileLabel("src/a.ts"), label("T", "pub"));
  // Elsewhere the person trusts src/vendor and marks one file untrusted; the run's own
  // untrust rule still wins, and the new entry counts.
  await updateTrustMap(trustFile, root, (m) => {
    m.setRule("src/vendor", true);
    m.setFile("src/b.ts", UNTRUSTED);
  });
  assert.deepEqual(await policy.fileLabel("src/vendor/x.js"), label("U", "pub"));
  assert.deepEqual(await policy.fileLabel("src/b.ts"), label("U", "pub"));
  assert.deepEqual(await policy.fileLabel("src/a.ts"), label("T", "pub"));
  const saved = JSON.parse(await Deno.readTextFile(trustFile));
  assert.deepEqual(saved.rules, [{ dir: "src/vendor", trusted: true }], "the overlay is not saved");
});

Deno.test("policy: a trust map corrupted mid-session is set aside, reported, and trusts nothing", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const trustFile = join(t.dir, "state", "trust.json");
  await updateTrustMap(trustFile, root, (m) => m.setRule(".", true));
  const policy = await policyFor(root, trustFile, null);
  const problems: string[] = [];
  policy.onStateProblem((p) => problems.push(p));
  assert.deepEqual(await policy.fileLabel("a.ts"), label("T", "pub"));
  await Deno.writeTextFile(trustFile, "{ not json");
  assert.deepEqual(await policy.fileLabel("a.ts"), label("U", "pub"));
  assert.equal(problems.length, 1);
  assert.match(problems[0], /trust\.json was corrupt .* moved to .*trust\.json\.corrupt-/);
});

Deno.test("trust map (adversarial): only a directory that exists in the workspace may be trusted", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bb-trustable-" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(join(ws, "src", "lib"), { recursive: true });
    await Deno.mkdir(join(root, "outside"));
    await Deno.writeTextFile(join(ws, "notes.txt"), "x\n");
    await Deno.symlink(join(root, "outside"), join(ws, "out"));
    await Deno.symlink(join(ws, "src"), join(ws, "alias"));
    for (const dir of [".", "src", "src/lib", "**/vendor", "alias"]) {
      assert.ok((await checkTrustableDir(ws, dir)).ok, dir);
    }
    for (const dir of ["nosuchdir", "src/nosuch", "notes.txt", "out"]) {
      const r = await checkTrustableDir(ws, dir);
      assert.ok(!r.ok && r.error.includes(`no directory ${dir}/`), dir);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

// Prefix entries (docs/contract.md §13.5, issue 21): a folder a run's snapshot could not see
// beneath.
Deno.test("trust map: beneath a run's untrusting mark, content and names are untrusted over any rule", async () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setRule("d/inner", true);
  map.setPrefix("d", { integrity: "U", why: "run" });
  assert.equal(map.ruleIntegrity("d"), "T", "the marked folder itself was seen");
  assert.equal(map.ruleIntegrity("d/x.txt"), "U");
  assert.equal(map.ruleIntegrity("d/inner/y.txt"), "U", "a longer rule does not beat a mark");
  assert.equal(await map.fileIntegrity("d/x.txt", noHash), "U");
  assert.equal(map.nameChosenByRun("d"), false);
  assert.equal(map.nameChosenByRun("d/x.txt"), true, "a name under a mark is an untrusted name");
  assert.equal(map.nameChosenByRun("d/inner/y.txt"), true);
  assert.equal(map.nameChosenByRun("dd/x.txt"), false, "only beneath the folder itself");
  assert.equal(map.ruleIntegrity("src/a.ts"), "T");
});

Deno.test("trust map: a hash-bound entry whose bytes still match wins over a mark; one that does not falls to it", async () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setFile("d/vouched.txt", { integrity: "T", sha256: HASH_A, why: "vouch" });
  map.setFile("d/old.txt", { integrity: "T", why: "write" }); // an entry bound to no hash
  map.setPrefix("d", { integrity: "U", why: "run" });
  assert.equal(await map.fileIntegrity("d/vouched.txt", () => Promise.resolve(HASH_A)), "T");
  assert.equal(await map.fileIntegrity("d/vouched.txt", () => Promise.resolve(HASH_B)), "U");
  assert.equal(await map.fileIntegrity("d/old.txt", noHash), "U");
  map.setFile("d/written.txt", { integrity: "T", sha256: HASH_B, why: "write" });
  assert.equal(await map.fileIntegrity("d/written.txt", () => Promise.resolve(HASH_B)), "T");
  assert.equal(map.nameChosenByRun("d/written.txt"), true, "the name stays untrusted");
});

Deno.test("trust map: a vouched run's mark leaves content to the rules, but not for the paths no run makes trusted", () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setRule("vendor", false);
  map.setPrefix(".", { integrity: "T", why: "run" });
  assert.equal(map.ruleIntegrity("src/a.ts"), "T");
  assert.equal(map.ruleIntegrity("vendor/a.js"), "U");
  for (const rel of ["AGENTS.md", ".bravebot/skills/x/SKILL.md", "pkg/.git/config"]) {
    assert.equal(map.ruleIntegrity(rel), "U", rel);
  }
  assert.equal(map.nameChosenByRun("src/a.ts"), true, "whatever the label, names are the run's");
});

Deno.test("trust map: marks only move towards untrusted, are saved, and the person removes one", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "trust.json");
  const { map } = await updateTrustMap(file, "/w", (map) => {
    map.setRule(".", true);
    map.setPrefix("a/b", { integrity: "T", why: "run" });
    map.setPrefix("a/b/c", { integrity: "U", why: "run" });
    map.setPrefix("a/b", { integrity: "T", why: "run" });
    map.setPrefix("x/y", { integrity: "U", why: "run" });
    map.setPrefix("x", { integrity: "U", why: "run" }); // implies x/y
    map.setPrefix("x/z", { integrity: "T", why: "run" }); // implied by x
  });
  assert.deepEqual([...map.prefixes.keys()].sort(), ["a/b", "a/b/c", "x"]);
  map.setPrefix("a/b", { integrity: "U", why: "run" });
  assert.deepEqual([...map.prefixes.keys()].sort(), ["a/b", "x"], "U at a/b implies a/b/c");
  assert.equal(map.prefixes.get("a/b")?.integrity, "U");
  const { map: back } = await loadTrustMap(file, "/w");
  assert.deepEqual([...back.prefixes.keys()].sort(), ["a/b", "a/b/c", "x"]);
  assert.equal(back.ruleIntegrity("x/q"), "U");
  assert.equal(back.removePrefix("x"), true);
  assert.equal(back.ruleIntegrity("x/q"), "T");
  assert.equal(back.removePrefix("x"), false);
});

Deno.test("trust map: an open leftover watch lowers what changed since and hides names it did not see", async () => {
  const map = new TrustMap("/w");
  map.setRule(".", true);
  map.setFile("kept.txt", { integrity: "T", sha256: HASH_A, why: "write" });
  const changed = new Set(["late.txt", "kept.txt"]);
  map.leftovers = {
    since: 0,
    integrity: "U",
    known: new Set(["src", "src/a.ts", "late.txt", "kept.txt"]),
    changedSince: (rel) => Promise.resolve(changed.has(rel)),
  };
  assert.equal(await map.fileIntegrity("src/a.ts", noHash), "T");
  assert.equal(await map.fileIntegrity("late.txt", noHash), "U");
  assert.equal(
    await map.fileIntegrity("kept.txt", () => Promise.resolve(HASH_A)),
    "T",
    "the approved bytes are still the approved bytes",
  );
  assert.equal(map.nameChosenByRun("src/a.ts"), false);
  assert.equal(map.nameChosenByRun("src/new.ts"), true);
  assert.equal(map.withOverlay([]).nameChosenByRun("src/new.ts"), true, "overlays keep it");
  map.leftovers = null;
  assert.equal(await map.fileIntegrity("late.txt", noHash), "T");
  assert.equal(map.nameChosenByRun("src/new.ts"), false);
});

// ---- the lock's bound (issue 21): the person's own changes give up, a record waits ----

/**
 * Holds `file`'s lock in this process while `fn` runs, letting it go after `safetyMs` at the
 * latest (so a caller that never gives up finishes, and the test fails rather than hangs).
 */
async function whileLocked<T>(file: string, safetyMs: number, fn: () => Promise<T>): Promise<T> {
  const held = await holdLock(file);
  const timer = setTimeout(held.release, safetyMs);
  try {
    return await fn();
  } finally {
    clearTimeout(timer);
    held.release();
    await held.done;
  }
}

const SHORT = { ...PERSON_TRUST_WAIT, boundMs: 100, onWait: () => {} };
const outcomeOf = (p: Promise<unknown>) => p.then(() => "written", (e) => e);

function assertGaveUp(outcome: unknown) {
  assert.ok(outcome instanceof LockTimeout, `the change was ${String(outcome)}`);
  assert.equal(outcome.pid, Deno.pid);
  assert.match(outcome.message, new RegExp(`process ${Deno.pid}`));
}

Deno.test("trust map lock: a change the person asked for gives up at the bound, naming the holder", async () => {
  await using t = await tempDir();
  const file = join(t.dir, "state", "trust.json");
  await updateTrustMap(file, "/w", (m) => m.setRule("src", true));
  const outcome = await whileLocked(
    file,
    3_000,
    () => outcomeOf(updateTrustMap(file, "/w", (m) => m.setRule("docs", true), SHORT)),
  );
  assertGaveUp(outcome);
  const { map } = await loadTrustMap(file, "/w");
  assert.equal(map.ruleIntegrity("docs/a.md"), "U", "nothing was written");
  assert.equal(PERSON_TRUST_WAIT.fail, true);
});

Deno.test("trust map lock: /trust gives up; the record of a write keeps waiting and lands", async () => {
  await using t = await tempDir();
  const root = join(t.dir, "ws");
  await Deno.mkdir(root);
  const file = join(t.dir, "state", "trust.json");
  await updateTrustMap(file, root, (m) => m.setRule(".", true));
  const policy = await policyFor(root, file, null);
  const person = personPolicy(policy);
  const asked = await whileLocked(
    file,
    3_000,
    () => outcomeOf(person.changeTrust((m) => m.setRule("docs", false), SHORT)),
  );
  assertGaveUp(asked);
  // The record of a write made is not the person's to lose: it waits, and lands once let go.
  const recorded = await whileLocked(
    file,
    400,
    () => outcomeOf(policy.recordWrite("a.md", label("U", "pub"), HASH_A)),
  );
  assert.equal(recorded, "written");
  const { map } = await loadTrustMap(file, root);
  assert.equal(map.files.get("a.md")?.integrity, "U");
  assert.equal(map.ruleIntegrity("docs/x"), "T", "the given-up change was not written");
});
