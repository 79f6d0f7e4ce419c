/**
 * The effect worker: the only code that touches the disk or spawns programs for a tool. It runs
 * in a Deno Worker whose permissions the main thread narrowed to the workspace and the scratch
 * folder (see permissions.ts), so a policy bug that lets a bad path through is still stopped by
 * Deno. Deno checks the path as given, so every file operation also checks containment itself
 * (ops/wall.ts): what it opens resolves inside its roots, and is what was checked. Its roots are
 * its permissions; the one thing sent to it, first, is the folders inside them it must refuse all
 * the same (Brave Bot's state in a home-folder workspace, permissions.ts `hiddenOf`). It decides nothing: it acts on what it is handed
 * and reports errors by name (`OutsideWall` for a path the checks refuse).
 */
/// <reference lib="deno.worker" />
import type { OutputChunk, WorkerProgress, WorkerReply, WorkerRequest } from "./protocol.ts";
import {
  hash,
  hashedItems,
  makeDir,
  read,
  readDirs,
  readDirsPacked,
  readMany,
  readWithStat,
  remove,
  stat,
  write,
} from "./ops/fs.ts";
import { probe } from "./ops/probe.ts";
import { changeTimes, snapshotTree } from "./ops/snapshot.ts";
import { findInFiles } from "./ops/search.ts";
import { spawnPipeline, stopAllSpawns } from "./ops/spawn.ts";
import { setHidden, setRoots } from "./ops/wall.ts";
import type { Hidden } from "./permissions.ts";

// The roots are the permissions Deno enforces for this thread (ops/wall.ts). A worker started
// with read permission everywhere was not narrowed: it then has no roots and refuses every path.
if (Deno.permissions.querySync({ name: "read" }).state === "granted") setRoots([]);

async function handle(
  request: WorkerRequest,
  progress?: (chunk: OutputChunk) => void,
): Promise<{ value: unknown; transfer: Transferable[] }> {
  switch (request.op) {
    case "stat":
      return { value: stat(request.path, true), transfer: [] };
    case "lstat":
      return { value: stat(request.path, false), transfer: [] };
    case "read": {
      if ("withStat" in request) {
        const value = readWithStat(request.path, request.maxBytes);
        return { value, transfer: value.bytes ? [value.bytes.buffer as ArrayBuffer] : [] };
      }
      const value = read(request.path, request);
      return { value, transfer: [value.bytes.buffer as ArrayBuffer] };
    }
    case "readMany": {
      // The bytes move to the main thread rather than being copied (a search reads many MB).
      const read = readMany(request.paths, request.maxBytes, request.followLinks !== false);
      const items = request.hashOnly ? hashedItems(read) : read;
      const buffers = new Set<ArrayBuffer>();
      for (const item of items) if (item.bytes) buffers.add(item.bytes.buffer as ArrayBuffer);
      return { value: items, transfer: [...buffers] };
    }
    case "findInFiles": {
      const value = await findInFiles(request);
      return {
        value,
        transfer: [value.status.buffer as ArrayBuffer, value.lineNumbers.buffer as ArrayBuffer],
      };
    }
    case "readDirs":
      if (request.packed) return { value: readDirsPacked(request.paths), transfer: [] };
      return { value: await readDirs(request.paths), transfer: [] };
    case "hash": {
      const hashed = await hash(request.path);
      return { value: request.identify ? hashed : hashed.sha256, transfer: [] };
    }
    case "write":
      return {
        value: await write(
          request.path,
          request.bytes,
          request.expectSha256,
          request.makeParents,
          request.mode,
          request.within,
        ),
        transfer: [],
      };
    case "makeDir":
      return { value: makeDir(request.path, request.within), transfer: [] };
    case "remove":
      return {
        value: await remove(request.path, request.expectSha256, request.within),
        transfer: [],
      };
    case "spawn":
      return { value: await spawnPipeline(request.request, progress), transfer: [] };
    case "snapshot": {
      const value = snapshotTree(
        request.root,
        request.skip,
        {
          entries: request.maxEntries,
          changes: request.maxChanges ?? 0,
          marks: request.maxMarks ?? 1_000,
        },
        request.since,
        request.part,
      );
      return { value, transfer: [value.stats.buffer as ArrayBuffer] };
    }
    case "changeTimes":
      return { value: changeTimes(request.paths), transfer: [] };
    case "probe":
      return { value: await probe(request.what, request.target), transfer: [] };
    case "stopSpawns":
      return { value: { stopped: stopAllSpawns() }, transfer: [] };
    default: {
      const unknown = (request as { op?: unknown }).op;
      throw new TypeError(`unknown effect worker operation ${String(unknown)}`);
    }
  }
}

/**
 * One request, answered: the reply and the buffers that may move with it. The Worker entry below
 * and the kernel wall's child process (kernel_child.ts) both answer through this.
 */
export async function answer(
  id: number,
  request: WorkerRequest,
  progress?: (chunk: OutputChunk) => void,
): Promise<{ reply: WorkerReply; transfer: Transferable[] }> {
  let reply: WorkerReply;
  let transfer: Transferable[] = [];
  try {
    const handled = await handle(request, progress);
    reply = { id, ok: true, value: handled.value };
    transfer = handled.transfer;
  } catch (e) {
    const error = e instanceof Error ? e : new Error(String(e));
    const stage = (error as { stage?: unknown }).stage;
    reply = {
      id,
      ok: false,
      error: {
        name: error.name,
        message: error.message,
        ...(typeof stage === "number" ? { stage } : {}),
      },
    };
  }
  return { reply, transfer };
}

// Only as a Deno Worker: the child process imports this module for `answer` alone.
if ("WorkerGlobalScope" in globalThis) {
  self.onmessage = async (
    event: MessageEvent<{ id: number; request: WorkerRequest } | { hidden: Hidden }>,
  ) => {
    // The first message, from the thread that started this one: what its checks must refuse.
    if ("hidden" in event.data) return setHidden(event.data.hidden.hide, event.data.hidden.open);
    const id = event.data.id;
    const progress = (chunk: OutputChunk) =>
      self.postMessage({ id, progress: chunk } satisfies WorkerProgress, [
        chunk.bytes.buffer as ArrayBuffer,
      ]);
    const { reply, transfer } = await answer(id, event.data.request, progress);
    self.postMessage(reply, transfer);
  };
}
