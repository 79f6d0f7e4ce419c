/**
 * Nothing a workspace's content does may stall the effect worker: a regular file swapped for a
 * FIFO between the worker's check of the path and its open must not leave the open waiting for
 * a writer (docs/decisions.md, "A checked file is opened without waiting"). Every request that
 * opens a file it was handed is tried, on both walls, against a process that keeps swapping the
 * file and a FIFO (test/support/fifo_swapper.ts); a call stuck in its open is freed and counted.
 * After the race the file reads as before: the rule refuses a swapped file, not every file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EffectWorker, kernelWallStatus, type Wall } from "./client.ts";
import { createHash } from "node:crypto";
import type { WorkerRequest } from "./protocol.ts";
import { FIND, type FindInFilesResult } from "./search_protocol.ts";
import { folderOf } from "../../test/support/resolved_folder.ts";
import { mkfifo, settleOrRelease, startFifoSwapper } from "../../test/support/fifo_swapper.ts";

const walls: Wall[] = kernelWallStatus().usable ? ["process", "kernel"] : ["process"];

/**
 * How many calls race the swapper at most (it ends on its own after 2.5 s), how many are in
 * flight at once, and how many times a request of many paths names the file.
 */
const CALLS = 5000;
const IN_FLIGHT = 8;
const COPIES = 32;
const BYTES = "hello, regular file\n";
const HASH = createHash("sha256").update(BYTES).digest("hex");
const NOT_ITS_HASH = "0".repeat(64);

interface Box {
  ws: string;
  file: string;
  fifo: string;
}

async function withWorker(wall: Wall, fn: (worker: EffectWorker, box: Box) => Promise<void>) {
  const real = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const ws = await real("bb-fifo-ws-");
  const scratch = await real("bb-fifo-scratch-");
  const box = { ws, file: join(ws, "f.txt"), fifo: join(ws, "side", "pipe") };
  await Deno.writeTextFile(box.file, BYTES);
  await Deno.mkdir(join(ws, "side"));
  await mkfifo(box.fifo);
  const worker = EffectWorker.start({ workspace: ws, scratch, run: false }, 1, wall);
  try {
    assert.equal(worker.wall, wall);
    await fn(worker, box);
  } finally {
    await worker.terminate();
    for (const d of [ws, scratch]) await Deno.remove(d, { recursive: true });
  }
}

const copies = (path: string) => Array.from({ length: COPIES }, () => path);

/** The requests that open the file (a request of many paths names it many times). */
const requests: {
  name: string;
  make: (box: Box) => Promise<WorkerRequest>;
}[] = [
  {
    name: "read (whole, capped)",
    make: (b) => Promise.resolve({ op: "read", path: b.file, maxBytes: 100 }),
  },
  {
    name: "read (a range)",
    make: (b) => Promise.resolve({ op: "read", path: b.file, length: 100 }),
  },
  {
    name: "read (with its stat)",
    make: (b) => Promise.resolve({ op: "read", path: b.file, withStat: true, maxBytes: 100 }),
  },
  {
    name: "readMany",
    make: (b) => Promise.resolve({ op: "readMany", paths: copies(b.file), maxBytes: 100 }),
  },
  {
    // What /undo keeps before a run (policy/run_keep.ts), and past its budget, by hash.
    name: "readMany (the keep's, links not followed, by hash)",
    make: (b) =>
      Promise.resolve({
        op: "readMany",
        paths: copies(b.file),
        maxBytes: 100,
        followLinks: false,
        hashOnly: true,
      }),
  },
  {
    name: "findInFiles",
    make: (b) =>
      Promise.resolve({
        op: "findInFiles",
        paths: copies(b.file),
        needle: new TextEncoder().encode("regular"),
        maxBytes: 100,
        maxLines: COPIES,
        lineChars: 100,
        hashWanted: new Uint8Array(COPIES).fill(1),
      }),
  },
  // A run's hot files (policy/run_changes.ts `fingerprintFiles`), /undo's current hash.
  { name: "hash", make: (b) => Promise.resolve({ op: "hash", path: b.file, identify: true }) },
  {
    // The file written over is hashed first: a hash it does not have stops the write there.
    name: "write (over the file)",
    make: async (b) => ({
      op: "write",
      path: b.file,
      bytes: new TextEncoder().encode("new"),
      expectSha256: NOT_ITS_HASH,
      makeParents: false,
      within: await folderOf(b.ws),
    }),
  },
  {
    name: "remove",
    make: async (b) => ({
      op: "remove",
      path: b.file,
      expectSha256: NOT_ITS_HASH,
      within: await folderOf(b.ws),
    }),
  },
];

/** Of many answers, the worst: something else's bytes, else a refusal, else the file's. */
function worst(each: Answer[]): Answer {
  return each.includes("other") ? "other" : each.includes("refused") ? "refused" : "file";
}

type Answer = "file" | "refused" | "other";

/**
 * What a request answered: the file's bytes (or hash, or lines; for a write or a removal, the
 * refusal its wrong hash earns), a refusal, or something else's bytes (a FIFO read as the file).
 */
function answerOf(
  request: WorkerRequest,
  result: Awaited<ReturnType<EffectWorker["call"]>>,
): Answer {
  if (request.op === "write" || request.op === "remove") {
    if (result.ok) return "other";
    return result.error.name === "Changed" ? "file" : "refused";
  }
  if (!result.ok) return "refused";
  const value = result.value as Record<string, unknown>;
  const bytesOf = (bytes: unknown): Answer =>
    bytes instanceof Uint8Array && new TextDecoder().decode(bytes) === BYTES ? "file" : "other";
  switch (request.op) {
    case "hash":
      return value.sha256 === HASH ? "file" : "other";
    case "readMany": {
      const items = result.value as { bytes?: Uint8Array; sha256?: string; skipped?: string }[];
      return worst(
        items.map((item) =>
          item.skipped !== undefined
            ? "refused"
            : item.sha256 !== undefined
            ? (item.sha256 === HASH ? "file" : "other")
            : bytesOf(item.bytes)
        ),
      );
    }
    case "findInFiles": {
      const found = result.value as FindInFilesResult;
      const lines = found.texts === "" ? [] : found.texts.split("\n");
      if (lines.some((line) => line !== BYTES.trimEnd())) return "other";
      return worst([...found.status].map((status, i): Answer => {
        if (status === FIND.unreadable) return "refused";
        const match = found.found.find((f) => f.index === i);
        return status === FIND.matched && match?.sha256 === HASH && match.lines === 1
          ? "file"
          : "other";
      }));
    }
    case "read":
      if ("withStat" in request && value.bytes === null) {
        return (value.stat as { kind: string }).kind === "file" ? "other" : "refused";
      }
      return bytesOf(value.bytes);
  }
  return "other";
}

for (const wall of walls) {
  for (const { name, make } of requests) {
    Deno.test(`fifo race (${wall}): ${name} of a file another process keeps swapping for a FIFO never waits in its open`, async () => {
      await withWorker(wall, async (worker, box) => {
        const request = await make(box);
        // The file in place first: the request is one that opens it.
        assert.equal(answerOf(request, await worker.call(request)), "file", "before the race");
        const swapper = await startFifoSwapper(box.file, box.fifo);
        let hung = 0;
        try {
          for (let i = 0; i < CALLS && hung === 0 && swapper.running; i += IN_FLIGHT) {
            const calls = Array.from({ length: IN_FLIGHT }, () => worker.call(request));
            for (const call of calls) {
              const { value, hung: stuck } = await settleOrRelease(call, box.fifo);
              if (stuck) hung++;
              // A FIFO is never read as the file: an answer is the file's, or a refusal.
              if (answerOf(request, value) === "other") {
                assert.fail(`call ${i} answered for something else: ${JSON.stringify(value)}`);
              }
            }
          }
        } finally {
          await swapper.stop();
        }
        assert.equal(hung, 0, "a call waited in the open of the FIFO swapped in after its check");
        assert.equal(answerOf(request, await worker.call(request)), "file", "after the race");
      });
    });
  }
}
