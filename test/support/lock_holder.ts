/** Holding a state file's lock in a test, for as long as the test says. */
import { withFileLock } from "../../src/state/jsonfile.ts";

/**
 * Takes `path`'s lock in this process and keeps it until `release()`; resolves once it holds
 * it. `done` settles when the lock is let go.
 */
export async function holdLock(
  path: string,
): Promise<{ release: () => void; done: Promise<void> }> {
  let release!: () => void;
  let holds!: () => void;
  const holding = new Promise<void>((resolve) => holds = resolve);
  const done = withFileLock(path, () => {
    holds();
    return new Promise<void>((resolve) => release = resolve);
  });
  await holding;
  return { release, done };
}
