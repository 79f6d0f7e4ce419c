/**
 * Vouched commands (design.md §8): the person's standing "run this without asking, and let the
 * planner see what it prints". Kept per workspace in the state directory (`vouches.json`),
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

export interface Vouch {
  /** Short and stable, for `bravebot vouch remove ID`: `v1`, `v2`, … */
  readonly id: string;
  /** The program's resolved absolute path. */
  readonly program: string;
  /** `exact`: these args and no others; `prefix`: args starting with these. */
  readonly match: "exact" | "prefix";
  readonly args: readonly string[];
  /** For a program inside the workspace: the SHA-256 the vouch is bound to. */
  readonly sha256?: string;
  readonly created: string;
}

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

const vouchSchema = z.strictObject({
  id: z.string().regex(/^v[1-9][0-9]*$/),
  program: z.string().min(1).refine((p) => p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p), {
    message: "not an absolute path",
  }),
  match: z.enum(["exact", "prefix"]),
  args: z.array(z.string()),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  created: z.string(),
});

const fileSchema = z.strictObject({
  version: z.literal(1),
  workspace: z.string(),
  next: z.number().int().min(1),
  vouches: z.array(vouchSchema),
});

type VouchFile = z.infer<typeof fileSchema>;

/** Whether the vouch covers this command: the same program, args exact or by prefix. */
export function vouchCovers(vouch: Vouch, stage: Omit<StageIdentity, "sha256">): boolean {
  if (vouch.program !== stage.resolved) return false;
  if (vouch.match === "exact") {
    return vouch.args.length === stage.args.length &&
      vouch.args.every((a, i) => a === stage.args[i]);
  }
  return vouch.args.length <= stage.args.length && vouch.args.every((a, i) => a === stage.args[i]);
}

/** A vouch is bound to what the program was: a workspace program must still hash the same. */
export function vouchHolds(vouch: Vouch, stage: StageIdentity): boolean {
  if (stage.sha256 === null) return vouch.sha256 === undefined;
  return vouch.sha256 === stage.sha256;
}

/** How a vouch reads on the person's screen and in `bravebot vouch list`, escaped. */
export function describeVouch(vouch: Vouch): string {
  const argv = formatArgv([vouch.program, ...vouch.args]);
  const shape = vouch.match === "exact" ? `exactly  ${argv}` : `prefix   ${argv} …`;
  const bound = vouch.sha256 ? ` (while its sha256 is ${vouch.sha256.slice(0, 12)}…)` : "";
  return `${vouch.id}  ${shape}${bound}`;
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
      if (!vouchCovers(vouch, stage)) continue;
      if (vouchHolds(vouch, stage)) return { status: "vouched", vouch };
      voided ??= vouch;
    }
    return voided ? { status: "void", vouch: voided } : { status: "none" };
  }

  /** Records a vouch the person gave; an identical one already there is returned instead. */
  add(fields: Omit<Vouch, "id" | "created">): Promise<Vouch> {
    return this.#update((file) => {
      const same = file.vouches.find((v) =>
        v.program === fields.program && v.match === fields.match && v.sha256 === fields.sha256 &&
        v.args.length === fields.args.length && v.args.every((a, i) => a === fields.args[i])
      );
      if (same) return [null, same];
      const vouch: Vouch = {
        id: `v${file.next}`,
        program: fields.program,
        match: fields.match,
        args: [...fields.args],
        ...(fields.sha256 ? { sha256: fields.sha256 } : {}),
        created: new Date().toISOString(),
      };
      return [{
        ...file,
        next: file.next + 1,
        vouches: [...file.vouches, { ...vouch, args: [...vouch.args] }],
      }, vouch];
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
