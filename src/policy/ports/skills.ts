/**
 * What skill discovery (`src/skills/`) may ask of the policy layer: exactly the workspace reads
 * that finding skills and AGENTS.md needs, each deciding trust itself. Discovery imports only
 * this file's types and is handed the port, never the `Policy`, the effect worker or the trust
 * map, so it cannot list or read a workspace file any other way.
 */
import type { FileLabels, WorkspaceFiles } from "../capabilities.ts";
import { type ResolvedPath, resolvePath } from "../paths.ts";
import {
  type FolderListing,
  listTrustedFolder,
  readTrustedHead,
  readWorkspaceSkill,
  type TrustedHead,
  userSkillLabel,
} from "../skills.ts";
import type { Label } from "../../util/label.ts";
import type { Result } from "../../util/result.ts";

export type { FolderListing, ResolvedPath, TrustedHead };

export interface SkillsPort {
  /** The workspace root (absolute): where a workspace skill's folder is shown from. */
  readonly workspaceRoot: string;
  /** A workspace-relative path at its real place, or why it is not a usable workspace path. */
  resolve(rel: string): Promise<Result<ResolvedPath>>;
  /** A resolved workspace folder's names, given only when a person trusted the folder. */
  listTrustedFolder(dir: ResolvedPath): Promise<FolderListing>;
  /** A workspace SKILL.md as text with its label, refused unless the file is trusted. */
  readWorkspaceSkill(file: ResolvedPath): Promise<Result<{ text: string; label: Label }>>;
  /** At most `length` bytes of a trusted workspace file (AGENTS.md), with its label. */
  readTrustedHead(file: ResolvedPath, length: number): Promise<TrustedHead>;
  /** The label a user skill (one in the person's config folder) is listed and loaded at. */
  userSkillLabel(): Label;
}

export function skillsPort(policy: FileLabels & WorkspaceFiles): SkillsPort {
  return {
    get workspaceRoot() {
      return policy.workspace.root;
    },
    resolve: (rel) => resolvePath(policy.workspace, rel),
    listTrustedFolder: (dir) => listTrustedFolder(policy, dir),
    readWorkspaceSkill: (file) => readWorkspaceSkill(policy, file),
    readTrustedHead: (file, length) => readTrustedHead(policy, file, length),
    userSkillLabel: () => userSkillLabel(),
  };
}
