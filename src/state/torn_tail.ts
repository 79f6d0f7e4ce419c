/**
 * A JSON-lines file cut mid-line (a `kill -9` mid-write, a full disk) must not swallow the next
 * record: appending after a torn tail would glue the new line onto the broken one, and both
 * would be skipped on the next load. Before a resumed session appends, the tail is sealed with
 * a newline, so the torn line stays alone (and is reported), and everything after it counts.
 */

/** Ends the file with a newline if it does not already; true when it had to. */
export async function sealTornTail(path: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, append: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  try {
    const size = (await file.stat()).size;
    if (size === 0) return false;
    await file.seek(size - 1, Deno.SeekMode.Start);
    const last = new Uint8Array(1);
    await file.read(last);
    if (last[0] === 0x0a) return false;
    await file.write(new Uint8Array([0x0a]));
    return true;
  } finally {
    file.close();
  }
}
