/**
 * scripts/compile.ts: the command lines it builds (the flags of permissions/main.flags, every
 * worker module included, one output per target) and the one clear sentence when denort cannot
 * be had. A real build needs denort, which these tests never download.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  compileArgs,
  denortHelp,
  denortUnavailable,
  findWorkerModules,
  hostTarget,
  includedModules,
  parseFlags,
  parseOptions,
  readMainFlags,
  ROOT,
  TARGETS,
  UsageError,
} from "../scripts/compile.ts";
import { mainFlags } from "./support/flags.ts";

Deno.test("compile: five targets, each a triple deno compile knows", () => {
  assert.deepEqual(Object.values(TARGETS), [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
  ]);
  assert.deepEqual(parseOptions([], undefined).targets, Object.keys(TARGETS));
});

Deno.test("compile: the binary gets exactly the flags the tests run with", () => {
  assert.deepEqual(readMainFlags(), mainFlags());
  const flags = readMainFlags();
  const args = compileArgs("linux-x64", flags, ["src/worker/effect_worker.ts"], "dist");
  assert.deepEqual(args.slice(0, 1 + flags.length), ["compile", ...flags]);
  for (const banned of ["--allow-all", "-A", "--allow-ffi", "--allow-sys", "--allow-import"]) {
    assert.ok(!args.includes(banned), banned);
  }
  assert.deepEqual(args.slice(-5), [
    "--target",
    "x86_64-unknown-linux-gnu",
    "--output",
    join("dist", "bravebot-linux-x64"),
    "main.ts",
  ]);
  const win = compileArgs("windows-x64", flags, [], "out", false);
  assert.ok(win.includes(join("out", "bravebot-windows-x64.exe")));
  assert.ok(win.includes("--no-check"));
  assert.deepEqual(parseFlags("# c\n--a\n\n  --b  \n"), ["--a", "--b"]);
});

Deno.test("compile: every worker module under src/ is included, the effect worker first of all", async () => {
  const workers = await findWorkerModules();
  assert.ok(workers.includes("src/worker/effect_worker.ts"), workers.join(", "));
  for (const w of workers) assert.ok((await Deno.stat(join(ROOT, w))).isFile, w);
  const args = compileArgs("linux-x64", [], workers, "dist");
  const i = args.indexOf("src/worker/effect_worker.ts");
  assert.equal(args[i - 1], "--include");
});

Deno.test("compile: the command line's module, which main.ts imports by a computed name, is included", async () => {
  const included = await includedModules();
  assert.ok(included.includes("src/cli/main.ts"), included.join(", "));
  const main = await Deno.readTextFile(join(ROOT, "main.ts"));
  assert.ok(main.includes('CLI_MODULE = "./src/cli/main.ts"'));
});

Deno.test("compile: a worker started elsewhere in a fixture tree is found too", async () => {
  const root = await Deno.makeTempDir({ prefix: "bb-compile-" });
  try {
    await Deno.mkdir(join(root, "src", "model"), { recursive: true });
    await Deno.writeTextFile(
      join(root, "src", "model", "client.ts"),
      'const w = new Worker(new URL("./model_worker.ts", import.meta.url), { type: "module" });\n' +
        "const v = new Worker(\n  new URL('../other/w.ts', import.meta.url),\n);\n",
    );
    await Deno.writeTextFile(
      join(root, "src", "model", "client_test.ts"),
      'new Worker(new URL("./test_only.ts", import.meta.url));\n',
    );
    assert.deepEqual(await findWorkerModules(root), [
      "src/model/model_worker.ts",
      "src/other/w.ts",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("compile: --target takes a short name or a triple; anything else is a usage error", () => {
  assert.deepEqual(parseOptions(["--target", "macos-arm64"], undefined).targets, ["macos-arm64"]);
  assert.deepEqual(parseOptions(["--target=x86_64-pc-windows-msvc"], undefined).targets, [
    "windows-x64",
  ]);
  assert.deepEqual(parseOptions(["--out-dir", "o", "--no-check"], undefined), {
    targets: Object.keys(TARGETS),
    outDir: "o",
    check: false,
  });
  assert.throws(
    () => parseOptions(["--target", "freebsd"], undefined),
    (e: Error) =>
      e instanceof UsageError &&
      /unknown target 'freebsd'; known targets: linux-x64/.test(e.message),
  );
  assert.throws(() => parseOptions(["--target"], undefined), /--target needs a value/);
  assert.throws(() => parseOptions(["--allow-all"], undefined), /unknown argument '--allow-all'/);
});

Deno.test("compile: with DENORT_BIN and no --target, only this machine's platform is built", () => {
  assert.deepEqual(parseOptions([], "/opt/denort").targets, [hostTarget()]);
  assert.deepEqual(parseOptions(["--target", "linux-arm64"], "/opt/denort").targets, [
    "linux-arm64",
  ]);
});

Deno.test("compile: a failed denort download is told apart from other failures", () => {
  const download =
    "Download https://example.invalid/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip\n" +
    "error: Writing deno compile executable to temporary file\n" +
    "Caused by:\n    0: Setting up base binary.\n    1: error sending request for url (…)\n";
  assert.equal(denortUnavailable(download), true);
  assert.equal(denortUnavailable("error: Could not find denort at '/nope'"), true);
  assert.equal(denortUnavailable("error: TS2322 [ERROR]: Type 'string' is not assignable"), false);
  assert.equal(denortUnavailable("error: unexpected argument '--allow-everything' found"), false);
});

Deno.test("compile: the message is one sentence that says how to provide denort", () => {
  const help = denortHelp("linux-x64", undefined);
  assert.match(help, /DENORT_BIN=\/path\/to\/denort/);
  assert.match(help, /denort-x86_64-unknown-linux-gnu\.zip/);
  assert.match(help, new RegExp(`Deno ${Deno.version.deno.replace(/\./g, "\\.")}`));
  assert.equal(help.split("\n").length, 1);
  assert.equal((help.match(/\.( |$)/g) ?? []).length, 1, "one sentence");
  const set = denortHelp("linux-x64", "/opt/nope");
  assert.match(set, /DENORT_BIN is set to '\/opt\/nope' but no readable file is there/);
});

async function runCompile(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string }> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      join(ROOT, "scripts", "compile.ts"),
      ...args,
    ],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const r = await cmd.output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout) + d.decode(r.stderr) };
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR"]) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  return env;
}

Deno.test("compile: without DENORT_BIN and no way to download, one clear sentence, no trace", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "bb-compile-" });
  try {
    // A fresh DENO_DIR holds no cached denort; the npm cache is shared so the graph resolves.
    const denoDir = join(tmp, "deno-dir");
    await Deno.mkdir(denoDir);
    const info = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" });
    const npmCache = JSON.parse(new TextDecoder().decode((await info.output()).stdout)).npmCache;
    await Deno.symlink(npmCache, join(denoDir, "npm"));
    // Downloads go through a proxy on a closed loopback port: they fail at once, offline or not.
    const r = await runCompile([
      "--target",
      "linux-x64",
      "--out-dir",
      join(tmp, "out"),
      "--no-check",
    ], {
      ...baseEnv(),
      DENO_DIR: denoDir,
      HTTPS_PROXY: "http://127.0.0.1:9",
      HTTP_PROXY: "http://127.0.0.1:9",
      NO_PROXY: "",
      NO_COLOR: "1",
    });
    assert.equal(r.code, 1, r.out);
    assert.equal(r.out.trim(), denortHelp("linux-x64", undefined));
    assert.doesNotMatch(r.out, /Stack backtrace|Caused by|\n\s+at /);
    assert.deepEqual([...Deno.readDirSync(join(tmp, "out"))], [], "no half-built binary is left");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("compile: a DENORT_BIN that names nothing is said plainly, before deno runs", async () => {
  const r = await runCompile(["--target", "linux-x64", "--out-dir", "/nonexistent/never"], {
    ...baseEnv(),
    DENORT_BIN: "/nonexistent/denort",
  });
  assert.equal(r.code, 1, r.out);
  assert.equal(r.out.trim(), denortHelp("linux-x64", "/nonexistent/denort"));
});

Deno.test("compile: a bad argument is a usage error (exit 2)", async () => {
  const r = await runCompile(["--target", "plan9"], baseEnv());
  assert.equal(r.code, 2);
  assert.match(r.out, /^compile: unknown target 'plan9'/);
});
