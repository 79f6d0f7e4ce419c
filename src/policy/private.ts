/**
 * Which paths hold private bytes (docs/contract.md §3.2): their content is labeled `priv` whatever
 * their integrity. The defaults cover the usual secrets; config adds more, never fewer.
 */
import { compileGlob, type Glob } from "../util/glob.ts";
import type { Confidentiality } from "../util/label.ts";

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

function fold(text: string): string {
  return text.normalize("NFC").toLowerCase();
}

export class PrivatePaths {
  readonly patterns: readonly string[];
  #globs: Glob[];

  constructor(extra: readonly string[] = []) {
    this.patterns = [...DEFAULT_PRIVATE_PATTERNS, ...extra];
    this.#globs = this.patterns.map((p) => compileGlob(fold(p)));
  }

  /**
   * `priv` when the workspace-relative path matches any pattern, ignoring case and Unicode
   * normalisation: `.ENV` and `Server.PEM` hold the same secrets, and erring towards `priv`
   * is the safe side.
   */
  confidentialityOf(rel: string): Confidentiality {
    const folded = fold(rel);
    return this.#globs.some((g) => g.matches(folded)) ? "priv" : "pub";
  }
}
