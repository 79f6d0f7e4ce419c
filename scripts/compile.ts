/**
 * `deno task compile [--target T] [--out-dir DIR] [--no-check]`: single `bravebot` binaries for
 * the five release platforms, built with exactly the flags of `permissions/main.flags`, so the
 * shipped binary has the permissions the tests ran with. Worker modules are found in `src/`
 * and embedded, or the effect worker (the second wall) would not start inside the binary.
 *
 * `deno compile` builds on a small runtime, denort, which it normally downloads. Where that is
 * impossible (air-gapped machines, this project's CI), `DENORT_BIN` names a local copy and is
 * passed through; without it, a failed download ends in one sentence saying how to provide it.
 */
import { join, relative, resolve } from "node:path";
import { CLI_MODULE } from "../main.ts";

/** Short names (used in file names) and the Rust target triples `deno compile` takes. */
export const TARGETS: Readonly<Record<string, string>> = {
  "linux-x64": "x86_64-unknown-linux-gnu",
  "linux-arm64": "aarch64-unknown-linux-gnu",
  "macos-x64": "x86_64-apple-darwin",
  "macos-arm64": "aarch64-apple-darwin",
  "windows-x64": "x86_64-pc-windows-msvc",
};

export const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const ENTRY = "main.ts";
const FLAGS_FILE = "permissions/main.flags";

export class UsageError extends Error {}

export interface Options {
  /** Short target names to build, in order. */
  targets: string[];
  outDir: string;
  check: boolean;
}

/** Reads `--target T` (short name or triple, repeatable), `--out-dir DIR`, `--no-check`. */
export function parseOptions(args: readonly string[], denortBin: string | undefined): Options {
  const targets: string[] = [];
  let outDir = "dist";
  let check = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [name, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new UsageError(`${name} needs a value`);
      return v;
    };
    if (name === "--target") targets.push(shortTarget(value()));
    else if (name === "--out-dir") outDir = value();
    else if (name === "--no-check") check = false;
    else {
      throw new UsageError(
        `unknown argument '${arg}'; accepted: --target T, --out-dir DIR, --no-check`,
      );
    }
  }
  if (targets.length === 0) {
    // One denort runs on one platform: with a local copy, build the platform it is for.
    targets.push(...(denortBin ? [hostTarget()] : Object.keys(TARGETS)));
  }
  return { targets: [...new Set(targets)], outDir, check };
}

function shortTarget(value: string): string {
  if (value in TARGETS) return value;
  const short = Object.keys(TARGETS).find((k) => TARGETS[k] === value);
  if (short) return short;
  const known = Object.entries(TARGETS).map(([k, v]) => `${k} (${v})`).join(", ");
  throw new UsageError(`unknown target '${value}'; known targets: ${known}`);
}

/** The short name of the machine this runs on. */
export function hostTarget(): string {
  const short = shortTarget(Deno.build.target.replace("-unknown-linux-musl", "-unknown-linux-gnu"));
  return short;
}

/** The flags of `permissions/main.flags`, one per line; `#` starts a comment line. */
export function parseFlags(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

export function readMainFlags(root = ROOT): string[] {
  return parseFlags(Deno.readTextFileSync(join(root, FLAGS_FILE)));
}

const WORKER_URL =
  /new\s+Worker\s*\(\s*new\s+URL\s*\(\s*(["'`])([^"'`]+)\1\s*,\s*import\.meta\.url\s*\)/g;

/**
 * Every module started with `new Worker(new URL("…", import.meta.url))` under `src/`,
 * root-relative: the compiler cannot see these through imports, so each must be included.
 */
export async function findWorkerModules(root = ROOT): Promise<string[]> {
  const found = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && /\.[cm]?[jt]sx?$/.test(entry.name) && !/_test\./.test(entry.name)) {
        const text = await Deno.readTextFile(path);
        for (const m of text.matchAll(WORKER_URL)) {
          const url = new URL(m[2], `file://${path}`);
          found.add(relative(root, decodeURIComponent(url.pathname)));
        }
      }
    }
  };
  await walk(join(root, "src"));
  return [...found].sort();
}

/**
 * Every module to include by name: the worker modules, and the command line's, which main.ts
 * imports by a computed specifier (so that `--version` loads nothing else) and the compiler
 * therefore cannot see either.
 */
export async function includedModules(root = ROOT): Promise<string[]> {
  return [...await findWorkerModules(root), CLI_MODULE.replace(/^\.\//, "")];
}

export function outputName(outDir: string, target: string): string {
  return join(outDir, `bravebot-${target}${target.startsWith("windows") ? ".exe" : ""}`);
}

/** The whole `deno compile` command line for one target (without the `deno` itself). */
export function compileArgs(
  target: string,
  flags: readonly string[],
  workers: readonly string[],
  outDir: string,
  check = true,
): string[] {
  return [
    "compile",
    ...flags,
    ...workers.flatMap((w) => ["--include", w]),
    ...(check ? [] : ["--no-check"]),
    "--target",
    TARGETS[target],
    "--output",
    outputName(outDir, target),
    ENTRY,
  ];
}

/** Whether `deno compile` failed because it could not get denort (and not for another reason). */
export function denortUnavailable(stderr: string): boolean {
  return /denort/i.test(stderr) &&
    /(error sending request|download|could not find denort|connect|dns|timed out|not be found)/i
      .test(stderr);
}

/** The one sentence said when denort cannot be had. */
export function denortHelp(target: string, denortBin: string | undefined): string {
  const triple = TARGETS[target] ?? target;
  if (denortBin) {
    return `DENORT_BIN is set to '${denortBin}' but no readable file is there; point it at an ` +
      `unzipped denort ${Deno.version.deno} binary for ${triple}.`;
  }
  return `Cannot get the Deno runtime (denort) for ${triple}: on a machine with network access ` +
    `fetch denort-${triple}.zip of Deno ${Deno.version.deno} from Deno's release downloads, ` +
    `unzip it, and run again with DENORT_BIN=/path/to/denort deno task compile --target ${target}.`;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** Builds; returns the exit status (0 built, 1 failed, 2 usage). */
export async function main(args: readonly string[]): Promise<number> {
  const denortBin = Deno.env.get("DENORT_BIN") || undefined;
  let options: Options;
  try {
    options = parseOptions(args, denortBin);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`compile: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (denortBin && !(await isFile(denortBin))) {
    console.error(denortHelp(options.targets[0], denortBin));
    return 1;
  }
  if (denortBin && args.every((a) => !a.startsWith("--target"))) {
    console.error(`DENORT_BIN is set: building for this machine only (${options.targets[0]}).`);
  }
  const flags = readMainFlags();
  const workers = await includedModules();
  await Deno.mkdir(resolve(ROOT, options.outDir), { recursive: true });
  for (const target of options.targets) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(target, flags, workers, options.outDir, options.check),
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    if (!out.success) {
      if (denortUnavailable(stderr)) console.error(denortHelp(target, denortBin));
      else {
        console.error(stderr.trimEnd());
        console.error(`compile: deno compile failed for ${target}`);
      }
      return 1;
    }
    console.log(`built ${outputName(options.outDir, target)}`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
