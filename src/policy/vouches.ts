/**
 * Vouched commands (docs/contract.md §8): the person's standing "run this without asking, and let
 * the planner see what it prints". Kept per workspace in the state directory (`vouches.json`),
 * never in the workspace, so nothing the planner writes can add one.
 *
 * A vouch names its program by resolved absolute path, so `git` found somewhere else on PATH
 * later is a different program. A program inside the workspace is also bound to its content
 * hash: the planner can write workspace files, so a changed script voids the vouch.
 *
 * The file is read again at every decision, so `bravebot vouch remove` in another terminal
 * takes effect in a running session at its next command.
 */
import { z } from "zod";
import { type Loaded, loadJsonFile, updateJsonFile } from "../state/jsonfile.ts";
import { formatArgv } from "../util/escape.ts";

/** A program and its arguments as a vouch fixes them. */
export interface VouchedCommand {
  /** The program's resolved absolute path. */
  readonly program: string;
  readonly args: readonly string[];
  /** For a program inside the workspace: the SHA-256 the vouch is bound to. */
  readonly sha256?: string;
}

/**
 * One program: `exact`, these args and no others; `prefix`, args starting with these. A prefix
 * vouch names one program (docs/contract.md §8.4), so it is never part of a pipeline vouch.
 */
export interface CommandVouch extends VouchedCommand {
  /** Short and stable, for `bravebot vouch remove ID`: `v1`, `v2`, … */
  readonly id: string;
  readonly match: "exact" | "prefix";
  readonly created: string;
}

/** A pipeline vouched whole: exactly these stages, in this order, and no stage on its own. */
export interface PipelineVouch {
  readonly id: string;
  readonly match: "pipeline";
  readonly stages: readonly VouchedCommand[];
  readonly created: string;
}

export type Vouch = CommandVouch | PipelineVouch;

/** What the person vouched for, before it has an id. */
export type NewVouch =
  | Omit<CommandVouch, "id" | "created">
  | Omit<PipelineVouch, "id" | "created">;

/** One stage as the policy layer resolved it, in the terms a vouch compares. */
export interface StageIdentity {
  resolved: string;
  args: readonly string[];
  /** The program's current SHA-256 when it lies inside the workspace; null otherwise. */
  sha256: string | null;
}

export type VouchLookup =
  | { status: "vouched"; vouch: Vouch }
  /** A vouch for this command exists but the workspace program changed since. */
  | { status: "void"; vouch: Vouch }
  | { status: "none" };

const absolute = z.string().min(1).refine((p) => p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p), {
  message: "not an absolute path",
});
const sha = z.string().regex(/^[0-9a-f]{64}$/);
const id = z.string().regex(/^v[1-9][0-9]*$/);

const commandVouchSchema = z.strictObject({
  id,
  program: absolute,
  match: z.enum(["exact", "prefix"]),
  args: z.array(z.string()),
  sha256: sha.optional(),
  created: z.string(),
});

const pipelineVouchSchema = z.strictObject({
  id,
  match: z.literal("pipeline"),
  stages: z.array(z.strictObject({
    program: absolute,
    args: z.array(z.string()),
    sha256: sha.optional(),
  })).min(2),
  created: z.string(),
});

const fileSchema: z.ZodType<VouchFile> = z.strictObject({
  version: z.literal(1),
  workspace: z.string(),
  next: z.number().int().min(1),
  vouches: z.array(z.union([commandVouchSchema, pipelineVouchSchema])),
});

/** The file as kept in memory; what the schema parses is assignable to it. */
interface VouchFile {
  version: 1;
  workspace: string;
  next: number;
  vouches: Vouch[];
}

/**
 * Whether `args` is covered by `fixed`: exactly the same list, or starting with it. The one
 * comparison of argument lists, for vouches and the approval policy file's entries alike.
 */
export function argsCovered(
  match: "exact" | "prefix",
  fixed: readonly string[],
  args: readonly string[],
): boolean {
  if (match === "exact" && fixed.length !== args.length) return false;
  return fixed.length <= args.length && fixed.every((a, i) => a === args[i]);
}

/** Whether a one-program vouch covers this command: the same program, args exact or by prefix. */
export function vouchCovers(vouch: CommandVouch, stage: Omit<StageIdentity, "sha256">): boolean {
  return vouch.program === stage.resolved && argsCovered(vouch.match, vouch.args, stage.args);
}

/** A vouch is bound to what the program was: a workspace program must still hash the same. */
export function vouchHolds(vouch: VouchedCommand, stage: StageIdentity): boolean {
  if (stage.sha256 === null) return vouch.sha256 === undefined;
  return vouch.sha256 === stage.sha256;
}

/** Whether a pipeline vouch names exactly these stages (programs and arguments). */
function pipelineCovers(vouch: PipelineVouch, stages: readonly StageIdentity[]): boolean {
  return vouch.stages.length === stages.length &&
    vouch.stages.every((v, i) =>
      v.program === stages[i].resolved && argsCovered("exact", v.args, stages[i].args)
    );
}

function sameVouch(a: NewVouch, b: NewVouch): boolean {
  const same = (x: VouchedCommand, y: VouchedCommand) =>
    x.program === y.program && x.sha256 === y.sha256 && argsCovered("exact", x.args, y.args);
  if (a.match === "pipeline" || b.match === "pipeline") {
    return a.match === "pipeline" && b.match === "pipeline" &&
      a.stages.length === b.stages.length && a.stages.every((s, i) => same(s, b.stages[i]));
  }
  return a.match === b.match && same(a, b);
}

/** How a vouch reads on the person's screen and in `bravebot vouch list`, escaped. */
export function describeVouch(vouch: Vouch): string {
  const bound = (c: VouchedCommand) =>
    c.sha256 ? ` (while its sha256 is ${c.sha256.slice(0, 12)}…)` : "";
  if (vouch.match === "pipeline") {
    const stages = vouch.stages.map((s) => formatArgv([s.program, ...s.args]) + bound(s));
    return `${vouch.id}  pipeline ${stages.join(" | ")}`;
  }
  const argv = formatArgv([vouch.program, ...vouch.args]);
  const shape = vouch.match === "exact" ? `exactly  ${argv}` : `prefix   ${argv} …`;
  return `${vouch.id}  ${shape}${bound(vouch)}`;
}

/** The commands a vouch fixes, one per stage: what `bravebot vouch list` checks still hold. */
export function vouchedCommands(vouch: Vouch): readonly VouchedCommand[] {
  return vouch.match === "pipeline" ? vouch.stages : [vouch];
}

export class VouchStore {
  #memory: VouchFile;

  private constructor(
    private readonly path: string | null,
    private readonly workspace: string,
  ) {
    this.#memory = { version: 1, workspace, next: 1, vouches: [] };
  }

  /** A store that lives only as long as this object (tests, and nothing to save to). */
  static inMemory(workspace = ""): VouchStore {
    return new VouchStore(null, workspace);
  }

  /** The store of one workspace; a corrupt file is set aside and reported by the first read. */
  static at(path: string, workspace: string): VouchStore {
    return new VouchStore(path, workspace);
  }

  /** Problems met while reading the file (a corrupt file set aside), to show the person. */
  readonly problems: string[] = [];

  async #load(): Promise<VouchFile> {
    if (this.path === null) return this.#memory;
    return this.#usable(await loadJsonFile(this.path, fileSchema));
  }

  /** What a loaded file grants: nothing from a corrupt file or another workspace's (reported). */
  #usable(loaded: Loaded<VouchFile>): VouchFile {
    if (loaded.status === "ok") {
      if (loaded.value.workspace === this.workspace) return loaded.value;
      this.problems.push(
        `${this.path} belongs to ${loaded.value.workspace}, not ${this.workspace}; it was ignored`,
      );
    } else if (loaded.status === "corrupt") this.problems.push(loaded.problem);
    return { version: 1, workspace: this.workspace, next: 1, vouches: [] };
  }

  /**
   * Applies one change to the vouches as the file holds them now, under its lock, so a vouch
   * another process added meanwhile is kept and one it removed stays removed. `change` returns
   * the new contents (null: leave them) and its result.
   */
  async #update<R>(change: (file: VouchFile) => [VouchFile | null, R]): Promise<R> {
    if (this.path === null) {
      const [next, result] = change(this.#memory);
      if (next) this.#memory = next;
      return result;
    }
    let result!: R;
    await updateJsonFile(this.path, fileSchema, (loaded) => {
      const [next, r] = change(this.#usable(loaded));
      result = r;
      return next ?? undefined;
    });
    return result;
  }

  async list(): Promise<Vouch[]> {
    return [...(await this.#load()).vouches];
  }

  /** The vouch covering this stage, or a covering one that the program's change voided. */
  async lookup(stage: StageIdentity): Promise<VouchLookup> {
    let voided: Vouch | null = null;
    for (const vouch of (await this.#load()).vouches) {
      if (vouch.match === "pipeline" || !vouchCovers(vouch, stage)) continue;
      if (vouchHolds(vouch, stage)) return { status: "vouched", vouch };
      voided ??= vouch;
    }
    return voided ? { status: "void", vouch: voided } : { status: "none" };
  }

  /** The pipeline vouch naming exactly these stages, or one the change of a program voided. */
  async lookupPipeline(stages: readonly StageIdentity[]): Promise<VouchLookup> {
    let voided: Vouch | null = null;
    for (const vouch of (await this.#load()).vouches) {
      if (vouch.match !== "pipeline" || !pipelineCovers(vouch, stages)) continue;
      if (vouch.stages.every((v, i) => vouchHolds(v, stages[i]))) {
        return { status: "vouched", vouch };
      }
      voided ??= vouch;
    }
    return voided ? { status: "void", vouch: voided } : { status: "none" };
  }

  /** Records a vouch the person gave; an identical one already there is returned instead. */
  add(fields: NewVouch): Promise<Vouch> {
    return this.#update((file) => {
      const same = file.vouches.find((v) => sameVouch(v, fields));
      if (same) return [null, same];
      const vouch = toStored(fields, `v${file.next}`, new Date().toISOString());
      return [{ ...file, next: file.next + 1, vouches: [...file.vouches, vouch] }, vouch];
    });
  }

  /** Removes a vouch by id; null when there is none by that id. */
  remove(id: string): Promise<Vouch | null> {
    return this.#update((file) => {
      const found = file.vouches.find((v) => v.id === id);
      if (!found) return [null, null];
      return [{ ...file, vouches: file.vouches.filter((v) => v.id !== id) }, found];
    });
  }
}

/** A fresh copy of what the person vouched for, with its id: nothing shared with the caller. */
function toStored(fields: NewVouch, id: string, created: string): Vouch {
  const copy = (c: VouchedCommand): VouchedCommand => ({
    program: c.program,
    args: [...c.args],
    ...(c.sha256 ? { sha256: c.sha256 } : {}),
  });
  if (fields.match === "pipeline") {
    return { id, match: "pipeline", stages: fields.stages.map(copy), created };
  }
  return { id, match: fields.match, ...copy(fields), created };
}
