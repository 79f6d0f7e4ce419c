/**
 * The folder a `write`, `remove` or `makeDir` request acts in, for tests that ask the effect
 * worker directly, found as the policy layer finds it (policy/paths.ts `resolveInPlace`): the
 * path itself when it is a folder, else its folder; the deepest of those that exists; by real
 * path and identity, as it is now. Unlike the policy layer it has no workspace to stay in and
 * follows links, so that a test of the worker's own containment (a path outside its roots, in
 * hidden state, through a link) still reaches the worker and sees the worker refuse it.
 */
import { dirname } from "node:path";
import type { ResolvedFolder } from "../../src/worker/protocol.ts";

export async function folderOf(path: string): Promise<ResolvedFolder> {
  let at = path;
  try {
    if (!(await Deno.stat(path)).isDirectory) at = dirname(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  for (;;) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(at);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) || dirname(at) === at) throw e;
      at = dirname(at);
      continue;
    }
    if (!info.isDirectory) throw new Deno.errors.NotADirectory(`${at} is not a folder`);
    return { real: await Deno.realPath(at), dev: info.dev, ino: info.ino };
  }
}
