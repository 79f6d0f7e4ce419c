/**
 * Tests that must hold for an ordinary user as well as for root. As root with its capabilities,
 * file permissions stop nothing (a folder made `0311` still lists), so an attack that needs
 * them can only be reproduced without: {@link alsoWithoutCapabilities} runs the same test again
 * in a child `deno test` as root with every capability dropped (`setpriv`), which file
 * permissions bind as they bind an ordinary user (and as they bind root in a stage run with
 * `--cap-drop ALL`). As an ordinary user the test simply runs here.
 */
import { runChildTest } from "./child_test.ts";

/** Set in the child, so that it runs the test itself instead of starting another child. */
const CHILD = "BRAVEBOT_TEST_WITHOUT_CAPABILITIES";

/** Whether this process reads a folder whose mode forbids it (root's CAP_DAC_OVERRIDE): tried. */
export function bypassesFilePermissions(): boolean {
  const dir = Deno.makeTempDirSync({ prefix: "bb-dac-" });
  try {
    Deno.chmodSync(dir, 0o311);
    try {
      [...Deno.readDirSync(dir)];
      return true;
    } catch {
      return false;
    }
  } finally {
    Deno.chmodSync(dir, 0o755);
    Deno.removeSync(dir);
  }
}

/**
 * Registers `name` twice: here, as whoever runs the tests, and — when that is root with its
 * capabilities — again in a child without any, where the child's run must pass at least one
 * test and fail none. In the child only the first registration runs.
 */
export function alsoWithoutCapabilities(
  module: string,
  name: string,
  fn: () => Promise<void>,
): void {
  Deno.test(name, fn);
  if (Deno.env.get(CHILD) === "1" || Deno.build.os !== "linux") return;
  Deno.test({
    name: `${name} (root without capabilities)`,
    ignore: !bypassesFilePermissions(),
    fn: () =>
      runChildTest(module, name, {
        env: { [CHILD]: "1" },
        wrapper: ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"],
      }),
  });
}
