/**
 * The two-part label every value carries (docs/contract.md §3.1).
 *
 * Integrity says whether the bytes may steer the agent; confidentiality says whether they may
 * leave the machine. Joins only ever move towards `U` and `priv`, so a label can never be
 * "washed" by combining values.
 *
 * @example
 * ```ts
 * joinLabels(TRUSTED_PUBLIC, UNTRUSTED_PRIVATE); // { integrity: "U", confidentiality: "priv" }
 * formatLabel(TRUSTED_PRIVATE); // "(T,priv)"
 * ```
 */

export type Integrity = "T" | "U";
export type Confidentiality = "pub" | "priv";

export interface Label {
  readonly integrity: Integrity;
  readonly confidentiality: Confidentiality;
}

export const TRUSTED_PUBLIC: Label = Object.freeze({ integrity: "T", confidentiality: "pub" });
export const TRUSTED_PRIVATE: Label = Object.freeze({ integrity: "T", confidentiality: "priv" });
export const UNTRUSTED_PUBLIC: Label = Object.freeze({ integrity: "U", confidentiality: "pub" });
export const UNTRUSTED_PRIVATE: Label = Object.freeze({
  integrity: "U",
  confidentiality: "priv",
});

/** Makes a label from its parts; the frozen constants are reused so labels compare cheaply. */
export function label(integrity: Integrity, confidentiality: Confidentiality): Label {
  if (integrity === "T") return confidentiality === "pub" ? TRUSTED_PUBLIC : TRUSTED_PRIVATE;
  return confidentiality === "pub" ? UNTRUSTED_PUBLIC : UNTRUSTED_PRIVATE;
}

/** The least label above all the given ones: `U` wins over `T`, `priv` over `pub`. */
export function joinLabels(...labels: readonly Label[]): Label {
  let integrity: Integrity = "T";
  let confidentiality: Confidentiality = "pub";
  for (const l of labels) {
    if (l.integrity === "U") integrity = "U";
    if (l.confidentiality === "priv") confidentiality = "priv";
  }
  return label(integrity, confidentiality);
}

export function isTrusted(l: Label): boolean {
  return l.integrity === "T";
}

export function isPrivate(l: Label): boolean {
  return l.confidentiality === "priv";
}

/** `(T,pub)` — the notation of docs/contract.md §3.1: on screens, in the audit log, in results. */
export function formatLabel(l: Label): string {
  return `(${l.integrity},${l.confidentiality})`;
}

/** Reads `(T,pub)` back; anything else is `undefined`, never a guess. */
export function parseLabel(text: string): Label | undefined {
  const m = /^\((T|U),(pub|priv)\)$/.exec(text.trim());
  if (!m) return undefined;
  return label(m[1] as Integrity, m[2] as Confidentiality);
}

export function sameLabel(a: Label, b: Label): boolean {
  return a.integrity === b.integrity && a.confidentiality === b.confidentiality;
}
