/**
 * fast-check for the property tests, pinned here once. It is a test tool, not a dependency of
 * the product: it stays out of `deno.json`'s import map, so nothing in `src/` can import it by
 * its bare name, and test/dev_deps_test.ts checks that no module the product loads reaches it.
 * See docs/decisions.md ("Test and bench dependencies").
 */
export { default } from "npm:fast-check@4.11.0";
