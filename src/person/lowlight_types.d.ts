/**
 * The part of lowlight's API that markdown.ts uses, declared here instead of lowlight's own
 * types: those import highlight.js's, which add `/// <reference lib="dom" />` to every program
 * checked with them, and the DOM's stream types then refuse Deno's (`TextDecoderStream` in
 * src/model/reply.ts). Runtime behaviour is lowlight's; only the checker reads this file.
 */

/** A node of the tree lowlight returns (hast): the root, an element (a token) or text. */
export interface LowlightNode {
  type: string;
  value?: string;
  properties?: { className?: unknown };
  children?: LowlightNode[];
}

/** highlight.js's grammars, by name, as lowlight exports them. */
export type Grammars = Readonly<Record<string, unknown>>;

export interface Lowlight {
  /** Whether a name or alias is registered (case-insensitive, as highlight.js looks up). */
  registered(name: string): boolean;
  /** Throws for an unregistered language. Classes get `prefix` (default `hljs-`). */
  highlight(language: string, value: string, options?: { prefix?: string }): LowlightNode;
}

export declare const all: Grammars;
export declare function createLowlight(grammars?: Grammars): Lowlight;
