/**
 * Which paths hold private bytes (design.md §3): their content is labeled `priv` whatever
 * their integrity. The defaults cover the usual secrets; config adds more, never fewer.
 */
import { compileGlob, type Glob } from "../util/glob.ts";
import type { Confidentiality } from "./label.ts";

export const DEFAULT_PRIVATE_PATTERNS: readonly string[] = [
  ".env",
  ".env.*",
  "*.pem",
  "*.key",
  "id_rsa*",
  "id_ed25519*",
  ".npmrc",
  ".netrc",
  ".pypirc",
  "**/secrets/**",
  "**/credentials*",
];

export class PrivatePaths {
  readonly patterns: readonly string[];
  #globs: Glob[];

  constructor(extra: readonly string[] = []) {
    this.patterns = [...DEFAULT_PRIVATE_PATTERNS, ...extra];
    this.#globs = this.patterns.map(compileGlob);
  }

  /** `priv` when the workspace-relative path matches any pattern. */
  confidentialityOf(rel: string): Confidentiality {
    return this.#globs.some((g) => g.matches(rel)) ? "priv" : "pub";
  }
}
