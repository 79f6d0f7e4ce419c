/**
 * The glob matcher of docs/contract.md §14: `*` (within one path segment), `?` (one character, not
 * `/`), `**` (any number of whole segments); every other character matches itself, so braces
 * and brackets are literal. Matching simulates an NFA over the pattern's tokens, so it takes
 * time linear in pattern × path and never backtracks: a hostile pattern cannot stall a call.
 *
 * A pattern without `/` matches a path's last segment (as `.gitignore` does), so `*.ts`
 * finds TypeScript files at any depth; a pattern with `/` matches the whole relative path.
 *
 * @example
 * ```ts
 * compileGlob("src/**\/*.ts").matches("src/a/b.ts"); // true
 * compileGlob("*.pem").matches("certs/server.pem"); // true (no slash: last segment)
 * compileGlob("{a,b}.ts").matches("a.ts"); // false: braces are literal
 * ```
 */

const enum Kind {
  Literal,
  Star,
  Question,
  /** `**` followed by `/`: enters {@link Kind.GlobStarLoop} or skips it (no segments). */
  GlobStarSlash,
  /** Inside a `**` + `/`: any character stays, a `/` may also leave. */
  GlobStarLoop,
  /** The `/` before a trailing `**`: absent (no segments) or a `/` into {@link Kind.GlobStarEnd}. */
  GlobStarTail,
  /** A trailing `**`: anything at all. */
  GlobStarEnd,
}

interface Token {
  kind: Kind;
  char: string;
}

export interface Glob {
  readonly pattern: string;
  /** Whether the pattern holds a `/` and so is matched against the whole path. */
  readonly anchored: boolean;
  /** Matches a `/`-separated relative path (or, unanchored, its last segment). */
  matches(path: string): boolean;
}

function tokenize(pattern: string): Token[] {
  // `**/**` means no more than `**`; collapsing keeps a trailing `**` right after a real segment.
  const segments = pattern.split("/").filter((seg, i, all) =>
    !(seg === "**" && all[i - 1] === "**")
  );
  const tokens: Token[] = [];
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === "**") {
      if (last && i > 0) {
        tokens.pop(); // the "/" that ended the previous segment: GlobStarTail stands for it
        tokens.push({ kind: Kind.GlobStarTail, char: "" }, { kind: Kind.GlobStarEnd, char: "" });
      } else if (last) tokens.push({ kind: Kind.GlobStarEnd, char: "" });
      else {tokens.push({ kind: Kind.GlobStarSlash, char: "" }, {
          kind: Kind.GlobStarLoop,
          char: "",
        });}
      return;
    }
    for (const char of segment) {
      if (char === "*") {
        if (tokens.at(-1)?.kind !== Kind.Star) tokens.push({ kind: Kind.Star, char: "" });
      } else if (char === "?") {
        tokens.push({ kind: Kind.Question, char: "" });
      } else {
        tokens.push({ kind: Kind.Literal, char });
      }
    }
    if (!last) tokens.push({ kind: Kind.Literal, char: "/" });
  });
  return tokens;
}

/** Adds the states reachable without reading a character; epsilon edges only go forward. */
function close(tokens: readonly Token[], states: Uint8Array): void {
  for (let i = 0; i < tokens.length; i++) {
    if (!states[i]) continue;
    const kind = tokens[i].kind;
    if (kind === Kind.Star || kind === Kind.GlobStarEnd) states[i + 1] = 1;
    if (kind === Kind.GlobStarSlash) states[i + 1] = states[i + 2] = 1;
    if (kind === Kind.GlobStarTail) states[i + 2] = 1;
  }
}

function run(tokens: readonly Token[], text: string): boolean {
  const n = tokens.length;
  let current = new Uint8Array(n + 1);
  let next = new Uint8Array(n + 1);
  current[0] = 1;
  close(tokens, current);
  for (const char of text) {
    next.fill(0);
    let alive = false;
    for (let i = 0; i < n; i++) {
      if (!current[i]) continue;
      const token = tokens[i];
      switch (token.kind) {
        case Kind.Literal:
          if (char === token.char) next[i + 1] = 1, alive = true;
          break;
        case Kind.Question:
          if (char !== "/") next[i + 1] = 1, alive = true;
          break;
        case Kind.Star:
          if (char !== "/") next[i] = 1, alive = true;
          break;
        case Kind.GlobStarSlash:
          break;
        case Kind.GlobStarTail:
          if (char === "/") next[i + 1] = 1, alive = true;
          break;
        case Kind.GlobStarLoop:
          next[i] = 1, alive = true;
          if (char === "/") next[i + 1] = 1;
          break;
        case Kind.GlobStarEnd:
          next[i] = 1, alive = true;
          break;
      }
    }
    if (!alive) return false;
    close(tokens, next);
    [current, next] = [next, current];
  }
  return current[n] === 1;
}

/**
 * The same automaton with its states as the bits of one integer, for patterns of at most 30
 * tokens (nearly all): each character then costs a handful of word operations whatever the
 * pattern, instead of a pass over every state (under 1 ms at 4,096 characters, docs/benchmarks.md).
 */
interface BitProgram {
  /** Per literal character, the states that advance on it. */
  literal: Map<string, number>;
  /** States that advance on any character but `/`. */
  question: number;
  /** States that advance on `/` only. */
  slashAdvance: number;
  /** States that stay on any character but `/`. */
  star: number;
  /** States that stay on any character. */
  anyStay: number;
  /** Epsilon edges one and two states ahead. */
  epsilon1: number;
  epsilon2: number;
  accept: number;
}

const MAX_BIT_TOKENS = 30;

function compileBits(tokens: readonly Token[]): BitProgram | null {
  if (tokens.length > MAX_BIT_TOKENS) return null;
  const p: BitProgram = {
    literal: new Map(),
    question: 0,
    slashAdvance: 0,
    star: 0,
    anyStay: 0,
    epsilon1: 0,
    epsilon2: 0,
    accept: 1 << tokens.length,
  };
  tokens.forEach((token, i) => {
    const bit = 1 << i;
    switch (token.kind) {
      case Kind.Literal:
        p.literal.set(token.char, (p.literal.get(token.char) ?? 0) | bit);
        break;
      case Kind.Question:
        p.question |= bit;
        break;
      case Kind.Star:
        p.star |= bit, p.epsilon1 |= bit;
        break;
      case Kind.GlobStarSlash:
        p.epsilon1 |= bit, p.epsilon2 |= bit;
        break;
      case Kind.GlobStarLoop:
        p.anyStay |= bit, p.slashAdvance |= bit;
        break;
      case Kind.GlobStarTail:
        p.slashAdvance |= bit, p.epsilon2 |= bit;
        break;
      case Kind.GlobStarEnd:
        p.anyStay |= bit, p.epsilon1 |= bit;
        break;
    }
  });
  return p;
}

function closeBits(p: BitProgram, states: number): number {
  let before;
  do {
    before = states;
    states |= ((states & p.epsilon1) << 1) | ((states & p.epsilon2) << 2);
  } while (states !== before);
  return states;
}

function runBits(p: BitProgram, text: string): boolean {
  let states = closeBits(p, 1);
  for (const char of text) {
    const slash = char === "/";
    const advance = (p.literal.get(char) ?? 0) | (slash ? p.slashAdvance : p.question);
    const stay = slash ? p.anyStay : p.anyStay | p.star;
    const next = ((states & advance) << 1) | (states & stay);
    if (next === 0) return false;
    states = closeBits(p, next);
  }
  return (states & p.accept) !== 0;
}

/**
 * For `*` then literal characters only (`*.ts`, the common case), the literal suffix: such a
 * pattern matches exactly a text that ends with it after no `/` (the simulation cost
 * about 2 µs a name). Null when a suffix that is not well-formed could meet a surrogate pair
 * split in two, which only the simulation, reading whole code points, judges right.
 */
function starThenLiteral(tokens: readonly Token[]): string | null {
  if (tokens.length < 2 || tokens[0].kind !== Kind.Star) return null;
  let suffix = "";
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i].kind !== Kind.Literal) return null;
    suffix += tokens[i].char;
  }
  return suffix.isWellFormed() ? suffix : null;
}

/**
 * `anchored: true` matches the whole relative path even for a pattern without `/`: the
 * approval file's `writes` are workspace-relative, so `README.md` there means the root one.
 */
export function compileGlob(pattern: string, options: { anchored?: boolean } = {}): Glob {
  const anchored = options.anchored ?? pattern.includes("/");
  // `**/X`, X one segment: since X cannot match a `/`, it matches exactly when X matches the
  // last segment, so only that is simulated (`**/*.ts` over a large tree: 8× faster).
  const rest = pattern.startsWith("**/") ? pattern.slice(3) : "";
  if (rest !== "" && rest !== "**" && !rest.includes("/")) {
    const last = compileGlob(rest, { anchored: false });
    return { pattern, anchored, matches: (path: string) => last.matches(path) };
  }
  const tokens = tokenize(pattern);
  const literal = tokens.every((t) => t.kind === Kind.Literal);
  const suffix = starThenLiteral(tokens);
  const bits = compileBits(tokens);
  const test = literal
    ? (text: string) => text === pattern
    : suffix !== null
    ? (text: string) =>
      text.endsWith(suffix) && !text.slice(0, text.length - suffix.length).includes("/")
    : bits !== null
    ? (text: string) => runBits(bits, text)
    : (text: string) => run(tokens, text);
  return {
    pattern,
    anchored,
    matches(path: string): boolean {
      if (anchored) return test(path);
      const slash = path.lastIndexOf("/");
      return test(slash === -1 ? path : path.slice(slash + 1));
    },
  };
}

/** One-off match; compile once with {@link compileGlob} when matching many paths. */
export function matchGlob(pattern: string, path: string): boolean {
  return compileGlob(pattern).matches(path);
}

/** Whether a pattern uses braces, which this matcher takes literally (said when nothing matched). */
export function hasBraces(pattern: string): boolean {
  return pattern.includes("{") || pattern.includes("}");
}
