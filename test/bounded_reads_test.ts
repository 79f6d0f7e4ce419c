/**
 * Hostile sizes (issue "Walls I", part 3): a reference or file that turns into bytes is refused
 * from a stat before it is read, and the effect worker's read is capped at the limit + 1 bytes,
 * so a file that grows between the stat and the read is refused too, never read whole. The big
 * files are sparse (Deno.truncate): they cost no disk. Asserted through the worker's requests
 * and the sizes of its replies, not through memory.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Fixture, withPolicy } from "./support/policy_fixture.ts";
import { spawnProcessorTool } from "../src/tools/spawn_processor.ts";
import { writeFileTool } from "../src/tools/write_file.ts";
import { READ_FILE_MAX_BYTES, readFileTool } from "../src/tools/read_file.ts";
import type { ProcessorPort, ToolDef } from "../src/tools/tool.ts";
import { UNTRUSTED_PUBLIC } from "../src/util/label.ts";
import { MAX_WRITE_BYTES } from "../src/policy/writes.ts";
import type { ReadBytes, WorkerRequest } from "../src/worker/protocol.ts";

const BIG = 256 * 1024 * 1024;
const files = { "vendor/big.txt": "small for now\n", "vendor/dest.txt": "old\n" };
const trust = { vendor: false };

/** A processor that must never be reached: the inputs are refused first. */
const processor: ProcessorPort = {
  complete: () => Promise.reject(new Error("the processor was called")),
};

async function makeBig(fx: Fixture) {
  await Deno.truncate(join(fx.root, "vendor/big.txt"), BIG);
}

/** The whole-file reads the worker was asked for, and how many bytes each reply held. */
function watchReads(fx: Fixture, beforeRead?: () => Promise<void>) {
  const reads: { request: WorkerRequest; bytes: number }[] = [];
  const worker = fx.policy.worker;
  const call = worker.call.bind(worker);
  worker.call = (async (request: WorkerRequest) => {
    const whole = request.op === "read" && "maxBytes" in request && !("withStat" in request);
    if (whole && beforeRead) {
      const hook = beforeRead;
      beforeRead = undefined;
      await hook();
    }
    const reply = await call(request);
    if (whole && reply.ok) reads.push({ request, bytes: (reply.value as ReadBytes).bytes.length });
    return reply;
  }) as typeof worker.call;
  return reads;
}

function quarantine(fx: Fixture) {
  return fx.policy.refs.add({
    kind: "file",
    label: UNTRUSTED_PUBLIC,
    path: "vendor/big.txt",
    tool: "read_file",
  });
}

function spawn(fx: Fixture) {
  const args = spawnProcessorTool.schema.parse({ reads: ["ref:0"], instruction: "summarise" });
  return (spawnProcessorTool as ToolDef<unknown>).handler(args, { ...fx.ctx, processor });
}

function bigReads(fx: Fixture) {
  return fx.workerCalls.filter((c) => c.op === "read" && c.path.endsWith("big.txt"));
}

Deno.test("spawn_processor: a 256 MiB untrusted file is refused from its stat, never read", async () => {
  await withPolicy({ files, trust }, async (fx) => {
    await makeBig(fx);
    await quarantine(fx);
    const out = await spawn(fx);
    assert.equal(out.isError, true);
    assert.match(out.content, /^error: ref:0 is 268435456 bytes, more than the \d+ accepted here/);
    assert.ok(!out.content.includes("big.txt"), "the hidden name is not quoted");
    assert.deepEqual(bigReads(fx), [], "no read of the file was even asked for");
  });
});

Deno.test("write_file contents_ref: a 256 MiB untrusted file is refused from its stat, never read", async () => {
  await withPolicy({ files, trust }, async (fx) => {
    await makeBig(fx);
    await quarantine(fx);
    const out = await fx.call(writeFileTool, { path: "vendor/dest.txt", contents_ref: "ref:0" });
    assert.equal(out.isError, true);
    assert.match(
      out.content,
      new RegExp(`ref:0 is ${BIG} bytes, more than the ${MAX_WRITE_BYTES}`),
    );
    assert.deepEqual(bigReads(fx), []);
    assert.equal(await fx.read("vendor/dest.txt"), "old\n");
  });
});

Deno.test("spawn_processor: a file that grows after its stat is read no further than the limit + 1", async () => {
  await withPolicy({ files, trust }, async (fx) => {
    await quarantine(fx);
    const reads = watchReads(fx, () => makeBig(fx));
    const out = await spawn(fx);
    assert.equal(out.isError, true);
    assert.match(out.content, /^error: ref:0 grew past \d+ bytes while it was being read/);
    assert.equal(reads.length, 1);
    const limit = (reads[0].request as { maxBytes: number }).maxBytes;
    assert.ok(limit < BIG);
    assert.equal(reads[0].bytes, limit + 1, "one byte past the limit, and no more");
  });
});

Deno.test("write_file contents_ref: a file that grows after its stat is refused at the limit + 1", async () => {
  await withPolicy({ files, trust }, async (fx) => {
    await quarantine(fx);
    const reads = watchReads(fx, () => makeBig(fx));
    const out = await fx.call(writeFileTool, { path: "vendor/dest.txt", contents_ref: "ref:0" });
    assert.equal(out.isError, true);
    assert.match(out.content, /^error: ref:0 grew past \d+ bytes/);
    assert.deepEqual(reads.map((r) => r.bytes), [MAX_WRITE_BYTES + 1]);
    assert.equal(await fx.read("vendor/dest.txt"), "old\n");
  });
});

Deno.test("read_file: a quarantined file that grows while the person decides is not read whole", async () => {
  await withPolicy({ files, trust, answers: [{ read: "untrusted" }] }, async (fx) => {
    const reads = watchReads(fx, () => makeBig(fx));
    const out = await fx.call(readFileTool, { path: "vendor/big.txt" });
    assert.equal(out.isError, true);
    assert.match(out.content, /^error: vendor\/big\.txt grew past \d+ bytes/);
    assert.deepEqual(reads.map((r) => r.bytes), [READ_FILE_MAX_BYTES + 1]);
  });
});

Deno.test("write_file: a 256 MiB file it would replace is refused from its stat, not read", async () => {
  await withPolicy({ files, trust: { ".": true }, answers: [] }, async (fx) => {
    await makeBig(fx);
    const out = await fx.call(writeFileTool, { path: "vendor/big.txt", contents: "new\n" });
    assert.equal(out.isError, true);
    assert.match(out.content, /vendor\/big\.txt is 268435456 bytes, more than the \d+ accepted/);
    assert.deepEqual(bigReads(fx), []);
  });
});
