/**
 * The benchmark corpora, made on demand under bench-data/ (git-ignored, never committed):
 *
 * - `gen`: a generated tree, seeded so every machine builds the same bytes: ~20,000 files,
 *   ~300 MB of source-like text in several languages, directories both deep (a chain of 40) and
 *   wide (one folder of 3,000 files, one of 400 folders), some binary files and some huge ones
 *   (kept under search's 10 MiB limit so every tool searches the same bytes). Three needles are
 *   planted: a rare literal, a common one, and one that occurs nowhere.
 * - `real`: the node_modules tree of an npm install of a few large packages, pinned.
 *
 * Each corpus has a stamp file beside it; a corpus whose stamp matches is reused, so only the
 * first run pays for generation. Neither tree holds a `.gitignore`, so ignore rules are off on
 * every side of a comparison without asking any tool to ignore them.
 */
import { dirname, join } from "node:path";

/** Bump when the generator changes, so stale corpora are rebuilt. */
const GENERATOR_VERSION = 3;

export interface CorpusSpec {
  name: string;
  seed: number;
  files: number;
  /** Bytes of ordinary (not huge, not binary) text files. */
  textBytes: number;
  hugeFiles: number;
  hugeBytes: [min: number, max: number];
  binaryShare: number;
  wideFiles: number;
  wideDirs: number;
  deepChain: number;
  dirs: number;
}

export const FULL: CorpusSpec = {
  name: "gen",
  seed: 0x5eed_b0b,
  files: 20_000,
  textBytes: 235 * 1024 * 1024,
  hugeFiles: 8,
  hugeBytes: [6 * 1024 * 1024, 9.5 * 1024 * 1024],
  binaryShare: 0.02,
  wideFiles: 3_000,
  wideDirs: 400,
  deepChain: 40,
  dirs: 1_400,
};

export const QUICK: CorpusSpec = {
  name: "gen-quick",
  seed: 0x5eed_b0b,
  files: 2_000,
  textBytes: 24 * 1024 * 1024,
  hugeFiles: 2,
  hugeBytes: [5 * 1024 * 1024, 6 * 1024 * 1024],
  binaryShare: 0.02,
  wideFiles: 300,
  wideDirs: 40,
  deepChain: 25,
  dirs: 140,
};

/**
 * Ten times `gen` (issue 24's scale case): 200,000 files, about 3 GiB, some 220,000 entries,
 * past a run snapshot's 200,000-entry bound, so that path is measured too. Built only when asked
 * for (`--ten`): it takes about 3 GiB of disk and a minute to make.
 */
export const TEN: CorpusSpec = {
  ...FULL,
  name: "gen-10x",
  files: 10 * FULL.files,
  textBytes: 10 * FULL.textBytes,
  hugeFiles: 10 * FULL.hugeFiles,
  wideFiles: 10 * FULL.wideFiles,
  wideDirs: 10 * FULL.wideDirs,
  dirs: 10 * FULL.dirs,
};

/** The literals planted in the generated corpus. */
export const NEEDLES = {
  rare: "bravebench_rare_needle_4417",
  common: "TODO(review):",
  none: "zq_absent_needle_xk",
};

/** The packages installed for the real corpus, pinned so the tree is the same everywhere. */
export const REAL_PACKAGES = [
  "typescript@7.0.2",
  "@babel/core@8.1.3",
  "eslint@10.15.0",
  "lodash@4.18.1",
  "rxjs@7.8.2",
  "webpack@5.113.0",
  "@types/node@26.6.7",
  "prettier@3.10.1",
];

/** Literals for the real corpus: found in a handful of files, in very many, and nowhere. */
export const REAL_NEEDLES = {
  rare: "Wikipedia",
  common: "function",
  none: "zq_absent_needle_xk",
};

export interface Corpus {
  name: string;
  /** The directory searched and listed: the workspace root of the tool's session. */
  root: string;
  files: number;
  bytes: number;
  needles: { rare: string; common: string; none: string };
}

// ---- a small seeded generator (mulberry32): the same corpus on every machine ----

class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "ta",
  "vi",
  "so",
  "pe",
  "da",
  "fo",
  "gi",
  "hu",
  "be",
  "co",
  "wa",
  "ly",
  "ter",
  "mon",
  "ber",
  "sel",
  "dor",
  "pan",
  "gen",
  "tor",
  "val",
  "lex",
  "nim",
];

function word(rng: Rng): string {
  let w = "";
  const n = 1 + rng.int(3);
  for (let i = 0; i < n; i++) w += rng.pick(SYLLABLES);
  return w;
}

function ident(rng: Rng): string {
  const a = word(rng);
  return rng.next() < 0.5 ? a : a + word(rng).replace(/^./, (c) => c.toUpperCase());
}

type Lang = "ts" | "js" | "py" | "rs" | "go" | "c" | "md" | "json" | "txt";

const EXTENSIONS: [Lang, string, number][] = [
  ["ts", "ts", 28],
  ["ts", "tsx", 4],
  ["js", "js", 18],
  ["py", "py", 10],
  ["rs", "rs", 8],
  ["go", "go", 8],
  ["c", "c", 5],
  ["c", "h", 4],
  ["md", "md", 7],
  ["json", "json", 5],
  ["txt", "txt", 3],
];

function line(lang: Lang, rng: Rng): string {
  const a = ident(rng), b = ident(rng), c = ident(rng);
  const n = rng.int(1000);
  const indent = "  ".repeat(rng.int(4));
  switch (lang) {
    case "ts":
    case "js": {
      const t = lang === "ts" ? `: ${rng.pick(["string", "number", "boolean", b])}` : "";
      return indent + rng.pick([
        `const ${a}${t} = ${b}(${c}, ${n});`,
        `export function ${a}(${b}${t}) {`,
        `if (${a}.${b} === ${n}) return ${c};`,
        `import { ${a}, ${b} } from "./${c}";`,
        `${a}.${b}(${JSON.stringify(word(rng))});`,
        `// ${word(rng)} ${word(rng)} ${a} ${word(rng)} ${b}`,
        `}`,
        `return ${a} + ${b} * ${n};`,
        `for (const ${a} of ${b}) ${c}.push(${a});`,
      ]);
    }
    case "py":
      return indent + rng.pick([
        `def ${a}(${b}, ${c}=${n}):`,
        `${a} = ${b}.${c}(${n})`,
        `return ${a}[${n}]`,
        `# ${word(rng)} ${a} ${word(rng)} ${b}`,
        `from ${a} import ${b}`,
        `if ${a} > ${n}:`,
      ]);
    case "rs":
      return indent + rng.pick([
        `fn ${a}(${b}: &${c}) -> usize {`,
        `let ${a} = ${b}.${c}(${n});`,
        `use crate::${a}::${b};`,
        `// ${word(rng)} ${a} ${word(rng)}`,
        `}`,
        `impl ${a} for ${b} {`,
      ]);
    case "go":
      return indent + rng.pick([
        `func ${a}(${b} int) error {`,
        `${a} := ${b}.${c}(${n})`,
        `if err != nil { return err }`,
        `// ${a} ${word(rng)} ${word(rng)}`,
        `}`,
      ]);
    case "c":
      return indent + rng.pick([
        `static int ${a}(const char *${b}, size_t ${c});`,
        `${a} = ${b}->${c} + ${n};`,
        `#include "${a}.h"`,
        `/* ${word(rng)} ${a} ${word(rng)} */`,
        `}`,
        `if (${a} < ${n}) { return ${b}; }`,
      ]);
    case "md":
      return rng.pick([
        `# ${a} ${word(rng)}`,
        `The ${a} ${word(rng)} ${b} ${word(rng)} ${c} and ${word(rng)} ${word(rng)}.`,
        `- \`${a}\`: ${word(rng)} ${word(rng)} ${b}`,
        ``,
        `See [${a}](./${b}.md) for ${word(rng)} ${c}.`,
      ]);
    case "json":
      return `  "${a}": ${rng.pick([`${n}`, `"${b}"`, "true", `["${b}", "${c}"]`])},`;
    case "txt":
      return `${word(rng)} ${a} ${word(rng)} ${b} ${word(rng)} ${c} ${n}`;
  }
}

const encoder = new TextEncoder();

/** Per language, a pool of encoded lines that files are cut from (fast and deterministic). */
function linePools(rng: Rng): Map<Lang, Uint8Array[]> {
  const pools = new Map<Lang, Uint8Array[]>();
  for (const [lang] of EXTENSIONS) {
    if (pools.has(lang)) continue;
    const pool: Uint8Array[] = [];
    for (let i = 0; i < 6_000; i++) pool.push(encoder.encode(line(lang, rng) + "\n"));
    pools.set(lang, pool);
  }
  return pools;
}

function textFile(
  pool: readonly Uint8Array[],
  rng: Rng,
  size: number,
  plant: string[],
  commonLine: Uint8Array,
): Uint8Array {
  const out = new Uint8Array(size + 512);
  let at = 0;
  const planted = plant.map((p) => encoder.encode(`  // ${p} ${word(rng)}\n`));
  const plantAt = planted.map(() => rng.int(Math.max(1, size)));
  while (at < size) {
    let piece = pool[rng.int(pool.length)];
    if (rng.next() < 1 / 150) piece = commonLine;
    for (let k = 0; k < planted.length; k++) {
      if (plantAt[k] >= 0 && at >= plantAt[k]) {
        piece = planted[k];
        plantAt[k] = -1;
      }
    }
    if (at + piece.length > out.length) break;
    out.set(piece, at);
    at += piece.length;
  }
  for (let k = 0; k < planted.length; k++) {
    if (plantAt[k] >= 0 && at + planted[k].length <= out.length) {
      out.set(planted[k], at);
      at += planted[k].length;
    }
  }
  return out.subarray(0, at);
}

function binaryFile(rng: Rng, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i += 4) {
    const v = (rng.next() * 4294967296) >>> 0;
    out[i] = v & 0xff;
    out[i + 1] = (v >>> 8) & 0xff;
    out[i + 2] = (v >>> 16) & 0xff;
    out[i + 3] = v >>> 24;
  }
  // A NUL early on, as real binaries have: every contender classifies it the same way.
  out[Math.min(size - 1, 16)] = 0;
  return out;
}

interface PlannedFile {
  path: string;
  kind: "text" | "binary" | "huge";
  lang: Lang;
  size: number;
  plant: string[];
}

/** Lays out directories and files: pure, so the plan itself is deterministic. */
function plan(spec: CorpusSpec, rng: Rng): { dirs: string[]; files: PlannedFile[] } {
  const dirs: string[] = [""];
  const depth = new Map<string, number>([["", 0]]);
  const used = new Set<string>();
  const addDir = (parent: string, name: string): string => {
    let path = parent ? `${parent}/${name}` : name;
    for (let k = 2; used.has(path); k++) path = parent ? `${parent}/${name}${k}` : `${name}${k}`;
    used.add(path);
    dirs.push(path);
    depth.set(path, (depth.get(parent) ?? 0) + 1);
    return path;
  };
  const tops = [
    "src",
    "lib",
    "packages",
    "docs",
    "test",
    "vendorlike",
    "tools",
    "assets",
    ".config",
  ];
  for (const t of tops) addDir("", t);
  for (let i = 0; i < spec.dirs; i++) {
    // Prefer shallow parents a little, so the tree is bushy rather than a long list.
    const a = rng.pick(dirs), b = rng.pick(dirs);
    const parent = depth.get(a)! <= depth.get(b)! ? a : b;
    if (parent === "") continue;
    addDir(parent, word(rng));
  }
  let deep = addDir("src", "deep");
  for (let i = 0; i < spec.deepChain; i++) deep = addDir(deep, `level${i}`);
  const wide = addDir("packages", "wide");
  const wideParent = addDir("lib", "many");
  for (let i = 0; i < spec.wideDirs; i++) addDir(wideParent, `m${i}`);

  const totalWeight = EXTENSIONS.reduce((s, e) => s + e[2], 0);
  const pickExt = (): [Lang, string] => {
    let r = rng.next() * totalWeight;
    for (const [lang, ext, w] of EXTENSIONS) {
      if ((r -= w) < 0) return [lang, ext];
    }
    return ["ts", "ts"];
  };

  const files: PlannedFile[] = [];
  const names = new Set<string>();
  const regular = spec.files - spec.hugeFiles;
  for (let i = 0; i < regular; i++) {
    const dir = i < spec.wideFiles ? wide : i < spec.wideFiles + 60 ? deep : rng.pick(dirs);
    const binary = rng.next() < spec.binaryShare;
    const [lang, ext] = binary
      ? ["txt" as Lang, rng.pick(["png", "bin", "woff2", "o", "jpg"])]
      : pickExt();
    let name = `${ident(rng)}.${ext}`;
    if (rng.next() < 0.01) name = `.${name}`;
    let path = dir ? `${dir}/${name}` : name;
    for (let k = 2; names.has(path); k++) path = dir ? `${dir}/${k}_${name}` : `${k}_${name}`;
    names.add(path);
    // Log-normal sizes: most files small, a long tail of big ones, as in real trees.
    const size = Math.round(Math.exp(8.6 + 1.0 * rng.normal()));
    files.push({ path, kind: binary ? "binary" : "text", lang, size, plant: [] });
  }
  for (let i = 0; i < spec.hugeFiles; i++) {
    const [lo, hi] = spec.hugeBytes;
    const lang: Lang = i % 2 ? "json" : "js";
    files.push({
      path: `assets/huge${i}.${lang === "json" ? "json" : "js"}`,
      kind: "huge",
      lang,
      size: Math.round(lo + rng.next() * (hi - lo)),
      plant: [],
    });
  }
  // Scale text sizes to the byte budget, clamped so no ordinary file becomes huge.
  const text = files.filter((f) => f.kind === "text");
  const scale = spec.textBytes / text.reduce((s, f) => s + f.size, 0);
  for (const f of text) f.size = Math.max(40, Math.min(600 * 1024, Math.round(f.size * scale)));
  for (const f of files) {
    if (f.kind === "binary") f.size = Math.max(64, Math.min(256 * 1024, f.size));
  }
  // The rare needle: 7 files, one deep in the chain, one in a huge file, one in the wide dir.
  const deepFile = files.findLast((f) => f.path.startsWith(deep + "/") && f.kind === "text");
  const wideFile = files.find((f) => f.path.startsWith(wide + "/") && f.kind === "text");
  const targets = [deepFile, wideFile, files.find((f) => f.kind === "huge")];
  while (targets.length < 7) {
    const f = rng.pick(text);
    if (!targets.includes(f)) targets.push(f);
  }
  for (const f of targets) f?.plant.push(NEEDLES.rare);
  return { dirs, files };
}

async function readStamp(path: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(await Deno.readTextFile(path));
  } catch {
    return null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Builds (or reuses) the generated corpus under `dataDir`. */
export async function generatedCorpus(
  dataDir: string,
  spec: CorpusSpec,
  log: (s: string) => void,
): Promise<Corpus> {
  const root = join(dataDir, spec.name);
  const stampPath = join(dataDir, `${spec.name}.stamp.json`);
  const wanted = { version: GENERATOR_VERSION, spec };
  const stamp = await readStamp(stampPath);
  if (stamp && JSON.stringify(stamp.wanted) === JSON.stringify(wanted) && await exists(root)) {
    return {
      name: spec.name,
      root: await Deno.realPath(root),
      files: stamp.files as number,
      bytes: stamp.bytes as number,
      needles: NEEDLES,
    };
  }
  log(`generating ${spec.name} (${spec.files} files) …`);
  const started = performance.now();
  await Deno.remove(stampPath).catch(() => {});
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const rng = new Rng(spec.seed);
  const pools = linePools(rng);
  const { dirs, files } = plan(spec, rng);
  for (const d of dirs) await Deno.mkdir(join(root, d), { recursive: true });
  const commonLine = encoder.encode(`    // ${NEEDLES.common} tidy this up before release\n`);
  let bytes = 0;
  // Contents are made in plan order (deterministic), written a few at a time.
  const writes: Promise<void>[] = [];
  for (const f of files) {
    const content = f.kind === "binary"
      ? binaryFile(rng, f.size)
      : textFile(pools.get(f.lang)!, rng, f.size, f.plant, commonLine);
    bytes += content.length;
    writes.push(Deno.writeFile(join(root, f.path), content));
    if (writes.length >= 32) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  await Deno.writeTextFile(stampPath, JSON.stringify({ wanted, files: files.length, bytes }));
  log(
    `generated ${spec.name}: ${files.length} files, ${(bytes / 1024 / 1024).toFixed(0)} MiB in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
  return {
    name: spec.name,
    root: await Deno.realPath(root),
    files: files.length,
    bytes,
    needles: NEEDLES,
  };
}

async function countTree(root: string): Promise<{ files: number; bytes: number }> {
  let files = 0, bytes = 0;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) stack.push(p);
      else if (e.isFile) {
        files++;
        bytes += (await Deno.stat(p)).size;
      }
    }
  }
  return { files, bytes };
}

/** Removes every `.gitignore` below `root`, so ignore rules are off for every contender. */
async function dropIgnoreFiles(root: string): Promise<number> {
  let removed = 0;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) stack.push(p);
      else if (e.name === ".gitignore" || e.name === ".ignore" || e.name === ".rgignore") {
        await Deno.remove(p);
        removed++;
      }
    }
  }
  return removed;
}

/** Installs (or reuses) the real corpus: node_modules of {@link REAL_PACKAGES}. */
export async function realCorpus(dataDir: string, log: (s: string) => void): Promise<Corpus> {
  const base = join(dataDir, "real");
  const root = join(base, "node_modules");
  const stampPath = join(dataDir, "real.stamp.json");
  const stamp = await readStamp(stampPath);
  if (
    stamp && JSON.stringify(stamp.packages) === JSON.stringify(REAL_PACKAGES) &&
    await exists(root)
  ) {
    return {
      name: "real",
      root: await Deno.realPath(root),
      files: stamp.files as number,
      bytes: stamp.bytes as number,
      needles: REAL_NEEDLES,
    };
  }
  log(`installing the real corpus (npm install ${REAL_PACKAGES.join(" ")}) …`);
  await Deno.remove(stampPath).catch(() => {});
  await Deno.remove(base, { recursive: true }).catch(() => {});
  await Deno.mkdir(base, { recursive: true });
  await Deno.writeTextFile(
    join(base, "package.json"),
    JSON.stringify({ name: "bravebot-bench-real", private: true }),
  );
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--no-package-lock",
      "--loglevel=error",
      ...REAL_PACKAGES,
    ],
    cwd: base,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`npm install failed: ${new TextDecoder().decode(out.stderr).slice(0, 2000)}`);
  }
  // npm leaves a lock file of its own inside node_modules; it is part of the tree like any file.
  const removed = await dropIgnoreFiles(root);
  const { files, bytes } = await countTree(root);
  await Deno.writeTextFile(
    stampPath,
    JSON.stringify({ packages: REAL_PACKAGES, files, bytes, removedIgnoreFiles: removed }),
  );
  log(`installed real: ${files} files, ${(bytes / 1024 / 1024).toFixed(0)} MiB`);
  return { name: "real", root: await Deno.realPath(root), files, bytes, needles: REAL_NEEDLES };
}

/** Where the corpora live: bench-data/ at the repository root. */
export function dataDirFor(scriptUrl: string): string {
  return join(dirname(dirname(dirname(new URL(scriptUrl).pathname))), "bench-data");
}

/**
 * A hostile layout for the memory benchmark: `files` text files of 9 MiB (under search's 10 MiB
 * limit), each holding the needle once on its first line. A search for it touches every file
 * and keeps one line from each, the most a search can be made to hold.
 */
export async function hostileCorpus(
  dataDir: string,
  files: number,
  log: (s: string) => void,
): Promise<Corpus & { needle: string }> {
  const name = `hostile-${files}`;
  const root = join(dataDir, name);
  const stampPath = join(dataDir, `${name}.stamp.json`);
  const needle = "hostile_needle_5521";
  const size = 9 * 1024 * 1024;
  const stamp = await readStamp(stampPath);
  if (!stamp || stamp.version !== GENERATOR_VERSION || !await exists(root)) {
    log(`generating ${name} (${files} files of 9 MiB) …`);
    await Deno.remove(stampPath).catch(() => {});
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await Deno.mkdir(root, { recursive: true });
    const filler = encoder.encode(`${"a".repeat(79)}\n`);
    for (let i = 0; i < files; i++) {
      const bytes = new Uint8Array(size);
      const head = encoder.encode(`${needle} ${i}\n`);
      bytes.set(head, 0);
      for (let at = head.length; at + filler.length <= size; at += filler.length) {
        bytes.set(filler, at);
      }
      await Deno.writeFile(join(root, `f${String(i).padStart(3, "0")}.txt`), bytes);
    }
    await Deno.writeTextFile(
      stampPath,
      JSON.stringify({ version: GENERATOR_VERSION, files, bytes: files * size }),
    );
  }
  return {
    name,
    root: await Deno.realPath(root),
    files,
    bytes: files * size,
    needles: { rare: needle, common: needle, none: NEEDLES.none },
    needle,
  };
}
